"""CPU backend of ``jaccard``: Numba threads over pairs, merge or binary search per pair.

Per pair the shorter neighbour list is intersected with the longer one either by a
two-pointer merge (d_u + d_v steps) or by binary searches of its entries in the
longer list, each starting where the last one ended (d_min · log d_max steps),
whichever is cheaper for that pair's sizes.
"""
from __future__ import annotations

import sys
from typing import Any

import numba
import numpy as np

from graphops.plugin import CSR, PairIndex, chunks, njit, prange

from . import measures
from .common import ACC_MIN, ACC_NONE, JACCARD, Adjacency, Mode, adjacency, pair_costs, result
from .measures import finish, finish_all, intersect, two_hop  # noqa: F401 - two_hop: the engine's, for run_measure
from .params import JaccardParams, SimilarityParams

SETS, WEIGHTED, SHARED = int(Mode.SETS), int(Mode.WEIGHTED), int(Mode.SHARED)  # plain ints: constants to Numba

# First chunk's work (Σ d_u + d_v + 1) before any timing: about 0.1 s on one core.
FIRST_CHUNK_WORK = 1e8


def run(csr: CSR, pairs: PairIndex, params: JaccardParams) -> dict[str, Any]:
    if not params.default_pairs():
        return run_measure(csr, pairs, params)
    adj = adjacency(csr, params.symmetrize, params.use_weight, row_sums)
    return result(pairs, coefficients(adj, pairs.first, pairs.second))


def run_measure(csr: CSR, pairs: PairIndex, params: SimilarityParams) -> dict[str, Any]:
    """Any measure of the family (``params.measure``) on the pairs it names (:mod:`.measures`)."""
    return measures.run_measure(csr, pairs, params, sys.modules[__name__])


def pair_scores(adj: Adjacency, t: measures.Tables, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """A family member's score of every given pair: the kernels' raw mode, then its formula."""
    out = coefficients(adj, first, second, mode=Mode(t.acc), aux=t.aux)
    finish_all(adj.indptr, first, second, t.size, out, t.formula, t.weighted, out)
    return out


def coefficients(adj: Adjacency, first: np.ndarray, second: np.ndarray,
                 select: np.ndarray | None = None, mode: Mode | None = None, aux: np.ndarray | None = None
                 ) -> np.ndarray:
    """J of every pair, or of the pairs at positions ``select`` (then ``len(select)`` values),
    in interruptible chunks of about equal work; with ``mode``, that mode's value instead (the
    shared counts as float64, exact; a sum of the family, ``aux`` g(x) for ``Mode.AUX_SUM``)."""
    sel = None if select is None else np.ascontiguousarray(select, dtype=np.int64)
    f, s = (first, second) if sel is None else (first[sel], second[sel])
    out = np.empty(len(f), np.float64)
    for lo, hi in chunks(len(f), what="jaccard (cpu)", cost=pair_costs(adj, f, s), first=FIRST_CHUNK_WORK):
        score(adj, f[lo:hi], s[lo:hi], out[lo:hi], mode, aux)
    return out


def score(adj: Adjacency, first: np.ndarray, second: np.ndarray, out: np.ndarray, mode: Mode | None = None,
          aux: np.ndarray | None = None) -> None:
    """Write J of each pair into ``out`` (one parallel kernel call: callers chunk the pairs); with
    ``mode``, that mode's value (:class:`Mode`)."""
    weighted = adj.weights is not None
    mode = int(Mode.of(weighted) if mode is None else mode)
    w = adj.weights if weighted else np.zeros(1)
    wdeg = adj.wdeg if weighted and adj.wdeg is not None else np.zeros(1)
    if len(out):
        lanes = max(1, min(len(out), 8 * numba.get_num_threads()))
        _pairs(adj.indptr, adj.indices, w, wdeg, np.zeros(1) if aux is None else aux, first, second, mode, out, lanes)


@njit
def pair_value(indptr, indices, w, wdeg, aux, u, v, mode):
    """The mode's value for the pair (u, v) (:class:`Mode`): J of the set adjacency (``SETS``,
    ``WEIGHTED``), or the raw count or sum a family member is finished from; the family's
    intersection (:func:`.measures.intersect`, the GPU's per-thread visiting order)."""
    acc_kind = ACC_NONE if mode == SETS else ACC_MIN if mode == WEIGHTED else mode
    shared, acc = intersect(indptr, indices, w, aux, u, v, acc_kind)
    if mode == SHARED:
        return float(shared)
    if mode > SHARED:
        return acc
    weighted = mode == WEIGHTED  # (wdeg is a one-entry stand-in otherwise: never read past it)
    return finish(JACCARD, weighted, shared, acc, indptr[u + 1] - indptr[u], indptr[v + 1] - indptr[v],
                  wdeg[u] if weighted else 0.0, wdeg[v] if weighted else 0.0)


@njit(parallel=True)
def _pairs(indptr, indices, w, wdeg, aux, first, second, mode, out, lanes):
    """Pairs dealt round-robin to ``lanes`` (a few per thread): a chunk's hub pairs spread over all
    threads instead of landing in one thread's contiguous block."""
    n = len(out)
    for lane in prange(lanes):
        for t in range(lane, n, lanes):
            out[t] = pair_value(indptr, indices, w, wdeg, aux, first[t], second[t], mode)


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
