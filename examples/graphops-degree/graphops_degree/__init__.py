"""graphops plugin ``degree``: the degree of every vertex. Imports nothing heavy: backends are
``"module:function"`` strings, loaded only when chosen."""
from __future__ import annotations

from graphops.plugin import Algorithm, Command, bounded, hookimpl

from .params import DegreeParams


@hookimpl
def graphops_register_algorithms():
    return [Algorithm(
        name="degree", params=DegreeParams, inputs=("graph",),
        backends={"cpu": "graphops_degree.cpu:run", "gpu": "graphops_degree.gpu:run"},
        outputs=("vertex", "degree"), vertex_columns=("vertex",),
        summary="degree (or weighted degree) of every vertex")]


def _top_arguments(parser):
    parser.add_argument("file", help="an edge list (.csv, .tsv, .txt, .parquet, ...)")
    parser.add_argument("-k", type=bounded("-k", int, ge=1, le=1_000_000), default=5, help="how many vertices to show")


@hookimpl
def graphops_register_commands():
    return [Command(name="degree-top", summary="the k vertices of highest degree in an edge list",
                    target="graphops_degree.cli:top", arguments=_top_arguments)]
