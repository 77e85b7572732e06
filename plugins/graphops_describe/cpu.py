"""CPU backend of ``describe``: Numba kernels for the per-vertex scans and union-find."""
from __future__ import annotations

from typing import Any

import numpy as np

from graphops.plugin import CSR

from .common import finish, summarize
from .params import DescribeParams
from graphops.plugin import chunks, njit, prange


def run(csr: CSR, params: DescribeParams) -> dict[str, Any]:
    """Per-graph statistics of a (batched) CSR on the host, in interruptible chunks of rows."""
    assert csr.indptr.dtype == np.int64 and csr.indices.dtype == np.int32
    n = csr.n_vertices
    self_at, multi_at = np.zeros(n, np.int64), np.zeros(n, np.int64)
    parent = np.arange(n)
    cost = csr.indptr + np.arange(n + 1)  # a row costs its entries, and one step
    for lo, hi in chunks(n, what="describe", cost=cost):
        _row_scan(csr.indptr, csr.indices, csr.directed, lo, hi, self_at, multi_at)
        _link(csr.indptr, csr.indices, csr.directed, lo, hi, parent)
    rowlen = np.diff(csr.indptr)
    if csr.directed:
        deg = rowlen + np.bincount(csr.indices, minlength=n)
    else:
        deg = rowlen + self_at
    roots = _roots(parent)
    return finish(np, csr, summarize(np, csr, deg, self_at, multi_at, roots))


@njit(parallel=True)
def _row_scan(indptr, indices, directed, lo, hi, self_at, multi_at):
    """Self-loops and repeated entries of rows lo..hi-1 (undirected: counted in the lower
    endpoint's row)."""
    for v in prange(lo, hi):
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


@njit
def _find(parent, v):
    while parent[v] != v:
        parent[v] = parent[parent[v]]
        v = parent[v]
    return v


@njit
def _link(indptr, indices, directed, lo, hi, parent):
    """Union-find with path halving over the edges of rows lo..hi-1 ((weakly) connected components).

    Union-find is sequential: it is O(E α(V)) and bound by memory latency, and on a
    few cores a parallel label propagation does more work than it saves.
    """
    for v in range(lo, hi):
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


@njit
def _roots(parent):
    """Root flags of the union-find forest: one per component."""
    roots = np.zeros(len(parent), np.bool_)
    for v in range(len(parent)):
        roots[v] = parent[v] == v
    return roots
