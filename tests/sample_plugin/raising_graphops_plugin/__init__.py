"""A plugin whose hooks raise when called."""
from graphops import hookimpl


@hookimpl
def graphops_register_algorithms():
    raise RuntimeError("cannot reach the licence server")
