"""Shared by every backend: label/length alphabets, histogram features, normalization, and the
hybrid backend's choice of its CPU/GPU split (pure NumPy, testable without a GPU).

Written for NumPy and CuPy alike (``xp``), so CPU and GPU compute the same numbers.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from graphops.plugin import InputError, distinct

DENSE_KEYS = 1 << 26  # largest key range compacted with a lookup table instead of a sort
TABLE_LIMIT = 4096  # most distinct path lengths for a precomputed length-kernel table
MATRIX_LENGTHS = 64  # most distinct path lengths for the matrix form of the FCSP walk
assert MATRIX_LENGTHS <= TABLE_LIMIT  # so a Gaussian length kernel always has its table there

# Operation counts of the matrix form of the FCSP walk, per graph pair and length (used by the
# CPU's and, compiled in as macros, the GPU's choice of form): CELL_COST steps per cell of the
# na × nb matrices (clearing W and U, the final dot product) and ROW_COST per row or column
# (segment bookkeeping).
CELL_COST = 3.0
ROW_COST = 8.0
# How many matrix steps one walk step is worth, and the fixed cost of one length of the matrix
# form, measured on each side: on the CPU a walk step costs about four vectorized matrix steps;
# on the GPU about one, but each length pays three block barriers and the segment searches,
# about 4096 steps (NCI1, sparse with many lengths, ran 3.4x slower in the matrix form without it).
CPU_WALK_STEP_COST = 4.0
GPU_WALK_STEP_COST = 1.0
GPU_LENGTH_COST = 4096.0


def matrix_form_possible(n_lengths: int, form: str) -> bool:
    """Whether the FCSP walk may take its matrix form (and must, for ``form='matrix'``).

    The matrix form loops over the distinct lengths of each pair, so it pays only with few of
    them (unweighted graphs; weighted ones have about one length per path).
    """
    ok = n_lengths <= MATRIX_LENGTHS
    if form == "matrix" and not ok:
        raise InputError(f"sp_kernel: fcsp_form 'matrix' needs at most {MATRIX_LENGTHS} distinct path lengths "
                         f"(these graphs have {n_lengths}); use fcsp_form 'auto' or 'walk'")
    return ok and form != "walk"


def graph_of_paths(xp: Any, ptr: Any) -> Any:
    """Graph index of every path, from the per-graph path offsets."""
    if xp.__name__ == "numpy":
        return xp.repeat(xp.arange(len(ptr) - 1, dtype=xp.int64), xp.diff(ptr))
    return xp.searchsorted(ptr, xp.arange(int(ptr[-1]), dtype=xp.int64), side="right") - 1


def alphabet(xp: Any, *arrays: Any) -> Any:
    """Sorted distinct values over all arrays (labels or path lengths) of both inputs."""
    parts = [a for a in arrays if a is not None]
    return distinct(xp.concatenate(parts)) if parts else xp.zeros(0)


def lengths(xp: Any, *dists: Any, weighted: bool) -> Any:
    """Distinct finite path lengths over all inputs (hop counts 0..max when unweighted)."""
    finite = [d[xp.isfinite(d)] for d in dists]
    if not weighted:
        top = max((int(f.max()) for f in finite if len(f)), default=0)
        return xp.arange(top + 1, dtype=xp.float64)
    return distinct(xp.concatenate(finite))


def compact(xp: Any, *keys: Any) -> tuple[list[Any], int]:
    """Renumber the keys used by any input to ``0..F-1``; returns the column ids and F."""
    top = max((int(k.max()) + 1 for k in keys if len(k)), default=0)
    if top <= DENSE_KEYS:
        used = xp.zeros(top + 1, dtype=bool)
        for k in keys:
            used[k] = True
        remap = xp.cumsum(used) - 1
        return [remap[k] for k in keys], int(used.sum())
    vocab = distinct(xp.concatenate(keys))
    return [xp.searchsorted(vocab, k) for k in keys], int(len(vocab))


def histograms(xp: Any, graph: Any, cols: Any, n_graphs: int, n_features: int) -> Any:
    """Dense ``n_graphs × n_features`` float64 counts: path p adds 1 at (graph[p], cols[p])."""
    flat = xp.bincount(graph * n_features + cols, minlength=n_graphs * n_features)
    return flat.reshape(n_graphs, n_features).astype(xp.float64)


def negative_cycle_error(negative: Any) -> InputError:
    """The error for graphs whose shortest paths are undefined (``negative``: flag per graph)."""
    bad = [int(g) for g in negative.nonzero()[0][:1]]
    return InputError(f"sp_kernel: graph {bad[0]} has a negative cycle ({int(negative.sum())} graph(s) in "
                      f"all); shortest paths are undefined there. Remove negative weights or that graph")


def node_inputs(xp: Any, g: Any, params: Any) -> tuple[Any, Any, int]:
    """Labels (zeros without a delta node kernel), attributes (n × d, or n × 1 zeros) and d."""
    nk = params.node_kernel
    labels = g.node_labels if nk.delta else xp.zeros(g.n_vertices, xp.int64)
    attrs = g.node_attrs if nk.gaussian else xp.zeros((g.n_vertices, 1))
    return (xp.ascontiguousarray(labels, dtype=xp.int64), xp.ascontiguousarray(attrs, dtype=xp.float64),
            int(attrs.shape[1]) if nk.gaussian else 0)


# The hybrid backend's split: pairs whose work is below a threshold go to the CPU.

@dataclass(frozen=True)
class Split:
    """Pairs with work below ``threshold`` go to the CPU; the model's predicted seconds."""

    threshold: int
    cpu_pairs: int
    gpu_pairs: int
    cpu_work_share: float
    predicted_cpu_s: float
    predicted_gpu_s: float
    reason: str = ""

    def with_reason(self, reason: str) -> "Split":
        return replace(self, reason=reason)

    def describe(self) -> str:
        where = "GPU only" if self.cpu_pairs == 0 else ("CPU only" if self.gpu_pairs == 0 else "split")
        why = f" — {self.reason}" if self.reason else ""
        return (f"T={self.threshold} ({where}): {self.cpu_pairs} pairs ({100 * self.cpu_work_share:.1f}% "
                f"of the work) on the CPU, {self.gpu_pairs} on the GPU; model: "
                f"{self.predicted_cpu_s * 1e3:.1f} ms CPU / {self.predicted_gpu_s * 1e3:.1f} ms GPU{why}")


def choose_split(work: np.ndarray, cpu_rate: float, gpu_rate: float, gpu_overhead: float,
                 cpu_per_pair: float = 0.0) -> Split:
    """The threshold minimizing max(CPU time, GPU time) when the k lightest pairs go to the CPU.

    ``cpu_rate``/``gpu_rate`` are work units per second measured in calibration,
    ``cpu_per_pair`` the CPU's fixed cost per pair and ``gpu_overhead`` the GPU's fixed cost
    per launch; k = 0 (GPU only) is always a candidate.
    """
    w = np.sort(np.asarray(work, dtype=np.float64))
    prefix = np.concatenate([[0.0], np.cumsum(w)])
    cpu_t = prefix / cpu_rate + np.arange(len(prefix)) * cpu_per_pair
    gpu_t = np.where(np.arange(len(prefix)) < len(w), gpu_overhead + (prefix[-1] - prefix) / gpu_rate, 0.0)
    k = int(np.argmin(np.maximum(cpu_t, gpu_t)))
    return split_at(w, k, cpu_t[k], gpu_t[k])


def split_at(sorted_work: np.ndarray, k: int, cpu_s: float = float("nan"), gpu_s: float = float("nan")) -> Split:
    """The split sending the k lightest pairs to the CPU."""
    total = float(sorted_work.sum()) or 1.0
    threshold = 0 if k == 0 else int(sorted_work[k - 1]) + 1
    return Split(threshold, k, len(sorted_work) - k, float(sorted_work[:k].sum()) / total, cpu_s, gpu_s)


def split_for_threshold(work: np.ndarray, threshold: int) -> Split:
    """The split a user-given threshold makes."""
    w = np.sort(np.asarray(work, dtype=np.float64))
    split = split_at(w, int(np.searchsorted(w, threshold, side="left")))
    return Split(threshold, split.cpu_pairs, split.gpu_pairs, split.cpu_work_share, float("nan"), float("nan"))
