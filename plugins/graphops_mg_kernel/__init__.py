"""graphops plugin ``mg_kernel``: the marginalized graph kernel (Kashima et al.; GraphDot's
convention), solved per graph pair by conjugate gradients without storing the product graph."""
from __future__ import annotations

from graphops.plugin import Algorithm, Backend, Gram, Input, hookimpl

from .params import MGKernelParams

__all__ = ["graphops_register_algorithms"]


@hookimpl
def graphops_register_algorithms() -> list[Algorithm]:
    return [Algorithm(
        name="mg_kernel",
        params=MGKernelParams,
        inputs=(Input("graphs", kinds=("graphset",)), Input("other", kinds=("graphset",), required=False)),
        backends={
            "cpu": Backend(target="graphops_mg_kernel.cpu:run", device="cpu",
                           prepare="graphops_mg_kernel.common:prepare_cpu"),
            "gpu": Backend(target="graphops_mg_kernel.gpu:run", device="gpu", requires=("cupy",),
                           prepare="graphops_mg_kernel.common:prepare_cpu"),
        },
        result="array",
        cost="graphops_mg_kernel.params:cost",
        gram=Gram(second="other", normalize="normalize", diagonal="diagonal", work="nodes_edges", cut_larger=True,
                  one_device=("diagonal", "nodewise", "eval_gradient"), seconds="graphops_mg_kernel.cost:seconds"),
        plot="graphops.plugin:gram_picture",
        summary="Marginalized graph kernel Gram matrix (GraphDot's convention), CG per graph pair",
        estimator="MarginalizedGraphKernel",
        estimator_class="graphops_mg_kernel.estimator:MarginalizedGraphKernel",
        version_added="0.2",
    )]
