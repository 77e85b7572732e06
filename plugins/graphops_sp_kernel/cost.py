"""sp_kernel's estimated seconds of a Gram call on one device (``Gram(seconds=...)``): what the core
weighs against a Dask cluster's seconds to decide whether the cluster pays. From node counts only
(no shortest paths, no kernel runs), with constants measured on the machines named beside them.

* delta kernels (the histogram path): every graph's shortest paths and histogram (its node pairs,
  ``Σ n²``), then one product of histograms per entry of K: cheap per pair;
* other kernels (FCSP): the pairs of shortest paths of every graph pair, at most
  ``n_a (n_a - 1) · n_b (n_b - 1)`` (ordered pairs of distinct nodes, all connected).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from graphops.plugin import Device, to_device

from .params import SPKernelParams

__all__ = ["seconds"]

# NVIDIA H100 80GB (16-core host), gpu backend. Delta kernels: 1,000 × 20,000 molecule-sized graphs
# (configs/bench/scaling_gram.yaml: 2e7 entries, Σ n² = 1.01e7) in 14.5–23 ms, and 200 × 100,000
# (2e7 entries, Σ n² ≈ 4.9e7) in 25–66 ms (docs/guide/dask.md, 2026-11-23/24); the fast ends give
# 0.27 ns a node pair and 0.59 ns an entry (the copy of K to the host included). FCSP: ENZYMES with
# Gaussian kernels, 267 G path pairs in 0.21 s (docs/performance/sp_kernel.md, 2026-11-21).
GPU = {"node_pair": 0.27e-9, "entry": 0.59e-9, "path_pair": 0.21 / 267e9}
# The 2-core Intel Xeon dev machine, cpu backend (2026-11-24): delta kernels on generated G(n, 0.12)
# sets (200 × 2,000: 60 ms; 50 × 2,000: 28 ms; 200 × 500: 8 ms) fit 19 ns a node pair and 96 ns an
# entry; NCI1 (8.45 M pairs, 670 ms on a 2-core EPYC) bounds an entry by 79 ns. FCSP: 70.7 G path
# pairs (the bound above) in 4.79 s, 17.7 G in 1.13 s: about 14 G a second.
CPU = {"node_pair": 20e-9, "entry": 80e-9, "path_pair": 1 / 14e9}
# GraKeL (the grakel peer) against graphops' cpu backend on the 2-core EPYC: 13–23× slower (the least).
GRAKEL_SLOWER = 13.0


def seconds(inputs: dict[str, Any], params: SPKernelParams, backend: str = "gpu") -> float:
    """The estimated seconds of ``K(graphs, other)`` (or ``K(graphs)``) by ``backend`` on one device."""
    a = _nodes(inputs["graphs"])
    b = None if inputs.get("other") is None else _nodes(inputs["other"])
    rate = CPU if backend in ("cpu", "grakel") else GPU  # gpu and hybrid: the GPU's rates
    node_pairs = float((a * a).sum() + (0.0 if b is None else (b * b).sum()))
    entries = len(a) * (len(a) + 1) / 2 if b is None else len(a) * len(b)
    t = rate["node_pair"] * node_pairs + rate["entry"] * entries
    if not params.use_histogram:
        t += rate["path_pair"] * _path_pairs(a, b)
    return t * (GRAKEL_SLOWER if backend == "grakel" else 1.0)


def _nodes(graphs: Any) -> np.ndarray:
    return np.asarray(to_device(graphs.graph_sizes(), Device.CPU), dtype=np.float64)


def _path_pairs(a: np.ndarray, b: np.ndarray | None) -> float:
    """Σ over the graph pairs of K of P_a P_b, P = n (n - 1): every pair (i, j >= i) of a square K."""
    pa = a * (a - 1)
    if b is None:
        return float((pa.sum() ** 2 + (pa * pa).sum()) / 2)
    return float(pa.sum() * (b * (b - 1)).sum())
