"""Choosing the CPU/GPU split of the hybrid backend (pure NumPy, testable without a GPU)."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np


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
