"""mg_kernel's estimated seconds of a Gram call on one device (``Gram(seconds=...)``): what the core
weighs against a Dask cluster's seconds to decide whether the cluster pays. A pair's solver work
grows with its product graph, ``n_a n_b`` nodes, so the call's is ``Σ n_a n_b`` times a rate per
product-graph node measured on the machines named beside it (no plan is built, no kernel runs).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from graphops.plugin import Device, to_device

from .params import MGKernelParams

__all__ = ["seconds"]

# NVIDIA H100 80GB (16-core host), gpu backend, float32: 1,000 × 20,000 molecule-sized graphs
# (configs/bench/scaling_gram.yaml; Σ n_a Σ n_b = 20,000 × 420,000 = 8.4e9 product-graph nodes) in
# 0.9–1.3 s (docs/guide/dask.md, 2026-11-24; the fast end); float64 is 3.2× slower (NCI1: 5,724
# against 1,766 ms, docs/performance/mg_kernel.md, 2026-11-23).
GPU_SECONDS_PER_NODE = 0.9 / 8.4e9
GPU_FLOAT64_SLOWER = 3.2
# The 2-core Intel Xeon dev machine, cpu backend (float64; 2026-11-24): 20 × 500 generated G(n, 0.12)
# graphs (2.4e6 product-graph nodes) in 0.133 s, 50 × 1,000 (1.5e7) in 0.94 s: 55–62 ns a node.
CPU_SECONDS_PER_NODE = 60e-9


def seconds(inputs: dict[str, Any], params: MGKernelParams, backend: str = "gpu") -> float:
    """The estimated seconds of ``K(graphs, other)`` (or ``K(graphs)``) by ``backend`` on one device
    (a normalized test × train matrix adds both sets' diagonals)."""
    a = _nodes(inputs["graphs"])
    b = None if inputs.get("other") is None else _nodes(inputs["other"])
    if b is None:  # the pairs (i, j >= i)
        nodes = (a.sum() ** 2 + (a * a).sum()) / 2
    else:
        nodes = a.sum() * b.sum() + ((a * a).sum() + (b * b).sum() if params.normalize else 0.0)
    if backend == "cpu":
        return float(nodes) * CPU_SECONDS_PER_NODE
    slower = GPU_FLOAT64_SLOWER if params.precision == "float64" else 1.0
    return float(nodes) * GPU_SECONDS_PER_NODE * slower


def _nodes(graphs: Any) -> np.ndarray:
    return np.asarray(to_device(graphs.graph_sizes(), Device.CPU), dtype=np.float64)
