"""graphops plugin ``jaccard``: Jaccard similarity of edges or given vertex pairs, cuGraph's semantics."""
from __future__ import annotations

from graphops import Algorithm, Backend, Input, hookimpl

from .params import OUTPUTS, JaccardParams

__all__ = ["graphops_register_algorithms"]


@hookimpl
def graphops_register_algorithms() -> list[Algorithm]:
    return [Algorithm(
        name="jaccard",
        params=JaccardParams,
        inputs=(Input("graph", kinds=("graph",)), Input("pairs", kinds=("graph",), required=False)),
        backends={
            "cpu": "graphops_jaccard.cpu:run",
            "gpu": "graphops_jaccard.gpu:run",
            "hybrid": "graphops_jaccard.hybrid:run",
            "cugraph": Backend(target="graphops_jaccard.peer:run_cugraph", device="gpu",
                               requires=("cupy", "cudf", "cugraph"), peer=True,
                               prepare="graphops_jaccard.peer:to_cugraph"),
            "networkx": Backend(target="graphops_jaccard.peer:run_networkx", device="cpu",
                                requires=("networkx",), peer=True,
                                prepare="graphops_jaccard.peer:to_networkx"),
        },
        outputs=OUTPUTS,
        summary="Jaccard coefficient of every edge or of given vertex pairs (cuGraph's semantics)",
        version_added="0.1",
        cost="graphops_jaccard.params:cost",
    )]
