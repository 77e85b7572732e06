"""Hybrid backend of ``sp_kernel``: light graph pairs on CPU threads while the GPU takes the rest.

The work of a pair is the product of the two graphs' shortest-path counts; pairs below the
threshold T go to the CPU (all cores but one: that one drives the GPU). T comes from a short
calibration, kept with the graphs' GPU CSR view per input shape and parameters: the CPU's cost per pair and
per unit of work on the light end and the GPU's rate on a random sample give the T that
balances both sides (``common.choose_split``); when the whole job is short, that T and half
of it are then tried for real against GPU only, and kept only if measured at least 1%
faster. ``hybrid_threshold`` overrides it. The GPU part is queued in ranges while the CPU
part runs in chunks (:func:`graphops.base.cuda.interleave`), then both are gathered. The split
and why are logged and returned as the call's details (``split``).
"""
from __future__ import annotations

import logging
from typing import Any

import cupy as cp
import numpy as np

from graphops.plugin import (CSR, Result, chunks, even_ranges, gpu_attribute, interleave, normalize, spare_one_core,
                             timed)

from . import cpu, gpu
from .common import Split, choose_split, lengths, split_for_threshold
from .params import SPKernelParams
from .paths import PathLists

log = logging.getLogger("graphops")
MIN_GAIN = 0.01  # a split is kept only when measured this much faster than GPU only
TRIAL_LIMIT_S = 2.0  # jobs predicted longer than this are split by the model, without trial runs


def run(graphs: CSR, other: CSR | None, params: SPKernelParams) -> Result:
    """Gram matrix as in the cpu/gpu backends, the pairs shared between CPU and GPU."""
    if params.use_histogram:
        log.info("sp_kernel hybrid: delta kernels take the histogram path (one GEMM per tile); all on the GPU")
        return Result(gpu.run(graphs, other, params), {"split": "histogram path: GPU only"})
    symmetric = other is None
    other = graphs if symmetric else other  # K against itself: the same set on both sides
    key = _shape_key(graphs, other, params)
    known = graphs.extra.get(key)
    if params.hybrid_threshold is None and known is not None and known.cpu_pairs == 0:
        return _done(gpu.run(graphs, None if symmetric else other, params), known)  # calibrated: GPU only
    sides = _Sides(graphs, other, params, symmetric)
    rows, cols = _pairs(graphs.n_graphs, other.n_graphs, symmetric)
    work = sides.work(rows, cols)
    if params.hybrid_threshold is not None:
        split = split_for_threshold(work, params.hybrid_threshold)
    else:
        split = graphs.cached(key, lambda: _calibrate(sides, rows, cols, work))  # kept with the graphs' GPU CSR view
    log.info("sp_kernel hybrid: %s", split.describe())
    on_cpu = work < split.threshold
    if not on_cpu.any():  # GPU only: the GPU backend's own tiled path
        return _done(gpu.run(graphs, None if symmetric else other, params), split)
    values = sides.compute(rows, cols, on_cpu, work)
    K = np.empty((graphs.n_graphs, other.n_graphs))
    K[rows, cols] = values
    if symmetric:
        K[cols, rows] = values
        d = np.diag(K).copy()
        return _done(normalize(np, K, d, d) if params.normalize else K, split)
    if not params.normalize:
        return _done(K, split)
    return _done(normalize(np, K, cpu.self_values(graphs.to("cpu"), sides.host_a, params),
                           cpu.self_values(other.to("cpu"), sides.host_b, params)), split)


def _done(K: Any, split: Split) -> Result:
    return Result(K, {"split": split.describe(), "threshold": split.threshold, "cpu_pairs": split.cpu_pairs,
                      "gpu_pairs": split.gpu_pairs})


def _pairs(na: int, nb: int, symmetric: bool) -> tuple[np.ndarray, np.ndarray]:
    if symmetric:
        r, c = np.triu_indices(na)
        return r.astype(np.int64), c.astype(np.int64)
    r, c = np.divmod(np.arange(na * nb, dtype=np.int64), nb)
    return r, c


class _Sides:
    """The same pairs computable on either side: host path lists and the GPU walk."""

    def __init__(self, ga: CSR, gb: CSR, params: SPKernelParams, symmetric: bool):
        pa = gpu.paths(ga)  # shortest paths once, on the GPU; the CPU gets copies of the lists
        pb = pa if symmetric else gpu.paths(gb)
        lens = lengths(cp, pa["dist"], pb["dist"], weighted=ga.weights is not None or gb.weights is not None)
        la = gpu.sorted_lists(pa, lens)
        lb = la if symmetric else gpu.sorted_lists(pb, lens)
        self.walk = gpu.Walk(ga, la, gb, lb, lens, params)
        self.host_a = _host_lists(la, lens)
        self.host_b = self.host_a if symmetric else _host_lists(lb, lens)
        self.setup = cpu.fcsp_setup(ga.to("cpu"), gb.to("cpu"), self.host_a, self.host_b, params)

    def work(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return np.diff(self.host_a.ptr)[rows] * np.diff(self.host_b.ptr)[cols]

    def on_cpu(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        out = np.empty(len(rows))
        cpu.fcsp_pairs(rows, cols, out, self.setup)
        return out

    def compute(self, rows: np.ndarray, cols: np.ndarray, on_cpu: np.ndarray,
                work: np.ndarray | None = None) -> np.ndarray:
        """Values of all pairs: the ``on_cpu`` ones on the CPU, the rest on the GPU, side by side."""
        work = self.work(rows, cols) if work is None else work
        gpu_idx, cpu_idx = np.flatnonzero(~on_cpu), np.flatnonzero(on_cpu)
        values = np.empty(len(rows))
        gpu_cost = np.concatenate([[0], np.cumsum(work[gpu_idx] + 1.0)])
        pieces = max(1, int(gpu_cost[-1] // GPU_RANGE_WORK))
        g_rows, g_cols = cp.asarray(rows[gpu_idx]), cp.asarray(cols[gpu_idx])
        on_gpu = cp.empty(len(gpu_idx))
        c_rows, c_cols = rows[cpu_idx], cols[cpu_idx]

        def launch(lo: int, hi: int) -> None:
            on_gpu[lo:hi] = self.walk(g_rows[lo:hi], g_cols[lo:hi])

        def run_cpu(lo: int, hi: int) -> None:
            values[cpu_idx[lo:hi]] = self.on_cpu(c_rows[lo:hi], c_cols[lo:hi])

        cpu_cost = np.concatenate([[0], np.cumsum(work[cpu_idx] + 1.0)])
        with spare_one_core():
            interleave(even_ranges(len(gpu_idx), pieces, gpu_cost), launch,
                       chunks(len(cpu_idx), what="sp_kernel (hybrid)", cost=cpu_cost, first=cpu.FIRST_CHUNK_WORK),
                       run_cpu)
        values[gpu_idx] = on_gpu.get()
        return values


# Path pairs per queued GPU range of a hybrid call: about 0.1 s of FCSP walk on an H100.
GPU_RANGE_WORK = 5e10


def _host_lists(lists: dict, lens: Any) -> PathLists:
    """Host copy of GPU path lists (same order as ``paths.path_lists``: by length, source, destination)."""
    return PathLists(lists["ptr"].get(), lists["src"].get(), lists["dst"].get(), lens[lists["len"]].get())


def _shape_key(ga: CSR, gb: CSR, params: SPKernelParams) -> tuple:
    """What a calibration depends on: the other input's sizes and the kernel parameters."""
    return ("sp_kernel_split", gb.n_graphs, gb.n_vertices, len(gb.indices),
            params.model_dump_json(exclude={"hybrid_threshold", "tile", "progress"}))


def _calibrate(sides: _Sides, rows: np.ndarray, cols: np.ndarray, work: np.ndarray) -> Split:
    """Model both sides from samples, then (for short jobs) try the model's split for real.

    The CPU gets the lightest pairs, so its cost model ``pairs·c0 + work/rate`` is fitted on
    two samples from that end (the 256 lightest pairs, and 256 from the lighter half). The
    GPU needs enough pairs to fill the chip (a few per multiprocessor slot), or its rate
    reads as the slowest single pair.
    """
    rng = np.random.default_rng(0)
    by_work = np.argsort(work, kind="stable")
    light = by_work[:min(len(work), 256)]
    half = by_work[rng.choice(max(len(work) // 2, 1), size=min(len(work) // 2, 256), replace=False)]
    slots = 64 * gpu_attribute("MultiProcessorCount")
    gpu_sample = rng.choice(len(work), size=min(len(work), slots), replace=False)
    with spare_one_core():
        sides.on_cpu(rows[light[:2]], cols[light[:2]])  # compile / warm both sides
        c0, cpu_rate = _cpu_model(sides, rows, cols, work, light, half)
    r, c = cp.asarray(rows[gpu_sample]), cp.asarray(cols[gpu_sample])
    sides.walk(r[:2], c[:2]).get()
    gpu_s = timed(lambda: sides.walk(r, c).get()).median
    one = timed(lambda: sides.walk(r[:1], c[:1]).get()).median
    gpu_rate = float(work[gpu_sample].sum() or 1) / max(gpu_s - one, 1e-9)
    model = choose_split(work, cpu_rate, gpu_rate, one, c0)
    predicted_gpu_only = one + float(work.sum()) / gpu_rate
    gpu_only = Split(0, 0, len(work), 0.0, 0.0, predicted_gpu_only, "GPU only")
    if model.cpu_pairs == 0:
        return gpu_only.with_reason("the model predicts no gain from a CPU share")
    if predicted_gpu_only > TRIAL_LIMIT_S:  # long job: trust the model, trials would cost too much
        if max(model.predicted_cpu_s, model.predicted_gpu_s) > (1 - MIN_GAIN) * predicted_gpu_only:
            return gpu_only.with_reason("the model predicts less than 1% gain")
        return model.with_reason("model (job too long for trial runs)")
    none = np.zeros(len(work), bool)
    base = timed(lambda: sides.compute(rows, cols, none, work), repeat=3, warmup=1).best
    best, best_s = gpu_only.with_reason(f"no trial split was {100 * MIN_GAIN:.0f}% faster than GPU only "
                                            f"({1e3 * base:.2f} ms)"), base * (1 - MIN_GAIN)
    order = np.sort(work)
    for k in (model.cpu_pairs, model.cpu_pairs // 2):
        if k == 0:
            continue
        trial = split_for_threshold(work, int(order[k - 1]) + 1)
        mask = work < trial.threshold
        took = timed(lambda: sides.compute(rows, cols, mask, work), repeat=3).best
        if took < best_s:
            best_s = took
            best = trial.with_reason(f"trial: {1e3 * took:.2f} ms vs {1e3 * base:.2f} ms GPU only")
    return best


def _cpu_model(sides: _Sides, rows: np.ndarray, cols: np.ndarray, work: np.ndarray,
               light: np.ndarray, half: np.ndarray) -> tuple[float, float]:
    """Per-pair cost and work rate of the CPU, from timings of two samples."""
    t1 = timed(lambda: sides.on_cpu(rows[light], cols[light])).median
    t2 = timed(lambda: sides.on_cpu(rows[half], cols[half])).median if len(half) else t1
    w1, w2 = float(work[light].sum()), float(work[half].sum())
    n1, n2 = len(light), max(len(half), 1)
    if w2 / n2 > w1 / n1 * 1.01 and t2 / n2 > t1 / n1:  # slope and intercept of time per pair
        rate = (w2 / n2 - w1 / n1) / (t2 / n2 - t1 / n1)
        return max(t1 / n1 - (w1 / n1) / rate, 0.0), rate
    return t1 / n1, float("inf")
