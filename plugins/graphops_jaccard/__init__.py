"""graphops plugin ``jaccard``: Jaccard similarity of edges, given vertex pairs or two-hop pairs
(cuGraph's semantics), and the rest of the family on the same intersection engine: ``sorensen``,
``overlap``, ``cosine`` (cuGraph's), ``adamic_adar`` and ``resource_allocation`` (networkx's)."""
from __future__ import annotations

from graphops.plugin import Algorithm, Backend, Command, Input, bounded, hookimpl

from .common import MEASURES
from .params import (OUTPUTS, AdamicAdarParams, CosineParams, JaccardParams, OverlapParams, ResourceAllocationParams,
                     SorensenParams)

# the family's other members: params, and the summary's name of what is scored
_FAMILY = {"sorensen": SorensenParams, "overlap": OverlapParams, "cosine": CosineParams,
           "adamic_adar": AdamicAdarParams, "resource_allocation": ResourceAllocationParams}

__all__ = ["graphops_register_algorithms", "graphops_register_commands"]


@hookimpl
def graphops_register_algorithms() -> list[Algorithm]:
    return [Algorithm(
        name="jaccard",
        params=JaccardParams,
        inputs=(Input("graph", kinds=("graph", "daskgraph")),
                Input("pairs", kinds=("pairs",), required=False, default="edges")),
        backends={
            "cpu": "graphops_jaccard.cpu:run",
            "gpu": "graphops_jaccard.gpu:run",
            "hybrid": "graphops_jaccard.hybrid:run",
            "cugraph": Backend(target="graphops_jaccard.peer:run_cugraph", device="gpu",
                               requires=("cupy", "cudf", "cugraph"), peer=True,
                               prepare="graphops_jaccard.peer:to_cugraph"),
            "cugraph_dask": Backend(target="graphops_jaccard.peer:run_cugraph_dask", device="gpu",
                                    requires=("cupy", "cudf", "cugraph", "dask_cudf", "distributed"), peer=True,
                                    cluster=True, prepare="graphops_jaccard.peer:to_cugraph_dask"),
            "networkx": Backend(target="graphops_jaccard.peer:run_networkx", device="cpu",
                                requires=("networkx",), peer=True,
                                prepare="graphops_jaccard.peer:to_networkx"),
        },
        outputs=OUTPUTS,
        plot="graphops_jaccard.common:picture",
        vertex_columns=("first", "second"),
        summary="Jaccard coefficient of every edge or of given vertex pairs (cuGraph's semantics)",
        version_added="0.1",
        cost="graphops_jaccard.params:cost",
        split="graphops_jaccard.dist:split",
    )] + [_family_member(name, params) for name, params in _FAMILY.items()]


_CUGRAPH = ("sorensen", "overlap", "cosine")  # the members cuGraph has (jaccard's peers are above)


def _family_member(name: str, params: type) -> Algorithm:
    """A measure on the family's engine (graphops_jaccard.measures): given pairs, every edge, or the
    two-hop pairs (top k of them when asked), on the backends jaccard has."""
    measure = MEASURES[name]
    backends: dict = {  # one function each: the measure is the params' (params.measure)
        "cpu": "graphops_jaccard.cpu:run_measure",
        "gpu": "graphops_jaccard.gpu:run_measure",
        "hybrid": "graphops_jaccard.hybrid:run_measure",
    }
    if name in _CUGRAPH:
        backends["cugraph"] = Backend(target="graphops_jaccard.peer:run_cugraph", device="gpu",
                                      requires=("cupy", "cudf", "cugraph"), peer=True,
                                      prepare="graphops_jaccard.peer:to_cugraph")
    else:
        backends["networkx"] = Backend(target="graphops_jaccard.peer:run_networkx", device="cpu",
                                       requires=("networkx",), peer=True, prepare="graphops_jaccard.peer:to_networkx")
    return Algorithm(
        name=name,
        params=params,
        # a Dask edge frame's column slices add up shared counts: the set measures take one
        inputs=(Input("graph", kinds=("graph", "daskgraph") if measure.aux is None else ("graph",)),
                Input("pairs", kinds=("pairs",), required=False, default="edges")),
        backends=backends,
        outputs=("first", "second", measure.column),
        vertex_columns=("first", "second"),
        summary=f"{measure.summary} of every edge, of given vertex pairs or of two-hop pairs",
        version_added="0.4",
        cost="graphops_jaccard.params:cost",
        split="graphops_jaccard.dist:split",
    )


def _sweep_arguments(parser) -> None:
    parser.add_argument("config", nargs="?", help="a pipeline file whose graphs: section names the graphs")
    parser.add_argument("--graphs", help="comma-separated graph names (default: all of the file's)")
    parser.add_argument("--out", default=".", help="folder for jaccard_sweep.json / .png")
    parser.add_argument("--repeat", type=bounded("--repeat", int, ge=1, le=1000), default=3, help="timed runs per point (the median is kept)")
    parser.add_argument("--backend", choices=("hybrid", "cpu", "gpu"), default="hybrid",
                        help="hybrid (default): sweep its CPU share, with the GPU-only time beside it (needs a GPU); "
                             "cpu or gpu: time that backend alone on each graph")
    parser.add_argument("--plot", metavar="JSON", help="only draw the PNG from an earlier sweep's JSON")


@hookimpl
def graphops_register_commands() -> list[Command]:
    return [Command(name="jaccard-sweep", summary="time the hybrid backend against its CPU share and plot it",
                    target="graphops_jaccard.cli:main", arguments=_sweep_arguments)]
