"""CPU backend of ``jaccard``: Numba threads over pairs, merge or binary search per pair.

Per pair the shorter neighbour list is intersected with the longer one either by a
two-pointer merge (d_u + d_v steps) or by binary searches of its entries in the
longer list, each starting where the last one ended (d_min · log d_max steps),
whichever is cheaper for that pair's sizes.
"""
from __future__ import annotations

from typing import Any

import numba
import numpy as np

from graphops.plugin import CSR, PairIndex, chunks, njit, prange

from .common import ACC_MIN, ACC_NONE, JACCARD, MEASURES, Adjacency, Mode, adjacency, pair_costs, result
from .measures import finish, intersect, pair_scores, two_hop
from .params import (AdamicAdarParams, CosineParams, JaccardParams, OverlapParams, ResourceAllocationParams,
                     SimilarityParams, SorensenParams)

WEIGHTED, SHARED = int(Mode.WEIGHTED), int(Mode.SHARED)  # plain ints: constants to Numba

# First chunk's work (Σ d_u + d_v + 1) before any timing: about 0.1 s on one core.
FIRST_CHUNK_WORK = 1e8


def run(csr: CSR, pairs: PairIndex, params: JaccardParams) -> dict[str, Any]:
    if not params.default_pairs():
        return run_measure(csr, pairs, params)
    adj = adjacency(csr, params.symmetrize, params.use_weight, row_sums)
    return result(pairs, coefficients(adj, pairs.first, pairs.second))


def run_measure(csr: CSR, pairs: PairIndex, params: SimilarityParams) -> dict[str, Any]:
    """Any measure of the family (``params.measure``) on the pairs it names: the given pairs or
    edges, or the two-hop pairs; the top k of them when asked (:mod:`.measures`)."""
    measure = MEASURES[params.measure]
    adj = adjacency(csr, params.symmetrize, params.use_weight and measure.weights, row_sums)
    if params.candidates == "two_hop":
        first, second, score = two_hop(adj, measure, params._vertex_index, params.top_k)
    else:
        first, second = pairs.first, pairs.second
        score = pair_scores(adj, measure, first, second)
        if params.top_k is not None:
            order = np.lexsort((second, first, -score))[:params.top_k]
            first, second, score = first[order], second[order], score[order]
    return {"first": first, "second": second, measure.column: score}


def run_sorensen(csr: CSR, pairs: PairIndex, params: SorensenParams) -> dict[str, Any]:
    return run_measure(csr, pairs, params)


def run_overlap(csr: CSR, pairs: PairIndex, params: OverlapParams) -> dict[str, Any]:
    return run_measure(csr, pairs, params)


def run_cosine(csr: CSR, pairs: PairIndex, params: CosineParams) -> dict[str, Any]:
    return run_measure(csr, pairs, params)


def run_adamic_adar(csr: CSR, pairs: PairIndex, params: AdamicAdarParams) -> dict[str, Any]:
    return run_measure(csr, pairs, params)


def run_resource_allocation(csr: CSR, pairs: PairIndex, params: ResourceAllocationParams) -> dict[str, Any]:
    return run_measure(csr, pairs, params)


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


@njit
def jaccard_pair(indptr, indices, w, wdeg, u, v, mode):
    """J(u, v) on the set adjacency (``Mode.SETS``; ``WEIGHTED``), or the shared count (``SHARED``):
    the family's intersection (:func:`.measures.intersect`, the GPU's per-thread visiting order)."""
    weighted = mode == WEIGHTED
    shared, wmin = intersect(indptr, indices, w, w, u, v, ACC_MIN if weighted else ACC_NONE)
    if mode == SHARED:
        return float(shared)
    return finish(JACCARD, weighted, shared, wmin, indptr[u + 1] - indptr[u], indptr[v + 1] - indptr[v],
                  wdeg[u], wdeg[v])


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
