"""Hybrid backend of ``jaccard``: the light end of the pairs on CPU threads, the rest on the GPU.

Pairs are ordered by work key d_u + d_v; the lightest share goes to the CPU (Numba
threads, merge or binary search per pair: keys below T, and of the pairs with key T
those first in order) while the GPU kernels, already queued, skip them; the CPU's
values are then scattered into the GPU's output, so results keep the pairs' order.
The host copy of the adjacency and the keys are made only when a split needs them.
The CPU share is
* given (``cpu_share``), or
* chosen by a heuristic from degree statistics plus a short calibration, the method's
  stated future work: when degrees are even (Gini < ``GINI_MIN``) or the pairs' merge
  work is close to their binary-search work (Σ(d_u+d_v) < ``SKEW_MIN`` · Σ min), every
  pair costs about the same and the GPU, many times faster per pair, should take them
  all. Otherwise the CPU's rate on the lightest pairs and the GPU's rate are measured,
  the share at which both would finish together is predicted, and real runs at that
  share and half of it are timed against GPU only. A split is kept only when it is at
  least ``MIN_GAIN`` faster than GPU only; the choice is kept with the graph's GPU CSR view
  (keyed by the pairs' content), so the next call on the same pairs skips the calibration.
The chosen split and why are logged and returned as the call's details (``split``), which
``graphops.execute_call`` and the run summary report.
"""
from __future__ import annotations

import dataclasses
import functools
import logging
from dataclasses import dataclass
from typing import Any

import cupy as cp
import numpy as np

from graphops.plugin import CSR, PairIndex, Result, chunks, even_ranges, interleave, spare_one_core, timed

from . import cpu, gpu, measures
from .common import MEASURES, Adjacency, Mode, adjacency, pair_costs, work_stats
from .params import JaccardParams, SimilarityParams

log = logging.getLogger("graphops")

GINI_MIN = 0.5
SKEW_MIN = 2.0
MIN_GAIN = 0.02
KEY_CAP = 1 << 16  # key histogram resolution: larger keys are never CPU work


@dataclass(frozen=True)
class Split:
    """How a hybrid call divided its pairs."""

    cpu_share: float      # fraction of pairs on the CPU
    key: int              # pairs with d_u + d_v < key went to the CPU (-1: none) ...
    cut: int              # ... and those with d_u + d_v == key at positions < cut
    reason: str
    measured_gain: float = 0.0  # calibration's GPU-only time over the split's, minus 1


def _host_adjacency(csr: CSR, params: JaccardParams, adj: Adjacency) -> Adjacency:
    key = ("jaccard_host_adjacency", params.symmetrize, bool(adj.weights is not None))
    return csr.cached(key, adj.to_host)


@dataclass(frozen=True)
class Kernel:
    """What the kernels compute per pair (:class:`Mode`) and the per-vertex g(x) it reads on
    each side (``Mode.AUX_SUM`` only)."""

    mode: Mode | None = None  # None: J
    aux: Any = None
    host_aux: Any = None


def run(csr: CSR, pairs: PairIndex, params: JaccardParams) -> Result:
    return run_measure(csr, pairs, params)


def run_measure(csr: CSR, pairs: PairIndex, params: SimilarityParams) -> Result:
    """Any member of the family: given pairs or edges split between the CPU and the GPU (the
    kernels' raw value, then the measure's formula on the GPU); two-hop pairs on the GPU alone."""
    measure = MEASURES[params.measure]
    if params.candidates == "two_hop":
        split = Split(0.0, -1, 0, "two-hop pairs: GPU only (a first vertex's pairs are one GPU block's work)")
        return Result(gpu.run_measure(csr, pairs, params), {"split": dataclasses.asdict(split)})
    adj = adjacency(csr, params.symmetrize, params.use_weight and measure.weights, gpu.row_sums)
    t = measures.tables(adj, measure, gpu.row_sums)
    kernel = Kernel()
    if measure.name != "jaccard":
        kernel = Kernel(Mode(t.acc), t.aux, cp.asnumpy(t.aux))
    first, second = pairs.first, pairs.second
    # Both made on first use only: a GPU-only split needs neither.
    host = functools.partial(_host_adjacency, csr, params, adj)  # cached on the CSR view
    keys = functools.cache(functools.partial(gpu.pair_keys, adj, first, second))
    split = _split(csr, adj, params, pairs, keys, host, kernel)
    log.info("%s hybrid: CPU share %.1f%% (pairs with d_u + d_v < %d, and some = %d): %s", measure.name,
             100 * split.cpu_share, split.key, split.key, split.reason)
    out = cp.empty(len(first), cp.float64)
    compute(adj, host, pairs, keys, split, out, kernel)
    if kernel.mode is not None and len(out):
        gpu.finish(adj, t, first, second, out)
    if params.top_k is not None:
        first, second, out = measures.best_of(first, second, out, params.top_k)
    return Result({"first": first, "second": second, measure.column: out}, {"split": dataclasses.asdict(split)})


def compute(adj: Adjacency, host: Any, pairs: PairIndex, keys: Any, split: Split, out: Any,
            kernel: Kernel = Kernel()) -> None:
    """Fill ``out``: the split's CPU share on the CPU, side by side with the GPU's rest, both in
    chunks (:func:`graphops.base.cuda.interleave`), so Ctrl-C is honoured within about a second.

    ``host`` and ``keys`` are zero-argument callables giving the host adjacency and the
    pairs' work keys; a GPU-only split calls neither."""
    first, second = pairs.first, pairs.second
    if split.key < 0:
        gpu.coefficients(adj, first, second, out=out, mode=kernel.mode, aux=kernel.aux)
        return
    sel = cpu_positions(keys(), split)
    sel_host = cp.asnumpy(sel)
    hf, hs = (a[sel_host] for a in _host_pairs(pairs))
    values = np.empty(len(sel_host))
    n = len(first)

    def launch(lo: int, hi: int) -> None:
        gpu.launch(adj, first[lo:hi], second[lo:hi], out[lo:hi], split.key, min(max(split.cut - lo, 0), hi - lo),
                   kernel.mode, kernel.aux)

    on_host = host()
    gpu_ranges = even_ranges(n, -(-n // gpu.FIRST_CHUNK_PAIRS))
    cpu_ranges = chunks(len(hf), what="jaccard (hybrid)", cost=pair_costs(on_host, hf, hs),
                        first=cpu.FIRST_CHUNK_WORK)
    with spare_one_core():
        interleave(gpu_ranges, launch, cpu_ranges, lambda lo, hi: cpu.score(on_host, hf[lo:hi], hs[lo:hi],
                                                                            values[lo:hi], kernel.mode,
                                                                            kernel.host_aux))
    out[sel] = cp.asarray(values)


def _host_pairs(pairs: PairIndex) -> tuple[Any, Any]:
    if "host" not in pairs.extra:
        pairs.extra["host"] = (cp.asnumpy(pairs.first), cp.asnumpy(pairs.second))
    return pairs.extra["host"]


def cpu_positions(keys: Any, split: Split) -> Any:
    """Positions of the pairs in the split's CPU share, ascending."""
    mask = keys < split.key
    if split.cut:
        mask[:split.cut] |= keys[:split.cut] == split.key
    return cp.flatnonzero(mask)


def split_for_share(keys: Any, share: float, reason: str) -> Split:
    """The split giving the CPU the lightest ``share`` of the pairs (ties split by position)."""
    n = len(keys)
    want = int(round(share * n))
    if want <= 0:
        return Split(0.0, -1, 0, reason)
    hist = cp.asnumpy(cp.bincount(cp.minimum(keys, KEY_CAP), minlength=KEY_CAP + 1))
    cum = np.cumsum(hist[:KEY_CAP])
    key = int(np.searchsorted(cum, want, side="left"))  # first key whose pairs reach the share
    if key >= KEY_CAP:  # never give the CPU the hubs' pairs: stop below the cap
        key, want = KEY_CAP - 1, int(cum[-1])
    need = want - (int(cum[key - 1]) if key else 0)
    ties = cp.flatnonzero(keys == key)
    cut = int(ties[need - 1]) + 1 if need > 0 else 0
    return Split(want / n, key, cut, reason)


def _split(csr: CSR, adj: Adjacency, params: SimilarityParams, pairs: PairIndex, keys: Any, host: Any,
           kernel: Kernel) -> Split:
    share = getattr(params, "cpu_share", None)
    if share is not None:
        return split_for_share(keys(), share, f"cpu_share={share} requested")
    # Kept with the graph's CSR view on the GPU, keyed by the pairs' content and what is computed:
    # the same workload gets the same split without a new calibration.
    ident = ("jaccard_split", params.symmetrize, adj.weights is not None, kernel.mode, pairs.digest)
    return csr.cached(ident, lambda: choose(adj, host, params, pairs, keys, kernel))


def choose(adj: Adjacency, host: Any, params: SimilarityParams, pairs: PairIndex, keys: Any,
           kernel: Kernel = Kernel()) -> Split:
    """Heuristic from degree statistics, then a short calibration (see the module doc)."""
    first, second = pairs.first, pairs.second
    stats = work_stats(adj, first, second)
    none = Split(0.0, -1, 0, "")
    if stats["pairs"] < 10_000:
        return Split(0.0, -1, 0, f"{stats['pairs']} pairs: too few to split")
    if stats["degree_gini"] < GINI_MIN:
        return Split(0.0, -1, 0, f"degree Gini {stats['degree_gini']:.2f} < {GINI_MIN}: pairs cost "
                                 f"alike, GPU only")
    skew = stats["sum_deg"] / max(stats["sum_min"], 1.0)
    if skew < SKEW_MIN:
        return Split(0.0, -1, 0, f"Σ(d_u+d_v)/Σmin = {skew:.1f} < {SKEW_MIN}: no light end worth "
                                 f"moving, GPU only")
    out = cp.empty(len(first), cp.float64)
    hf, hs = _host_pairs(pairs)

    def run_at(split: Split) -> None:
        compute(adj, host, pairs, keys, split, out, kernel)

    gpu_only = timed(lambda: run_at(none), repeat=3).median
    sel = cp.asnumpy(cpu_positions(keys(), split_for_share(keys(), 0.01, "probe")))
    on_host = host()
    with spare_one_core():
        cpu.coefficients(on_host, hf, hs, sel[:1000], kernel.mode, kernel.host_aux)  # compile / warm
        cpu_rate = len(sel) / timed(lambda: cpu.coefficients(on_host, hf, hs, sel, kernel.mode, kernel.host_aux),
                                    repeat=2).median
    gpu_rate = stats["pairs"] / gpu_only
    balanced = min(0.5, cpu_rate / (cpu_rate + gpu_rate))
    best = Split(0.0, -1, 0, f"no split was {100 * MIN_GAIN:.0f}% faster than GPU only "
                             f"({1e3 * gpu_only:.2f} ms; CPU {cpu_rate / 1e6:.1f} M pairs/s on the "
                             f"light end vs GPU {gpu_rate / 1e6:.1f} M pairs/s)")
    best_time = gpu_only * (1 - MIN_GAIN)
    for share in (balanced / 2, balanced):
        trial = split_for_share(keys(), share, "")
        if trial.key < 0:
            continue
        took = timed(lambda: run_at(trial), repeat=3).median
        if took < best_time:
            best_time = took
            best = Split(trial.cpu_share, trial.key, trial.cut,
                         f"calibrated: {1e3 * took:.2f} ms vs {1e3 * gpu_only:.2f} ms GPU only "
                         f"(degree Gini {stats['degree_gini']:.2f}, Σ(d_u+d_v)/Σmin {skew:.1f})",
                         gpu_only / took - 1)
    return best
