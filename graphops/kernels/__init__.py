"""Layer 6, kernels: the base-kernel algebra graph-kernel plugins share
(:mod:`~graphops.kernels.basekernels`: GraphDot's microkernels KroneckerDelta, SquareExponential,
RationalQuadratic, Constant, Convolution, DotProduct and the quasi-kernel Product(), their sums,
products, powers, tensor products and normalization, with hyperparameters and derivatives) and the
scikit-learn style estimators that algorithms export by name (``from graphops.kernels import
ShortestPathKernel``; :mod:`~graphops.kernels.estimators`). Imports every layer up to engine."""
from __future__ import annotations

from typing import Any

from graphops.kernels.basekernels import (Additive, BaseKernel, Constant, KroneckerDelta, Normalize, Normalized, Power,
                                          Product, QuasiProduct, RationalQuadratic, SquareExponential, Sum,
                                          TensorProduct)
from graphops.kernels.sequence import Convolution, DotProduct
from graphops.kernels.spec import compile_kernel, from_spec
from graphops.kernels import probability
from graphops.kernels.estimators import GraphKernelEstimator, estimator_for

__all__ = ["GraphKernelEstimator", "estimator_for", "BaseKernel", "KroneckerDelta", "SquareExponential",
           "Constant", "TensorProduct", "Additive", "Product", "QuasiProduct", "Sum", "Normalized", "from_spec", "RationalQuadratic",
           "Power", "Normalize", "Convolution", "DotProduct", "probability", "compile_kernel"]


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    return estimator_for(name)  # an estimator an algorithm exports: ShortestPathKernel, MarginalizedGraphKernel
