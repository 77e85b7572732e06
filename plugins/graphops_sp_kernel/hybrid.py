"""Hybrid backend of ``sp_kernel``: light graph pairs on CPU threads while the GPU takes the rest.

The work of a pair is the product of the two graphs' shortest-path counts. A short
calibration times a sample of pairs on both sides and picks the threshold T that balances
them (``split.choose_split``); ``hybrid_threshold`` overrides it. The GPU part is launched
first (asynchronously, tile by tile), the CPU part runs meanwhile, then both are gathered.
"""
from __future__ import annotations

import logging
import time
from typing import Any

import cupy as cp
import numpy as np

from graphops.csr import CSR

from . import cpu, gpu
from .common import normalize
from .params import SPKernelParams
from .paths import path_lists
from .split import Split, choose_split, split_for_threshold

log = logging.getLogger("graphops")
LAST_SPLIT: dict[str, Split] = {}  # the split of the latest call, for reports


def run(graphs: CSR, train: CSR | None, params: SPKernelParams) -> np.ndarray:
    """Gram matrix as in the cpu/gpu backends, the pairs shared between CPU and GPU."""
    if params.use_histogram:
        log.info("sp_kernel hybrid: delta kernels take the histogram path (one GEMM); all on the GPU")
        return gpu.run(graphs, train, params)
    symmetric = train is None
    other = graphs if symmetric else train
    sides = _Sides(graphs, other, params, symmetric)
    rows, cols = _pairs(graphs.n_graphs, other.n_graphs, symmetric)
    work = sides.work(rows, cols)
    split = _split(sides, rows, cols, work, params)
    LAST_SPLIT["sp_kernel"] = split
    log.info("sp_kernel hybrid: %s", split.describe())
    on_cpu = work < split.threshold
    values = sides.compute(rows, cols, on_cpu, params.tile * other.n_graphs)
    K = np.empty((graphs.n_graphs, other.n_graphs))
    K[rows, cols] = values
    if symmetric:
        K[cols, rows] = values
        d = np.diag(K).copy()
        return normalize(np, K, d, d) if params.normalize else K
    if not params.normalize:
        return K
    return normalize(np, K, cpu._self(graphs.to("cpu"), sides.host_a, params),
                     cpu._self(other.to("cpu"), sides.host_b, params))


def _pairs(na: int, nb: int, symmetric: bool) -> tuple[np.ndarray, np.ndarray]:
    if symmetric:
        r, c = np.triu_indices(na)
        return r.astype(np.int64), c.astype(np.int64)
    r, c = np.divmod(np.arange(na * nb, dtype=np.int64), nb)
    return r, c


class _Sides:
    """The same pairs computable on either side: host path lists and the GPU walk."""

    def __init__(self, ga: CSR, gb: CSR, params: SPKernelParams, symmetric: bool):
        host_a, host_b = ga.to("cpu"), gb.to("cpu")
        self.host_a = path_lists(host_a)
        self.host_b = self.host_a if symmetric else path_lists(host_b)
        self.setup = cpu.fcsp_setup(host_a, host_b, self.host_a, self.host_b, params)
        pa = gpu._paths(ga)
        pb = pa if symmetric else gpu._paths(gb)
        lens = gpu._lengths(pa, pb, ga.weights is not None or gb.weights is not None)
        la = gpu._sorted_lists(pa, lens)
        lb = la if symmetric else gpu._sorted_lists(pb, lens)
        self.walk = gpu._Walk(ga, la, gb, lb, lens, params)

    def work(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return np.diff(self.host_a.ptr)[rows] * np.diff(self.host_b.ptr)[cols]

    def on_cpu(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        out = np.empty(len(rows))
        cpu._fcsp_pairs(rows, cols, out, **self.setup)
        return out

    def compute(self, rows: np.ndarray, cols: np.ndarray, on_cpu: np.ndarray, chunk: int) -> np.ndarray:
        gpu_idx = np.flatnonzero(~on_cpu)
        parts = []
        for s in range(0, len(gpu_idx), max(chunk, 1)):  # launched now, run while the CPU works
            idx = gpu_idx[s:s + chunk]
            parts.append((idx, self.walk(cp.asarray(rows[idx]), cp.asarray(cols[idx]))))
        values = np.empty(len(rows))
        cpu_idx = np.flatnonzero(on_cpu)
        values[cpu_idx] = self.on_cpu(rows[cpu_idx], cols[cpu_idx])
        for idx, dev in parts:
            values[idx] = dev.get()
        return values


def _split(sides: _Sides, rows: np.ndarray, cols: np.ndarray, work: np.ndarray,
           params: SPKernelParams) -> Split:
    if params.hybrid_threshold is not None:
        return split_for_threshold(work, params.hybrid_threshold)
    sample = np.argsort(work, kind="stable")[np.linspace(0, len(work) - 1, min(len(work), 256)).astype(int)]
    sides.on_cpu(rows[sample[:2]], cols[sample[:2]])  # compile / warm both sides
    sides.walk(cp.asarray(rows[sample[:2]]), cp.asarray(cols[sample[:2]])).get()
    cpu_s = _timed(lambda: sides.on_cpu(rows[sample], cols[sample]))
    r, c = cp.asarray(rows[sample]), cp.asarray(cols[sample])
    gpu_s = _timed(lambda: sides.walk(r, c).get())
    one = _timed(lambda: sides.walk(r[:1], c[:1]).get())
    sampled = float(work[sample].sum()) or 1.0
    return choose_split(work, sampled / max(cpu_s, 1e-9), sampled / max(gpu_s - one, 1e-9), one)


def _timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start
