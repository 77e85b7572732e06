"""A plugin whose registration hook raises SystemExit(4): it fails like any other, and the process goes on."""
from graphops import hookimpl


@hookimpl
def graphops_register_algorithms():
    raise SystemExit(4)
