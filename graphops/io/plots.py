"""Pictures where people would rather look than read (matplotlib, the optional ``plot`` extra).

* :func:`bench_picture`: ``graphops bench --plot``: the time of every backend and peer per
  case, log scale, with the memory floor.
* :func:`gram_picture`: a Gram matrix as a heatmap with rows and columns ordered by class label
  (the ``graph_labels`` of the GraphSets); ``sp_kernel`` and ``mg_kernel`` declare it as their
  picture.
* :func:`histogram`: a distribution (a plugin's picture: Jaccard coefficients, degrees).

A pipeline step with ``plot: true`` writes its algorithm's picture next to its output
(``gram.npy`` -> ``gram.png``); :func:`picture_path` names it. Pictures are written atomically.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from graphops.base.device import Device, device_of
from graphops.errors import InputError
from graphops.io.outputs import atomic_path

__all__ = ["pyplot", "picture_path", "save", "histogram", "gram_picture", "bench_picture", "plot_problem"]


def plot_problem() -> str | None:
    """Why pictures cannot be drawn here (matplotlib missing), or ``None``."""
    try:
        __import__("matplotlib")
    except ImportError:
        return "pictures need matplotlib: pip install 'graphops[plot]'"
    return None


def pyplot() -> Any:
    """matplotlib's pyplot on the file-only Agg backend (no display needed)."""
    problem = plot_problem()
    if problem:
        raise InputError(problem)
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def picture_path(output: str | os.PathLike) -> Path:
    """The picture written beside a step's output: the same name ending in ``.png``."""
    return Path(output).with_suffix(".png")


def save(fig: Any, path: str | os.PathLike) -> Path:
    """Write a figure as PNG atomically and close it."""
    plt = pyplot()
    path = Path(path)
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    finally:
        plt.close(fig)
    return path


def _host(a: Any) -> np.ndarray:
    return a.get() if device_of(a) is Device.GPU else np.asarray(a)


def histogram(values: Any, path: str | os.PathLike, title: str, xlabel: str, log_y: bool = False,
              bins: int = 50) -> Path:
    plt = pyplot()
    v = _host(values).astype(np.float64)
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.hist(v[np.isfinite(v)], bins=bins, color="#3b6ea8")
    ax.set(title=title, xlabel=xlabel, ylabel="count")
    if log_y:
        ax.set_yscale("log")
    return save(fig, path)


def _labels(gs: Any, n: int) -> np.ndarray:
    labels = getattr(gs, "graph_labels", None)
    return np.zeros(n) if labels is None else _host(labels).reshape(-1)[:n]


def gram_picture(result: Any, inputs: dict[str, Any], params: Any, path: str | os.PathLike) -> Path:
    """A Gram matrix (rows: the first input's graphs; columns: the second input's, or the
    first's) as a heatmap ordered by class label, with lines between the classes."""
    K = _host(result[0] if isinstance(result, tuple) else result)
    if K.ndim != 2:
        raise InputError(f"a Gram-matrix picture needs a matrix; this result has shape {K.shape}")
    sets = list(inputs.values())
    rows = _labels(sets[0], K.shape[0])
    cols = _labels(sets[1], K.shape[1]) if len(sets) > 1 and sets[1] is not None else rows
    r, c = np.argsort(rows, kind="stable"), np.argsort(cols, kind="stable")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.6, 5))
    image = ax.imshow(K[np.ix_(r, c)], cmap="viridis", interpolation="nearest")
    fig.colorbar(image, ax=ax, shrink=0.8)
    for edges, line in ((np.flatnonzero(np.diff(rows[r])), ax.axhline), (np.flatnonzero(np.diff(cols[c])), ax.axvline)):
        for e in edges:
            line(e + 0.5, color="white", linewidth=0.8)
    names = [getattr(s, "name", "") for s in sets if s is not None]
    ax.set(title=f"Gram matrix{' of ' + ' x '.join(names) if names else ''}, by class label",
           xlabel="graph (by class)", ylabel="graph (by class)")
    return save(fig, path)


def bench_picture(rows: Sequence[Any], path: str | os.PathLike, title: str = "graphops bench") -> Path:
    """Median time of every timed row (``graphops.cli.bench.BenchRow``), one panel per case, log
    scale; the memory floor of each row as a tick where the bench knows it."""
    timed = [r for r in rows if r.median]
    if not timed:
        raise InputError("no timed rows to draw: every step failed or was skipped")
    cases = list(dict.fromkeys(r.case for r in timed))
    plt = pyplot()
    heights = [max(1, sum(r.case == c for r in timed)) for c in cases]
    fig, axes = plt.subplots(len(cases), 1, figsize=(8, 0.45 * sum(heights) + 1.0 * len(cases)), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax, case in zip(axes[:, 0], cases):
        mine = [r for r in timed if r.case == case]
        y = np.arange(len(mine))
        ms = [r.median * 1e3 for r in mine]
        ax.barh(y, ms, color=["#c0504d" if r.peer else "#3b6ea8" for r in mine])
        floors = [(k, r.floor * 1e3) for k, r in enumerate(mine) if r.floor]
        if floors:
            ax.plot([f for _, f in floors], [k for k, _ in floors], "k|", markersize=14, label="memory floor")
            ax.legend(loc="lower right", fontsize=7)
        ax.set_yticks(y, [f"{r.backend} ({r.step})" for r in mine], fontsize=7)
        ax.set_xscale("log")
        ax.set_title(case if len(case) < 90 else case[:87] + "...", fontsize=8)
        ax.set_xlabel("median ms (log scale; red: peers)", fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return save(fig, path)
