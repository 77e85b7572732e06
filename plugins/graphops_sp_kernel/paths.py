"""All-pairs shortest paths for every graph of a batched CSR, and the shortest-path lists.

Host (Numba) versions; graphs are independent, so the loops run in parallel over graphs.
Unweighted graphs use a BFS from every vertex; weighted ones Floyd–Warshall.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from graphops.plugin import chunks, njit, prange

from .common import negative_cycle_error

INF = np.inf


@dataclass(frozen=True)
class PathLists:
    """Ordered vertex pairs ``(i, j)``, ``i != j``, with finite distance ``d``, per graph.

    ``src``/``dst`` are local vertex numbers; graph g's paths are ``ptr[g]:ptr[g+1]``,
    sorted by distance within each graph.
    """

    ptr: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    dist: np.ndarray


def square_offsets(graph_ptr: np.ndarray) -> np.ndarray:
    sizes = np.diff(graph_ptr)
    out = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes * sizes, out=out[1:])
    return out


@njit(parallel=True)
def _bfs_all(indptr, indices, graph_ptr, sq_ptr, out, g0, g1):
    for g in prange(g0, g1):
        n0 = graph_ptr[g]
        n = graph_ptr[g + 1] - n0
        base = sq_ptr[g]
        queue = np.empty(max(n, 1), np.int64)
        for s in range(n):
            row = base + s * n
            for t in range(n):
                out[row + t] = np.inf
            out[row + s] = 0.0
            head, tail = 0, 1
            queue[0] = s
            while head < tail:
                u = queue[head]
                head += 1
                du = out[row + u] + 1.0
                for e in range(indptr[n0 + u], indptr[n0 + u + 1]):
                    v = indices[e] - n0
                    if out[row + v] == np.inf:
                        out[row + v] = du
                        queue[tail] = v
                        tail += 1


@njit(parallel=True)
def _floyd_warshall(indptr, indices, weights, graph_ptr, sq_ptr, out, negative, g0, g1):
    for g in prange(g0, g1):
        n0 = graph_ptr[g]
        n = graph_ptr[g + 1] - n0
        d = out[sq_ptr[g]:sq_ptr[g] + n * n]
        d[:] = np.inf
        for i in range(n):
            d[i * n + i] = 0.0
            for e in range(indptr[n0 + i], indptr[n0 + i + 1]):
                j = indices[e] - n0
                d[i * n + j] = min(d[i * n + j], weights[e])
        for k in range(n):
            for i in range(n):
                dik = d[i * n + k]
                if dik == np.inf:
                    continue
                for j in range(n):
                    alt = dik + d[k * n + j]
                    if alt < d[i * n + j]:
                        d[i * n + j] = alt
        for i in range(n):
            if d[i * n + i] < 0:
                negative[g] = True


def all_pairs(csr: Any) -> tuple[np.ndarray, np.ndarray]:
    """Distances of every graph, flattened row-major (``n_g × n_g`` blocks), and block offsets;
    in interruptible chunks of graphs of about equal work (n² BFS steps, n³ Floyd–Warshall).
    Kept with the CSR view (``csr.extra``; read only): a training set's distances are computed
    once, not again by every test set scored against it or every Dask part of a Gram matrix."""
    return csr.cached("all_pairs", lambda: _all_pairs(csr))


def _all_pairs(csr: Any) -> tuple[np.ndarray, np.ndarray]:
    graph_ptr, _ = csr.segments()
    sq_ptr = square_offsets(graph_ptr)
    out = np.empty(int(sq_ptr[-1]), np.float64)
    weighted = csr.weights is not None
    sizes = np.diff(graph_ptr).astype(np.float64)
    cost = np.concatenate([[0], np.cumsum(sizes ** (3 if weighted else 2) * (1 if weighted else 4) + 1)])
    negative = np.zeros(len(graph_ptr) - 1, np.bool_)
    for g0, g1 in chunks(len(graph_ptr) - 1, what="shortest paths (cpu)", cost=cost, first=1e8):
        if weighted:
            _floyd_warshall(csr.indptr, csr.indices, csr.weights, graph_ptr, sq_ptr, out, negative, g0, g1)
        else:
            _bfs_all(csr.indptr, csr.indices, graph_ptr, sq_ptr, out, g0, g1)
    if negative.any():
        raise negative_cycle_error(negative)
    return out, sq_ptr


@njit(parallel=True)
def _count_paths(dist, sq_ptr, graph_ptr, counts):
    for g in prange(len(graph_ptr) - 1):
        n = graph_ptr[g + 1] - graph_ptr[g]
        c = 0
        for k in range(n * n):
            if dist[sq_ptr[g] + k] != np.inf and k // n != k % n:
                c += 1
        counts[g] = c


@njit(parallel=True)
def _fill_paths(dist, sq_ptr, graph_ptr, ptr, src, dst, d_out):
    for g in prange(len(graph_ptr) - 1):
        n = graph_ptr[g + 1] - graph_ptr[g]
        p = ptr[g]
        for k in range(n * n):
            i, j = k // n, k % n
            v = dist[sq_ptr[g] + k]
            if v != np.inf and i != j:
                src[p], dst[p], d_out[p] = i, j, v
                p += 1
        order = np.argsort(d_out[ptr[g]:p], kind="mergesort") + ptr[g]
        src[ptr[g]:p] = src[order]
        dst[ptr[g]:p] = dst[order]
        d_out[ptr[g]:p] = d_out[order]


def path_lists(csr: Any) -> PathLists:
    """Shortest-path coordinate lists of every graph of a batched CSR (host arrays)."""
    dist, sq_ptr = all_pairs(csr)
    graph_ptr, _ = csr.segments()
    counts = np.zeros(len(graph_ptr) - 1, np.int64)
    _count_paths(dist, sq_ptr, graph_ptr, counts)
    ptr = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    total = int(ptr[-1])
    src, dst = np.empty(total, np.int32), np.empty(total, np.int32)
    d = np.empty(total, np.float64)
    _fill_paths(dist, sq_ptr, graph_ptr, ptr, src, dst, d)
    return PathLists(ptr, src, dst, d)



@njit(parallel=True)
def _keys_from_distances(dist, sq_ptr, graph_ptr, node_label, n_labels, lens, ptr, keys):
    for g in prange(len(graph_ptr) - 1):
        n0 = graph_ptr[g]
        n = graph_ptr[g + 1] - n0
        p = ptr[g]
        for i in range(n):
            row = sq_ptr[g] + i * n
            for j in range(n):
                d = dist[row + j]
                if i == j or d == np.inf:
                    continue
                lid = np.searchsorted(lens, d)
                if n_labels > 0:
                    lid += (node_label[n0 + i] * n_labels + node_label[n0 + j]) * len(lens)
                keys[p] = lid
                p += 1


def histogram_keys(csr: Any, dist: np.ndarray, sq_ptr: np.ndarray, node_label: np.ndarray | None,
                   n_labels: int, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-path feature keys ``(label_i, label_j, length)`` straight from the distances, and offsets."""
    graph_ptr, _ = csr.segments()
    counts = np.zeros(len(graph_ptr) - 1, np.int64)
    _count_paths(dist, sq_ptr, graph_ptr, counts)
    ptr = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    keys = np.empty(int(ptr[-1]), np.int64)
    labels = node_label if node_label is not None else np.zeros(0, np.int64)
    _keys_from_distances(dist, sq_ptr, graph_ptr, labels, n_labels if node_label is not None else 0,
                         lens, ptr, keys)
    return keys, ptr
