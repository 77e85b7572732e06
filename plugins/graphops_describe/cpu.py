"""CPU backend of ``describe``: Numba kernels for the per-vertex scans and union-find."""
from __future__ import annotations

from typing import Any

import numpy as np

from graphops.csr import CSR

from .common import finish, summarize
from .params import DescribeParams
from graphops.jit import njit, prange


def run(csr: CSR, params: DescribeParams) -> dict[str, Any]:
    """Per-graph statistics of a (batched) CSR on the host."""
    assert csr.indptr.dtype == np.int64 and csr.indices.dtype == np.int32
    self_at, multi_at = _row_scan(csr.indptr, csr.indices, csr.directed)
    rowlen = np.diff(csr.indptr)
    if csr.directed:
        deg = rowlen + np.bincount(csr.indices, minlength=csr.n_vertices)
    else:
        deg = rowlen + self_at
    roots = _components(csr.indptr, csr.indices, csr.directed)
    return finish(np, csr, summarize(np, csr, deg, self_at, multi_at, roots))


@njit(parallel=True)
def _row_scan(indptr, indices, directed):
    """Self-loops and repeated entries per row (undirected: counted in the lower endpoint's row)."""
    n = len(indptr) - 1
    self_at = np.zeros(n, np.int64)
    multi_at = np.zeros(n, np.int64)
    for v in prange(n):
        loops = 0
        repeats = 0
        for j in range(indptr[v], indptr[v + 1]):
            c = indices[j]
            if c == v:
                loops += 1
            if j > indptr[v] and c == indices[j - 1] and (directed or c >= v):
                repeats += 1
        self_at[v] = loops
        multi_at[v] = repeats
    return self_at, multi_at


@njit
def _find(parent, v):
    while parent[v] != v:
        parent[v] = parent[parent[v]]
        v = parent[v]
    return v


@njit
def _components(indptr, indices, directed):
    """Root flags of (weakly) connected components by union-find with path halving.

    Union-find is sequential: it is O(E α(V)) and bound by memory latency, and on a
    few cores a parallel label propagation does more work than it saves.
    """
    n = len(indptr) - 1
    parent = np.arange(n)
    for v in range(n):
        for j in range(indptr[v], indptr[v + 1]):
            if not directed and indices[j] > v:
                break  # rows are sorted; the other direction of these edges comes later
            a = _find(parent, v)
            b = _find(parent, indices[j])
            if a != b:
                if a < b:
                    parent[b] = a
                else:
                    parent[a] = b
    roots = np.zeros(n, np.bool_)
    for v in range(n):
        roots[v] = parent[v] == v
    return roots
