"""graphops plugin ``describe``: size, self-loops, multi-edges, degree statistics, components."""
from __future__ import annotations

from graphops.plugin import Algorithm, Backend, Input, hookimpl

from .params import OUTPUTS, DescribeParams

__all__ = ["graphops_register_algorithms", "graphops_choose_backend"]

# Below this many edges the GPU backend's fixed cost (~2.5 ms of launches and copies on an
# H100) exceeds the whole CPU run (1.6 ms for 88k edges, 4.8 ms for 184k; see the README).
GPU_MIN_EDGES = 120_000


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
        plot="graphops_describe.common:picture",
        optional_outputs=("graph",),  # one row per graph of a GraphSet
        summary="Vertex/edge counts, self-loops, multi-edges, degree min/mean/max/Gini, components",
        version_added="0.1",
        cost="graphops_describe.params:cost",
    )]


@hookimpl
def graphops_choose_backend(algorithm, inputs, offered):
    """For ``auto``: small graphs run faster on the CPU backend than on the GPU."""
    if algorithm.name != "describe" or not {"cpu", "gpu"} <= set(offered):
        return None  # nothing to choose between; the default rule explains itself
    edges = sum(g.n_edges for g in inputs.values())
    return "cpu" if edges < GPU_MIN_EDGES else None
