"""graphops plugin ``describe``: size, self-loops, multi-edges, degree statistics, components."""
from __future__ import annotations

from graphops import Algorithm, Backend, Input, hookimpl

from .params import OUTPUTS, DescribeParams

__all__ = ["graphops_register_algorithms"]


@hookimpl
def graphops_register_algorithms() -> list[Algorithm]:
    return [Algorithm(
        name="describe",
        params=DescribeParams,
        inputs=(Input("graph", kinds=("graph", "graphset")),),
        backends={
            "cpu": "graphops_describe.cpu:run",
            "gpu": "graphops_describe.gpu:run",
            "networkx": Backend(target="graphops_describe.peer:run_networkx", device="cpu",
                                requires=("networkx",), peer=True,
                                prepare="graphops_describe.peer:to_networkx"),
        },
        outputs=OUTPUTS,
        summary="Vertex/edge counts, self-loops, multi-edges, degree min/mean/max/Gini, components",
        version_added="0.1",
        cost="graphops_describe.params:cost",
    )]
