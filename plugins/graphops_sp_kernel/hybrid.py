"""Hybrid backend of ``sp_kernel``: light graph pairs on CPU threads while the GPU takes the rest.

The work of a pair is the product of the two graphs' shortest-path counts; pairs below the
threshold T go to the CPU (all cores but one: that one drives the GPU). T comes from a short
calibration, once per input shape and parameters in a process: the CPU's cost per pair and
per unit of work on the light end and the GPU's rate on a random sample give the T that
balances both sides (``split.choose_split``); when the whole job is short, that T and half
of it are then tried for real against GPU only, and kept only if measured at least 1%
faster. ``hybrid_threshold`` overrides it. The GPU part is launched first (asynchronously),
the CPU part runs meanwhile, then both are gathered.
"""
from __future__ import annotations

import logging
import time
from typing import Any

import cupy as cp
import numpy as np

from graphops.csr import CSR
from graphops.device import gpu_attribute, spare_one_core

from . import cpu, gpu
from .common import lengths, normalize
from .params import SPKernelParams
from .paths import PathLists
from .split import Split, choose_split, split_for_threshold

log = logging.getLogger("graphops")
LAST_SPLIT: dict[str, Split] = {}  # the split of the latest call, for reports
MIN_GAIN = 0.01  # a split is kept only when measured this much faster than GPU only
TRIAL_LIMIT_S = 2.0  # jobs predicted longer than this are split by the model, without trial runs


def run(graphs: CSR, train: CSR | None, params: SPKernelParams) -> Any:
    """Gram matrix as in the cpu/gpu backends, the pairs shared between CPU and GPU."""
    if params.use_histogram:
        log.info("sp_kernel hybrid: delta kernels take the histogram path (one GEMM per tile); all on the GPU")
        return gpu.run(graphs, train, params)
    symmetric = train is None
    other = graphs if symmetric else train
    key = _shape_key(graphs, other, params)
    if params.hybrid_threshold is None and key in _CALIBRATED and _CALIBRATED[key].cpu_pairs == 0:
        LAST_SPLIT["sp_kernel"] = _CALIBRATED[key]  # calibrated before: GPU only, no host work
        return gpu.run(graphs, train, params)
    sides = _Sides(graphs, other, params, symmetric)
    rows, cols = _pairs(graphs.n_graphs, other.n_graphs, symmetric)
    work = sides.work(rows, cols)
    if params.hybrid_threshold is not None:
        split = split_for_threshold(work, params.hybrid_threshold)
    else:
        if key not in _CALIBRATED:
            _CALIBRATED[key] = _calibrate(sides, rows, cols, work)
        split = _CALIBRATED[key]
    LAST_SPLIT["sp_kernel"] = split
    log.info("sp_kernel hybrid: %s", split.describe())
    on_cpu = work < split.threshold
    if not on_cpu.any():  # GPU only: the GPU backend's own tiled path
        return gpu.run(graphs, train, params)
    values = sides.compute(rows, cols, on_cpu)
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
        pa = gpu._paths(ga)  # shortest paths once, on the GPU; the CPU gets copies of the lists
        pb = pa if symmetric else gpu._paths(gb)
        lens = lengths(cp, pa["dist"], pb["dist"], weighted=ga.weights is not None or gb.weights is not None)
        la = gpu._sorted_lists(pa, lens)
        lb = la if symmetric else gpu._sorted_lists(pb, lens)
        self.walk = gpu._Walk(ga, la, gb, lb, lens, params)
        self.host_a = _host_lists(la, lens)
        self.host_b = self.host_a if symmetric else _host_lists(lb, lens)
        self.setup = cpu.fcsp_setup(ga.to("cpu"), gb.to("cpu"), self.host_a, self.host_b, params)

    def work(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return np.diff(self.host_a.ptr)[rows] * np.diff(self.host_b.ptr)[cols]

    def on_cpu(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        out = np.empty(len(rows))
        cpu._fcsp_pairs(rows, cols, out, **self.setup)
        return out

    def compute(self, rows: np.ndarray, cols: np.ndarray, on_cpu: np.ndarray) -> np.ndarray:
        gpu_idx = np.flatnonzero(~on_cpu)
        on_gpu = self.walk(cp.asarray(rows[gpu_idx]), cp.asarray(cols[gpu_idx]))  # queued, runs meanwhile
        values = np.empty(len(rows))
        cpu_idx = np.flatnonzero(on_cpu)
        with spare_one_core():
            values[cpu_idx] = self.on_cpu(rows[cpu_idx], cols[cpu_idx])
        values[gpu_idx] = on_gpu.get()
        return values


def _host_lists(lists: dict, lens: Any) -> PathLists:
    """Host copy of GPU path lists (same order as ``paths.path_lists``: by length, source, destination)."""
    return PathLists(lists["ptr"].get(), lists["src"].get(), lists["dst"].get(), lens[lists["len"]].get())


_CALIBRATED: dict[tuple, Split] = {}  # calibrations of this process, by input shape and params


def _shape_key(ga: CSR, gb: CSR, params: SPKernelParams) -> tuple:
    """What a calibration depends on: the inputs' sizes and the kernel parameters."""
    return (ga.n_graphs, gb.n_graphs, ga.n_vertices, gb.n_vertices, len(ga.indices), len(gb.indices),
            params.model_dump_json(exclude={"hybrid_threshold", "tile"}))


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
    gpu_s = _timed(lambda: sides.walk(r, c).get())
    one = _timed(lambda: sides.walk(r[:1], c[:1]).get())
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
    sides.compute(rows, cols, none)  # warm
    base = min(_timed(lambda: sides.compute(rows, cols, none)) for _ in range(3))
    best, best_s = gpu_only.with_reason(f"no trial split was {100 * MIN_GAIN:.0f}% faster than GPU only "
                                            f"({1e3 * base:.2f} ms)"), base * (1 - MIN_GAIN)
    order = np.sort(work)
    for k in (model.cpu_pairs, model.cpu_pairs // 2):
        if k == 0:
            continue
        trial = split_for_threshold(work, int(order[k - 1]) + 1)
        mask = work < trial.threshold
        took = min(_timed(lambda: sides.compute(rows, cols, mask)) for _ in range(3))
        if took < best_s:
            best_s = took
            best = trial.with_reason(f"trial: {1e3 * took:.2f} ms vs {1e3 * base:.2f} ms GPU only")
    return best


def _cpu_model(sides: _Sides, rows: np.ndarray, cols: np.ndarray, work: np.ndarray,
               light: np.ndarray, half: np.ndarray) -> tuple[float, float]:
    """Per-pair cost and work rate of the CPU, from timings of two samples."""
    t1 = _timed(lambda: sides.on_cpu(rows[light], cols[light]))
    t2 = _timed(lambda: sides.on_cpu(rows[half], cols[half])) if len(half) else t1
    w1, w2 = float(work[light].sum()), float(work[half].sum())
    n1, n2 = len(light), max(len(half), 1)
    if w2 / n2 > w1 / n1 * 1.01 and t2 / n2 > t1 / n1:  # slope and intercept of time per pair
        rate = (w2 / n2 - w1 / n1) / (t2 / n2 - t1 / n1)
        return max(t1 / n1 - (w1 / n1) / rate, 0.0), rate
    return t1 / n1, float("inf")


def _timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start
