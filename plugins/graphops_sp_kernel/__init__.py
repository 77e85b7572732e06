"""graphops plugin ``sp_kernel``: the shortest-path graph kernel (histogram and FCSP paths)."""
from __future__ import annotations

from graphops import Algorithm, Backend, Input, hookimpl

from .params import SPKernelParams

__all__ = ["graphops_register_algorithms"]


@hookimpl
def graphops_register_algorithms() -> list[Algorithm]:
    return [Algorithm(
        name="sp_kernel",
        params=SPKernelParams,
        inputs=(Input("graphs", kinds=("graphset",)), Input("train", kinds=("graphset",), required=False)),
        backends={
            "cpu": "graphops_sp_kernel.cpu:run",
            "gpu": "graphops_sp_kernel.gpu:run",
            "hybrid": "graphops_sp_kernel.hybrid:run",
            "grakel": Backend(target="graphops_sp_kernel.peer:run_grakel", device="cpu",
                              requires=("grakel",), peer=True,
                              prepare="graphops_sp_kernel.peer:to_grakel"),
        },
        result="array",
        cost="graphops_sp_kernel.params:cost",
        split="graphops_sp_kernel.dist:split",
        estimator="ShortestPathKernel",  # from graphops.kernels import ShortestPathKernel
        plot="graphops.io.plots:gram_picture",
        summary="Shortest-path graph kernel Gram matrix (GraKeL's ordered-pair convention)",
        version_added="0.1",
    )]
