"""The similarity family on one intersection engine (CPU): which pairs, and what a pair's score is.

A measure is a small function of what intersecting two neighbour sets yields: the shared count
|N(u) ∩ N(v)|, and one sum over the shared neighbours w (:data:`ACC_MIN` Σ min(w_uw, w_vw),
:data:`ACC_PROD` Σ w_uw w_vw, or :data:`ACC_AUX` Σ g(w) of a per-vertex value g), together with
each vertex's degree and one per-vertex size (a weight sum, or a weight norm):

* jaccard |∩| / |∪|; weighted Σ min / (W_u + W_v − Σ min) (W: the row's weight sum);
* sorensen 2 |∩| / (d_u + d_v); weighted 2 Σ min / (W_u + W_v);
* overlap |∩| / min(d_u, d_v); weighted Σ min / min(W_u, W_v);
* cosine (the Salton index) |∩| / √(d_u d_v); weighted Σ w_uw w_vw / (‖w_u‖ ‖w_v‖), the norms over
  each vertex's whole neighbourhood;
* adamic_adar Σ 1 / log d(w), resource_allocation Σ 1 / d(w) over the common neighbours w other
  than u and v, d(w) networkx's degree (a self-loop counted twice), as networkx defines them (a
  common neighbour of degree 1, possible only in a pair (u, u), adds 0 to Adamic–Adar where
  networkx divides by log 1 = 0).

A score whose denominator is 0 is 0. The same loops serve given pairs (:func:`pair_scores`, a
merge or binary searches per pair, as ``jaccard``'s CPU kernel) and the pairs that share a
neighbour (:func:`two_hop`: for each first vertex u, every wedge u–w–v adds to v's count and sum,
so the intersection comes with the enumeration).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from graphops.plugin import chunks, device_of, njit, prange

from .common import ACC_AUX, ACC_MIN, ACC_PROD, COSINE, JACCARD, OVERLAP, SORENSEN, SUM, Adjacency, Measure


@dataclass(frozen=True)
class Tables:
    """The per-vertex arrays a measure's kernels read, on the adjacency's device: weights per entry
    (or a dummy), each vertex's size (weight sum or norm, or a dummy) and g(w) (or a dummy)."""

    weights: Any
    size: Any
    aux: Any
    acc: int       # the raw mode (common.Mode) the kernels compute
    formula: int
    weighted: bool


def tables(adj: Adjacency, measure: Measure, row_sums: Any) -> Tables:
    """``row_sums(indptr, values)``: the backend's sum of each row in row order (the norms of
    weighted cosine are the roots of the sums of squares, the same on every backend)."""
    xp = adj.xp
    weighted = adj.weights is not None and measure.weights
    dummy = xp.zeros(1)
    w = adj.weights if weighted else dummy
    size = dummy
    if weighted:
        size = xp.sqrt(row_sums(adj.indptr, w * w)) if measure.formula == COSINE else adj.wdeg
    aux = dummy
    if measure.aux is not None:
        aux = aux_values(adj, measure.aux == "inv_log")
    return Tables(w, size, aux, measure.accumulator(weighted), measure.formula, weighted)


def aux_values(adj: Adjacency, inv_log: bool) -> Any:
    """g(w) per vertex on the adjacency's device: 1 / log d(w) or 1 / d(w), d networkx's degree (a
    self-loop counts twice); 0 where d = 0, and for Adamic–Adar where d = 1 (a vertex of one neighbour u
    is a common neighbour only of the pair (u, u), where networkx divides by log 1 = 0). The
    logarithms are taken on the host, so every backend adds the same values."""
    from graphops.plugin import Device, device_of, to_device

    xp, n = adj.xp, adj.n_vertices
    deg = adj.degrees()
    rows = xp.repeat(xp.arange(n, dtype=xp.int64), deg)
    nx_degree = deg + xp.bincount(rows[adj.indices == rows], minlength=n)[:n] if n else deg
    values = _aux(to_device(nx_degree, Device.CPU).astype(np.int64), inv_log)
    return values if xp is np else to_device(values, device_of(adj.indptr))


@njit
def _aux(nx_degree, inv_log):
    out = np.zeros(len(nx_degree), np.float64)
    for r in range(len(nx_degree)):
        d = nx_degree[r]
        if inv_log and d > 1:
            out[r] = 1.0 / math.log(d)
        elif not inv_log and d > 0:
            out[r] = 1.0 / d
    return out


@njit(inline="always")
def _lower_bound(indices, lo, hi, x):
    while lo < hi:
        mid = (lo + hi) >> 1
        if indices[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(inline="always")
def _add(acc_kind, acc, w, aux, i, j, x):
    """The sum's term for the shared neighbour x, met at entry i of one row and j of the other."""
    if acc_kind == ACC_MIN:
        return acc + min(w[i], w[j])
    if acc_kind == ACC_PROD:
        return acc + w[i] * w[j]
    if acc_kind == ACC_AUX:
        return acc + aux[x]
    return acc


@njit
def intersect(indptr, indices, w, aux, u, v, acc_kind):
    """(|N(u) ∩ N(v)|, the sum over the shared neighbours) of the set adjacency: the shorter row
    against the longer by a merge or by binary searches (each from where the last ended), whichever
    costs less, in ascending neighbour order either way (``jaccard``'s CPU and GPU thread path visit
    them so). For ``ACC_AUX`` (networkx's measures) u and v themselves are not common neighbours."""
    a0, a1, b0, b1 = indptr[u], indptr[u + 1], indptr[v], indptr[v + 1]
    na, nb = a1 - a0, b1 - b0
    if na > nb:
        a0, a1, b0, b1 = b0, b1, a0, a1
        na, nb = nb, na
    shared = 0
    acc = 0.0
    if na > 0:
        if na * math.log2(nb) < na + nb:
            lo = b0
            for k in range(a0, a1):
                x = indices[k]
                lo = _lower_bound(indices, lo, b1, x)
                if lo == b1:
                    break
                if indices[lo] == x:
                    if not (acc_kind == ACC_AUX and (x == u or x == v)):
                        shared += 1
                        acc = _add(acc_kind, acc, w, aux, k, lo, x)
                    lo += 1
        else:
            i, j = a0, b0
            while i < a1 and j < b1:
                x, y = indices[i], indices[j]
                if x == y:
                    if not (acc_kind == ACC_AUX and (x == u or x == v)):
                        shared += 1
                        acc = _add(acc_kind, acc, w, aux, i, j, x)
                    i += 1
                    j += 1
                elif x < y:
                    i += 1
                else:
                    j += 1
    return shared, acc


@njit(inline="always")
def finish(formula, weighted, shared, acc, du, dv, su, sv):
    """A measure's score from the intersection (``shared``, ``acc``), the degrees and the sizes."""
    if formula == SUM:
        return acc
    if weighted:
        a, x, y = acc, su, sv
    else:
        a, x, y = float(shared), float(du), float(dv)
    if formula == JACCARD:
        if weighted:
            union = x + y - a
            return 0.0 if union <= 0.0 else a / union
        union = du + dv - shared
        return 0.0 if union == 0 else shared / union
    if formula == SORENSEN:
        s = x + y
        return 0.0 if s <= 0.0 else 2.0 * a / s
    if formula == OVERLAP:
        m = min(x, y)
        return 0.0 if m <= 0.0 else a / m
    den = x * y if weighted else math.sqrt(x * y)  # cosine: sizes are norms weighted, degrees else
    return 0.0 if den <= 0.0 else a / den


@njit(parallel=True)
def finish_all(indptr, first, second, size, raw, formula, weighted, out):
    """Each pair's score from the raw count or sum the kernels gave (in place when out is raw)."""
    for i in prange(len(out)):
        u, v = first[i], second[i]
        r = raw[i]
        su = size[u] if weighted else 0.0
        sv = size[v] if weighted else 0.0
        out[i] = finish(formula, weighted, int(r), r, indptr[u + 1] - indptr[u], indptr[v + 1] - indptr[v], su, sv)


# ---- two-hop candidates ---------------------------------------------------------------------

@njit(inline="always")
def _walk(indptr, indices, w, aux, u, upper, acc_kind, mark, cnt, acc, seen):
    """Every v != u sharing a neighbour with u (with ``upper``, only v > u): counts and sums in
    cnt/acc, the vertices met in ``seen`` (first-met order); returns how many."""
    m = 0
    for k in range(indptr[u], indptr[u + 1]):
        x = indices[k]
        b0, b1 = indptr[x], indptr[x + 1]
        if upper:
            b0 = _lower_bound(indices, b0, b1, u + 1)
        for j in range(b0, b1):
            v = indices[j]
            if v == u:
                continue
            if acc_kind == ACC_AUX and (x == u or x == v):
                continue
            if mark[v] != u:
                mark[v] = u
                cnt[v] = 0
                acc[v] = 0.0
                seen[m] = v
                m += 1
            cnt[v] += 1
            acc[v] = _add(acc_kind, acc[v], w, aux, k, j, x)
    return m


@njit(inline="always")
def _beats(s, u, v, tau, tu, tv):
    """Whether the pair (u, v) of score s ranks above the bar (score tau, then the pair (tu, tv))."""
    return s > tau or (s == tau and (u < tu or (u == tu and v < tv)))


@njit(parallel=True)
def _two_hop(indptr, indices, w, size, aux, us, upper, acc_kind, formula, weighted, lanes, fill, counts, offsets,
             first, second, score, tau, tu, tv):
    """Each first vertex's two-hop pairs that beat the bar (``tau``, ``tu``, ``tv``; -inf: all):
    counted into ``counts`` (``fill`` False), or written at ``offsets`` with their scores, second
    vertex ascending (``fill`` True). Per lane of threads a mark, count, sum and list array of the
    vertex count, reused over its first vertices."""
    n = len(indptr) - 1
    every = tau == -np.inf
    for lane in prange(lanes):
        mark = np.full(n, -1, np.int64)
        cnt = np.zeros(n, np.int32)
        acc = np.zeros(n, np.float64)
        seen = np.empty(n, np.int32)
        for t in range(lane, len(us), lanes):
            u = us[t]
            m = _walk(indptr, indices, w, aux, u, upper, acc_kind, mark, cnt, acc, seen)
            du = indptr[u + 1] - indptr[u]
            su = size[u] if weighted else 0.0  # (size is a one-entry stand-in otherwise: never read past it)
            if not fill:
                c = m
                if not every:
                    c = 0
                    for q in range(m):
                        v = seen[q]
                        sc = finish(formula, weighted, cnt[v], acc[v], du, indptr[v + 1] - indptr[v], su,
                                    size[v] if weighted else 0.0)
                        c += _beats(sc, u, v, tau, tu, tv)
                counts[t] = c
                continue
            vs = np.sort(seen[:m])
            o = offsets[t]
            for q in range(m):
                v = vs[q]
                sc = finish(formula, weighted, cnt[v], acc[v], du, indptr[v + 1] - indptr[v], su,
                            size[v] if weighted else 0.0)
                if every or _beats(sc, u, v, tau, tu, tv):
                    first[o] = u
                    second[o] = v
                    score[o] = sc
                    o += 1


# Wedges a chunk of first vertices walks (twice: counting, then filling) before any timing; with
# top_k, the first chunk's pairs are all kept and sorted, so it is smaller.
FIRST_CHUNK_WEDGES = 5e7
TOP_K_FIRST_WEDGES = 1e6


def two_hop(adj: Adjacency, measure: Measure, t: Tables, vertices: np.ndarray | None = None,
            top_k: int | None = None, upper: bool | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first, second, score) of the pairs that share a neighbour, u != v.

    Without ``top_k``: every ordered pair (u, v) with u in ``vertices`` (all when None), both
    orders when both are, sorted by u and then v (internal indices). With ``top_k``: the k
    highest scores over the unordered pairs (u < v) when ``vertices`` is None, else over the
    pairs (u, v) with u in ``vertices``; ties broken by (u, v) ascending; sorted by score
    descending. ``upper``: whether only pairs u < v are walked (default: with ``top_k`` and no
    ``vertices``; a cluster's part passes it with its share of the vertices). Memory: the output
    (or k rows plus one chunk's pairs), and per thread lane four arrays of the vertex count."""
    us = np.arange(adj.n_vertices, dtype=np.int64) if vertices is None else np.asarray(vertices, np.int64)
    upper = (top_k is not None and vertices is None) if upper is None else upper
    lanes_max = 4 * numba.get_num_threads()
    work = adj.wedges(us)
    cost = np.concatenate([[0], np.cumsum(work + 1)])
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    best = None
    first_chunk = FIRST_CHUNK_WEDGES if top_k is None else min(FIRST_CHUNK_WEDGES, TOP_K_FIRST_WEDGES)
    for lo, hi in chunks(len(us), what=f"{measure.name} two-hop (cpu)", cost=cost, first=first_chunk):
        if hi <= lo:
            continue
        part = us[lo:hi]
        lanes = max(1, min(len(part), lanes_max))
        counts = np.empty(len(part), np.int64)
        offsets = np.zeros(len(part) + 1, np.int64)
        walk = (adj.indptr, adj.indices, t.weights, t.size, t.aux, part, upper, t.acc, t.formula, t.weighted, lanes)
        none_i, none_f = np.empty(0, np.int64), np.empty(0, np.float64)
        # top_k, once k pairs are kept: only the pairs beating the k-th so far are listed (the sums
        # are added in one order on the CPU, so both passes see the same scores)
        bar = (-np.inf, 0, 0) if best is None or len(best[0]) < top_k else (
            float(best[2][-1]), int(best[0][-1]), int(best[1][-1]))
        _two_hop(*walk, False, counts, offsets, none_i, none_i, none_f, *bar)
        np.cumsum(counts, out=offsets[1:])
        total = int(offsets[-1])
        f, s = np.empty(total, np.int64), np.empty(total, np.int64)
        sc = np.empty(total, np.float64)
        _two_hop(*walk, True, counts, offsets, f, s, sc, *bar)
        if top_k is None:
            parts.append((f, s, sc))
        else:
            best = _keep_best(best, (f, s, sc), top_k)
    if top_k is not None:
        if best is None:
            return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64)
        return best
    if not parts:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64)
    f, s, sc = (np.concatenate(c) for c in zip(*parts))
    if vertices is not None:  # the first vertices as given: put the rows in (u, v) order
        order = np.lexsort((s, f))
        f, s, sc = f[order], s[order], sc[order]
    return f, s, sc


def _keep_best(best: Any, new: tuple, k: int) -> tuple:
    """The k rows of highest score of ``best`` and ``new`` together, ties by (first, second)."""
    if best is None:
        return best_of(*new, k)
    return best_of(*(np.concatenate([a, b]) for a, b in zip(best, new)), k)


def best_of(first: Any, second: Any, score: Any, k: int) -> tuple[Any, Any, Any]:
    """The k rows of highest score, highest first, ties by (first, second) ascending (NumPy or
    CuPy; the ids sort exactly as float64 keys, up to 2**53)."""
    xp = device_of(first).xp
    f64 = xp.float64
    if len(score) > k:  # only the rows scoring at least the k-th highest (ties included) are sorted
        keep = score >= -xp.partition(-score, k - 1)[k - 1]
        first, second, score = first[keep], second[keep], score[keep]
    order = xp.lexsort(xp.stack([second.astype(f64), first.astype(f64), -score + 0.0]))[:k]  # (no -0.0 beside 0.0)
    return first[order], second[order], score[order]


def run_measure(csr: Any, pairs: Any, params: Any, engine: Any) -> dict[str, Any]:
    """Any member of the family (``params.measure``) on the pairs it names: the given pairs or the
    edges, or the two-hop pairs; the top k of them when asked. ``engine``: the backend's module,
    with ``row_sums``, ``pair_scores(adj, tables, first, second)`` and ``two_hop`` (as here)."""
    from .common import MEASURES, adjacency

    measure = MEASURES[params.measure]
    adj = adjacency(csr, params.symmetrize, params.use_weight and measure.weights, engine.row_sums)
    t = tables(adj, measure, engine.row_sums)
    if params.candidates == "two_hop":
        first, second, score = engine.two_hop(adj, measure, t, params._vertex_index, params.top_k)
    else:
        first, second = pairs.first, pairs.second
        score = engine.pair_scores(adj, t, first, second)
        if params.top_k is not None:
            first, second, score = best_of(first, second, score, params.top_k)
    return {"first": first, "second": second, measure.column: score}
