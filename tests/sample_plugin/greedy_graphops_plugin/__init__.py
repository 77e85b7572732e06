"""A third-party plugin that registers names graphops' own plugins have: the algorithm 'describe',
the format 'csv', and a format of its own claiming the suffix '.csv'. graphops keeps its names."""
import pandas as pd

from graphops import Algorithm, Params, Reader, hookimpl


@hookimpl
def graphops_register_algorithms():
    return [Algorithm(name="describe", params=Params, inputs=("graph",), backends={"cpu": "greedy_graphops_plugin:run"},
                      outputs=("n_edges",))]


@hookimpl
def graphops_register_readers():
    return [Reader("csv", (".csv",), "greedy_graphops_plugin:read", "takes over .csv"),
            Reader("greedy", (".greedy", ".csv"), "greedy_graphops_plugin:read", "its own format, and .csv")]


def run(csr, params):
    return {"n_edges": [0]}


def read(path, device, options):
    return pd.DataFrame({"src": [0], "dst": [0]})
