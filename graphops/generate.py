"""Synthetic graphs for tests and benchmarks: R-MAT (Graph500 style) and 2-D grids.

Both return an undirected :class:`Graph` on the host with each edge once, no
self-loops and no repeated edges. The generators are deterministic: the same
arguments give the same graph on every machine, whatever the thread count.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .graph import Graph
from .jit import njit, prange
from .work import chunks, holding_interrupts
from .errors import InputError

__all__ = ["rmat", "grid2d", "gnp_set"]

@njit(inline="always")
def _mix(x):
    """splitmix64 finaliser: a well-spread 64-bit hash of ``x``."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(parallel=True)
def _rmat_edges(scale, lo, hi, a, ab, abc, seed, src, dst):
    """Endpoints of R-MAT samples lo..hi-1; edge i's random numbers depend only on (seed, i)."""
    inv = 1.0 / 9007199254740992.0  # 2**-53
    for i in prange(lo, hi):
        state = _mix(np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(i))
        u = 0
        v = 0
        for _ in range(scale):
            state = _mix(state + np.uint64(0x9E3779B97F4A7C15))
            r = float(state >> np.uint64(11)) * inv
            u <<= 1
            v <<= 1
            if r >= abc:
                u |= 1
                v |= 1
            elif r >= ab:
                u |= 1
            elif r >= a:
                v |= 1
        src[i] = u
        dst[i] = v


def _undirected_simple(src: np.ndarray, dst: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each undirected edge once (as ``lo < hi``), self-loops dropped, sorted by (lo, hi)."""
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    keep = lo != hi
    key = np.unique(lo[keep] * np.int64(n) + hi[keep])
    return key // n, key % n


def rmat(scale: int, edge_factor: int = 16, a: float = 0.57, b: float = 0.19, c: float = 0.19,
         seed: int = 42, scramble: bool = True) -> Graph:
    """An R-MAT graph on ``2**scale`` vertices from ``edge_factor * 2**scale`` samples.

    Vertex ids are scrambled by a seeded permutation (as Graph500 does) unless
    ``scramble=False``; self-loops and repeated samples are dropped, so the graph has
    somewhat fewer than ``edge_factor * 2**scale`` undirected edges. Vertices that no
    edge touches are not part of the graph.
    """
    if not 1 <= scale <= 32:
        raise InputError(f"rmat: scale must be in 1..32; got {scale}")
    if edge_factor < 1:
        raise InputError(f"rmat: edge_factor must be at least 1; got {edge_factor}")
    d = 1.0 - a - b - c
    if min(a, b, c, d) < 0:
        raise InputError(f"rmat: a, b, c must be non-negative with a + b + c <= 1; got {a}, {b}, {c}")
    n = 1 << scale
    src, dst = np.empty(edge_factor * n, np.int64), np.empty(edge_factor * n, np.int64)
    with holding_interrupts():  # Ctrl-C between chunks, never inside Numba's compiler
        for lo, hi in chunks(len(src), what=f"R-MAT scale {scale}", first=1 << 20):
            _rmat_edges(scale, lo, hi, a, a + b, a + b + c, seed, src, dst)
    if scramble:
        perm = np.random.default_rng(seed).permutation(n).astype(np.int64)
        src, dst = perm[src], perm[dst]
    lo, hi = _undirected_simple(src, dst, n)
    return Graph.from_edgelist(pd.DataFrame({"src": lo, "dst": hi}))


def grid2d(rows: int, cols: int) -> Graph:
    """The ``rows × cols`` 4-neighbour grid, vertex ``r * cols + c``; every vertex has degree ≤ 4."""
    if rows < 1 or cols < 1:
        raise InputError(f"grid2d: rows and cols must be at least 1; got {rows} × {cols}")
    v = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    right = np.stack([v[:, :-1].ravel(), v[:, 1:].ravel()])
    down = np.stack([v[:-1, :].ravel(), v[1:, :].ravel()])
    src, dst = np.concatenate([right, down], axis=1)
    order = np.lexsort((dst, src))
    nodes = pd.DataFrame({"id": v.ravel()})
    return Graph.from_edgelist(pd.DataFrame({"src": src[order], "dst": dst[order]}), nodes=nodes)


def gnp_set(sizes: dict[int, int], p: float = 0.5, n_labels: int = 4, n_attrs: int = 2, seed: int = 42):
    """A GraphSet of Erdős–Rényi G(n, p) graphs with node labels in ``0..n_labels-1`` and
    ``n_attrs`` uniform node attributes in [0, 1), from one seeded stream (reproducible).

    :param sizes: nodes per graph -> how many such graphs (in that order), e.g. ``{10: 180, 50: 76}``
    """
    from .graphset import GraphSet

    if not 0.0 <= p <= 1.0:
        raise InputError(f"gnp_set: p must be in [0, 1]; got {p}")
    rng = np.random.default_rng(seed)
    counts = [int(n) for n, k in sizes.items() for _ in range(int(k))]
    if not counts or min(counts) < 1:
        raise InputError(f"gnp_set: sizes must map node counts >= 1 to graph counts; got {sizes!r}")
    src, dst, labels, attrs, first = [], [], [], [], 0
    for n in counts:
        u, v = np.nonzero(np.triu(rng.random((n, n)) < p, 1))
        src.append(u + first)
        dst.append(v + first)
        labels.append(rng.integers(0, n_labels, n))
        attrs.append(rng.random((n, n_attrs)))
        first += n
    node_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    edge_ptr = np.concatenate([[0], np.cumsum([len(s) for s in src])]).astype(np.int64)
    return GraphSet(node_ptr=node_ptr, edge_ptr=edge_ptr, src=np.concatenate(src).astype(np.int64),
                    dst=np.concatenate(dst).astype(np.int64), node_labels=np.concatenate(labels).astype(np.int64),
                    node_attrs=np.concatenate(attrs) if n_attrs else None,
                    graph_labels=np.zeros(len(counts), np.int64), name="gnp_set")
