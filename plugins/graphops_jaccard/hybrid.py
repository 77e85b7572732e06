"""Hybrid backend of ``jaccard``: the light end of the pairs on CPU threads, the rest on the GPU.

Pairs are ordered by work key d_u + d_v; those with key ≤ T go to the CPU (Numba
threads, merge or binary search per pair) while the GPU kernels, already queued,
skip them; the CPU's values are then scattered into the GPU's output, so results
keep the pairs' order. The CPU share is
* given (``cpu_share``), or
* chosen by a heuristic from degree statistics plus a short calibration, the method's
  stated future work: when degrees are even (Gini < ``GINI_MIN``) or the pairs' merge
  work is close to their binary-search work (Σ(d_u+d_v) < ``SKEW_MIN`` · Σ min), every
  pair costs about the same and the GPU, many times faster per pair, should take them
  all. Otherwise the CPU's rate on the lightest pairs and the GPU's rate are measured,
  the share at which both would finish together is predicted, and real runs at that
  share and half of it are timed against GPU only. A split is kept only when it is at
  least ``MIN_GAIN`` faster than GPU only; the choice is cached per graph and pair list.
The chosen split and why are logged and kept in :func:`last_split`.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import cupy as cp
import numpy as np

from graphops.csr import CSR
from graphops.device import Device

from . import cpu, gpu
from .common import Adjacency, adjacency, result, work_stats
from .params import JaccardParams

log = logging.getLogger("graphops")

GINI_MIN = 0.5
SKEW_MIN = 2.0
MIN_GAIN = 0.02
KEY_CAP = 1 << 16  # key histogram resolution: larger keys are never CPU work


@dataclass(frozen=True)
class Split:
    """How a hybrid call divided its pairs."""

    cpu_share: float      # fraction of pairs on the CPU
    max_key: int          # pairs with d_u + d_v ≤ max_key went to the CPU (-1: none)
    reason: str
    predicted_gain: float = 0.0


_LAST: list[Split] = []


def last_split() -> Split | None:
    """The split of the most recent hybrid call in this process."""
    return _LAST[-1] if _LAST else None


def _host_adjacency(csr: CSR, params: JaccardParams, adj: Adjacency) -> Adjacency:
    key = ("jaccard_host_adjacency", params.symmetrize, params.use_weight)
    if key not in csr.extra:
        csr.extra[key] = adj.to_host()
    return csr.extra[key]


def run(csr: CSR, pairs_csr: Any, params: JaccardParams) -> dict[str, Any]:
    adj = adjacency(csr, params.symmetrize, params.use_weight)
    host = _host_adjacency(csr, params, adj)
    first, second = params.pairs_on(Device.GPU)
    keys = gpu.pair_keys(adj, first, second)
    split = _split(csr, adj, params, first, second, keys, host)
    _LAST[:] = [split]
    log.info("jaccard hybrid: CPU share %.1f%% (pairs with d_u + d_v <= %d): %s",
             100 * split.cpu_share, split.max_key, split.reason)
    out = cp.empty(len(first), cp.float64)
    compute(adj, host, params, first, second, keys, split.max_key, out)
    return result(first, second, out)


def compute(adj: Adjacency, host: Adjacency, params: JaccardParams, first: Any, second: Any,
            keys: Any, max_key: int, out: Any) -> None:
    """Fill ``out``: pairs with key ≤ ``max_key`` on the CPU, concurrently with the GPU's rest."""
    if max_key < 0:
        gpu.launch(adj, first, second, out)
        return
    sel = cp.flatnonzero(keys <= max_key)
    sel_host = cp.asnumpy(sel)                     # small and synchronous: before the launches
    gpu.launch(adj, first, second, out, max_key)   # queued; the GPU runs while the CPU works
    hf, hs = params.pairs_on(Device.CPU)
    values = cpu.coefficients(host, hf, hs, sel_host)
    out[sel] = cp.asarray(values)


def key_for_share(keys: Any, share: float) -> tuple[int, float]:
    """The largest key T whose pairs (key ≤ T) are at most ``share`` of all, and their share."""
    n = len(keys)
    if share <= 0 or n == 0:
        return -1, 0.0
    hist = cp.bincount(cp.minimum(keys, KEY_CAP), minlength=KEY_CAP + 1)
    cum = cp.asnumpy(cp.cumsum(hist[:KEY_CAP]))
    t = int(np.searchsorted(cum, share * n, side="right")) - 1
    return (t, float(cum[t]) / n) if t >= 0 else (-1, 0.0)


def _timed(fn: Any, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        cp.cuda.Device().synchronize()
        t0 = time.perf_counter()
        fn()
        cp.cuda.Device().synchronize()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _split(csr: CSR, adj: Adjacency, params: JaccardParams, first: Any, second: Any, keys: Any,
           host: Adjacency) -> Split:
    if params.cpu_share is not None:
        t, share = key_for_share(keys, params.cpu_share)
        return Split(share, t, f"cpu_share={params.cpu_share} requested")
    # Kept on the graph's CSR view per pair list (by identity: a stale hit could only cost
    # speed, never change a value).
    ident = ("jaccard_split", params.symmetrize, params.use_weight, id(first), len(first))
    if ident not in csr.extra:
        csr.extra[ident] = choose(adj, host, params, first, second, keys)
    return csr.extra[ident]


def choose(adj: Adjacency, host: Adjacency, params: JaccardParams, first: Any, second: Any,
           keys: Any) -> Split:
    """Heuristic from degree statistics, then a short calibration (see the module doc)."""
    stats = work_stats(adj, first, second)
    if stats["pairs"] < 10_000:
        return Split(0.0, -1, f"{stats['pairs']} pairs: too few to split")
    if stats["degree_gini"] < GINI_MIN:
        return Split(0.0, -1, f"degree Gini {stats['degree_gini']:.2f} < {GINI_MIN}: pairs cost alike, "
                              f"GPU only")
    skew = stats["sum_deg"] / max(stats["sum_min"], 1.0)
    if skew < SKEW_MIN:
        return Split(0.0, -1, f"Σ(d_u+d_v)/Σmin = {skew:.1f} < {SKEW_MIN}: no light end worth "
                              f"moving, GPU only")
    out = cp.empty(len(first), cp.float64)
    hf, hs = params.pairs_on(Device.CPU)

    def run_at(max_key: int) -> None:
        compute(adj, host, params, first, second, keys, max_key, out)

    gpu_only = _timed(lambda: run_at(-1))
    probe_key, probe_share = key_for_share(keys, 0.01)
    if probe_key < 0:
        return Split(0.0, -1, "no light pairs to probe, GPU only")
    sel = cp.asnumpy(cp.flatnonzero(keys <= probe_key))
    cpu.coefficients(host, hf, hs, sel[:1000])  # compile / warm
    cpu_rate = len(sel) / _timed(lambda: cpu.coefficients(host, hf, hs, sel), repeat=2)
    gpu_rate = stats["pairs"] / gpu_only
    balanced = min(0.5, cpu_rate / (cpu_rate + gpu_rate))
    best = Split(0.0, -1, f"no split was {100 * MIN_GAIN:.0f}% faster than GPU only "
                          f"({1e3 * gpu_only:.2f} ms; CPU {cpu_rate / 1e6:.1f} M pairs/s on the "
                          f"light end vs GPU {gpu_rate / 1e6:.1f} M pairs/s)")
    best_time = gpu_only * (1 - MIN_GAIN)
    for share in (balanced / 2, balanced):
        t, actual = key_for_share(keys, share)
        if t < 0:
            continue
        took = _timed(lambda: run_at(t))
        if took < best_time:
            best_time = took
            best = Split(actual, t, f"calibrated: {1e3 * took:.2f} ms vs {1e3 * gpu_only:.2f} ms GPU only "
                                    f"(degree Gini {stats['degree_gini']:.2f}, "
                                    f"Σ(d_u+d_v)/Σmin {skew:.1f})", gpu_only / took - 1)
    return best
