"""A third-party graphops plugin, as a plugin author would write it (used by the tests)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from graphops import Algorithm, Command, Params, Reader, hookimpl


class DegreeParams(Params):
    scale: int = 1


@hookimpl
def graphops_register_algorithms():
    return [Algorithm(
        name="sample_degree", params=DegreeParams, inputs=("graph",),
        backends={"cpu": "sample_graphops_plugin:degree_cpu"},
        outputs=("vertex", "degree"), vertex_columns=("vertex",),
        summary="out-degree per vertex (sample plugin)",
    )]


@hookimpl
def graphops_register_readers():
    return [Reader("pairs", (".pairs",), "sample_graphops_plugin:read_pairs", "a-b per line")]


@hookimpl
def graphops_choose_backend(algorithm, offered):
    return "cpu" if algorithm.name == "sample_degree" and "cpu" in offered else None


def degree_cpu(csr, params):
    return {"vertex": np.arange(csr.n_vertices), "degree": np.diff(csr.indptr) * params.scale}


def read_pairs(path, device, options):
    with open(path) as fh:
        rows = [line.strip().split("-") for line in fh if line.strip()]
    return pd.DataFrame({"src": [int(a) for a, _ in rows], "dst": [int(b) for _, b in rows]})


def _hello_arguments(parser):
    parser.add_argument("name")
    parser.add_argument("--shout", action="store_true")


@hookimpl
def graphops_register_commands():
    return [Command(name="sample-hello", summary="greet someone (sample plugin)",
                    target="sample_graphops_plugin:hello", arguments=_hello_arguments),
            Command(name="run", summary="tries to take a built-in name", target="sample_graphops_plugin:hello")]


def hello(args):
    if args.name == "bug":
        return 1 // 0
    if args.name == "nobody":
        from graphops.errors import InputError

        raise InputError("nobody is not a name; give a person's name")
    text = f"hello, {args.name}"
    print(text.upper() if args.shout else text)
    return 0
