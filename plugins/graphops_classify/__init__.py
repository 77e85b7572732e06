"""graphops plugin ``classify``: a classifier cross-validated on a Gram matrix and a graph set's labels
(an SVC on the precomputed kernel by default): GraKeL's usual workflow, from molecules to an
accuracy, as one pipeline step after a Gram step."""
from __future__ import annotations

from graphops.plugin import Algorithm, Backend, Input, hookimpl

from .params import OUTPUTS, ClassifyParams

__all__ = ["graphops_register_algorithms"]


@hookimpl
def graphops_register_algorithms() -> list[Algorithm]:
    return [Algorithm(
        name="classify",
        params=ClassifyParams,
        inputs=(Input("graphs", kinds=("graphset",)), Input("gram", kinds=("matrix",))),
        backends={"cpu": Backend(target="graphops_classify.cpu:run", device="cpu", requires=("sklearn",),
                                 prepare="graphops_classify.cpu:labels")},
        outputs=OUTPUTS,
        summary="accuracy of a classifier cross-validated on a Gram matrix and the graph set's labels (SVC, "
                "precomputed kernel), per fold and their mean",
        version_added="0.5",
    )]
