"""graphops plugin ``sp_kernel``: the shortest-path graph kernel (histogram and FCSP paths)."""
from __future__ import annotations

from graphops.plugin import Algorithm, Backend, Gram, Input, hookimpl

from .params import SPKernelParams

__all__ = ["graphops_register_algorithms"]


@hookimpl
def graphops_register_algorithms() -> list[Algorithm]:
    return [Algorithm(
        name="sp_kernel",
        params=SPKernelParams,
        inputs=(Input("graphs", kinds=("graphset",)), Input("other", kinds=("graphset",), required=False, renamed_from=("train",))),
        backends={
            "cpu": "graphops_sp_kernel.cpu:run",
            "gpu": "graphops_sp_kernel.gpu:run",
            "hybrid": "graphops_sp_kernel.hybrid:run",
            "grakel": Backend(target="graphops_sp_kernel.peer:run_grakel", device="cpu",
                              requires=("grakel",), peer=True,
                              prepare="graphops_sp_kernel.peer:to_grakel"),
        },
        result="array",
        cost="graphops_sp_kernel.cpu:cost",
        gram=Gram(second="other", normalize="normalize", work="node_pairs", cut_larger=True,
                  seconds="graphops_sp_kernel.cost:seconds"),
        estimator="ShortestPathKernel",  # from graphops.kernels import ShortestPathKernel
        plot="graphops.plugin:gram_picture",
        summary="Shortest-path graph kernel Gram matrix (GraKeL's ordered-pair convention)",
        version_added="0.1",
    )]
