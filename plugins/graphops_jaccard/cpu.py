"""CPU backend of ``jaccard``: Numba threads over pairs, merge or binary search per pair.

Per pair the shorter neighbour list is intersected with the longer one either by a
two-pointer merge (d_u + d_v steps) or by binary searches of its entries in the
longer list, each starting where the last one ended (d_min · log d_max steps),
whichever is cheaper for that pair's sizes.
"""
from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from graphops.plugin import CSR, PairIndex, chunks, njit, prange

from .common import Adjacency, Mode, adjacency, pair_costs, result

WEIGHTED, SHARED = int(Mode.WEIGHTED), int(Mode.SHARED)  # plain ints: constants to Numba
from .params import JaccardParams

# First chunk's work (Σ d_u + d_v + 1) before any timing: about 0.1 s on one core.
FIRST_CHUNK_WORK = 1e8


def run(csr: CSR, pairs: PairIndex, params: JaccardParams) -> dict[str, Any]:
    adj = adjacency(csr, params.symmetrize, params.use_weight, row_sums)
    return result(pairs, coefficients(adj, pairs.first, pairs.second))


def coefficients(adj: Adjacency, first: np.ndarray, second: np.ndarray,
                 select: np.ndarray | None = None, shared: bool = False) -> np.ndarray:
    """J of every pair, or of the pairs at positions ``select`` (then ``len(select)`` values),
    in interruptible chunks of about equal work; with ``shared``, the counts |N(u) ∩ N(v)|
    instead (as float64, exact)."""
    sel = None if select is None else np.ascontiguousarray(select, dtype=np.int64)
    f, s = (first, second) if sel is None else (first[sel], second[sel])
    out = np.empty(len(f), np.float64)
    for lo, hi in chunks(len(f), what="jaccard (cpu)", cost=pair_costs(adj, f, s), first=FIRST_CHUNK_WORK):
        score(adj, f[lo:hi], s[lo:hi], out[lo:hi], shared)
    return out


def score(adj: Adjacency, first: np.ndarray, second: np.ndarray, out: np.ndarray, shared: bool = False) -> None:
    """Write J of each pair into ``out`` (one parallel kernel call: callers chunk the pairs); with
    ``shared``, the shared counts (:class:`Mode`)."""
    weighted = adj.weights is not None
    mode = int(Mode.of(weighted, shared))
    w = adj.weights if weighted else np.zeros(1)
    wdeg = adj.wdeg if weighted else np.zeros(1)
    if len(out):
        lanes = max(1, min(len(out), 8 * numba.get_num_threads()))
        _pairs(adj.indptr, adj.indices, w, wdeg, first, second, mode, out, lanes)


@njit(inline="always")
def _lower_bound(indices, lo, hi, x):
    while lo < hi:
        mid = (lo + hi) >> 1
        if indices[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit
def jaccard_pair(indptr, indices, w, wdeg, u, v, mode):
    """J(u, v) on the set adjacency (``Mode.SETS``; ``WEIGHTED``), or the shared count (``SHARED``); the same
    visiting order as the GPU's per-thread path."""
    weighted = mode == WEIGHTED
    a0, a1, b0, b1 = indptr[u], indptr[u + 1], indptr[v], indptr[v + 1]
    na, nb = a1 - a0, b1 - b0
    if na > nb:
        a0, a1, b0, b1 = b0, b1, a0, a1
        na, nb = nb, na
    shared = 0
    wmin = 0.0
    if na > 0:
        if na * math.log2(nb) < na + nb:
            lo = b0
            for k in range(a0, a1):
                x = indices[k]
                lo = _lower_bound(indices, lo, b1, x)
                if lo == b1:
                    break
                if indices[lo] == x:
                    shared += 1
                    if weighted:
                        wmin += min(w[k], w[lo])
                    lo += 1
        else:
            i, j = a0, b0
            while i < a1 and j < b1:
                x, y = indices[i], indices[j]
                if x == y:
                    shared += 1
                    if weighted:
                        wmin += min(w[i], w[j])
                    i += 1
                    j += 1
                elif x < y:
                    i += 1
                else:
                    j += 1
    if mode == SHARED:
        return float(shared)
    if weighted:
        union = wdeg[u] + wdeg[v] - wmin
        return 0.0 if union <= 0.0 else wmin / union
    union = na + nb - shared
    return 0.0 if union == 0 else shared / union


@njit(parallel=True)
def _pairs(indptr, indices, w, wdeg, first, second, mode, out, lanes):
    """Pairs dealt round-robin to ``lanes`` (a few per thread): a chunk's hub pairs spread over all
    threads instead of landing in one thread's contiguous block."""
    n = len(out)
    for lane in prange(lanes):
        for t in range(lane, n, lanes):
            out[t] = jaccard_pair(indptr, indices, w, wdeg, first[t], second[t], mode)


@njit
def _row_sums(indptr, w, out):
    for r in range(len(indptr) - 1):
        s = 0.0
        for k in range(indptr[r], indptr[r + 1]):
            s += w[k]
        out[r] = s


def row_sums(indptr: np.ndarray, w: np.ndarray) -> np.ndarray:
    out = np.empty(len(indptr) - 1, np.float64)
    _row_sums(indptr, w, out)
    return out
