"""GPU backend of ``euler``: cycle merging in array steps, no step walks a cycle sequentially.

1. Successors: directed, ``succ[by_dst] = by_src`` pairs the k-th in-arc of each vertex with
   its k-th out-arc (two stable sorts, one scatter). Undirected, every edge is two arcs
   (2i: u→v, 2i+1: v→u); consecutive in-arcs at a vertex are partners and ``succ = partner ^ 1``;
   this splits the arcs into cycles that come in mirror pairs, and keeping the arcs of the
   cycle with the smaller label orients every edge once with every vertex balanced.
2. Cycle labels by pointer jumping (``jump_min``: the smallest arc id of each cycle), about
   log2 of the longest cycle rounds.
3. The cycle graph: in-arcs sorted by (vertex, cycle); the first of each (vertex, cycle) run
   represents it, and consecutive representatives at a vertex are linked (link index = weight).
   A spanning forest of it by Borůvka (``boruvka_min``/``boruvka_hook``), O(log cycles) rounds.
4. Merge: at each vertex, the successors of the representatives of a run of forest links are
   rotated by one (``rotate``), which joins all cycles into one.
5. Linearise: cut the cycle before the first out-arc of the start vertex and rank it by
   Wyllie's pointer jumping (``rank_step``), then scatter arcs to their positions.
A path gets a virtual arc from its end to its start, which is cut off at the end.
"""
from __future__ import annotations

import time

import cupy as cp
import numpy as np

from graphops.plugin import Result, grid, load_module, wait_idle

from .common import Arcs, TourPlan, plan_tour
from .params import EulerParams

__all__ = ["run", "edge_components"]

_module = load_module("graphops_euler", "euler")
_k = {name: _module.get_function(name) for name in
      ("jump_min", "rank_step", "cc_hook", "compress", "boruvka_min", "boruvka_hook", "reset_best", "rotate")}
THREADS = 256
_i64 = np.int64


def _launch(name: str, n: int, *args) -> None:
    _k[name](grid(n), (THREADS,), args)


def _flag() -> cp.ndarray:
    return cp.zeros(1, dtype=cp.int32)


def edge_components(n: int, src: cp.ndarray, dst: cp.ndarray) -> tuple[int, int, int]:
    """Components carrying edges (hooking + compression until stable) and, when more than one,
    a vertex in two different ones."""
    src, dst = src.astype(cp.int32, copy=False), dst.astype(cp.int32, copy=False)
    lab = cp.arange(n, dtype=cp.int32)
    while True:
        changed = _flag()
        _launch("cc_hook", len(src), src, dst, _i64(len(src)), lab, changed)
        _launch("compress", n, lab, _i64(n))
        if not int(changed[0]):
            break
    used = cp.zeros(n, dtype=cp.bool_)
    used[src], used[dst] = True, True
    roots = cp.unique(lab[used])
    if len(roots) <= 1:
        return int(len(roots)), -1, -1
    first = int(cp.flatnonzero(lab == roots[0])[0])
    other = int(cp.flatnonzero(lab == roots[1])[0])
    return int(len(roots)), first, other


def cycle_labels(succ: cp.ndarray) -> tuple[cp.ndarray, int]:
    """The smallest arc id of each arc's cycle, and the pointer-jumping rounds it took."""
    n = len(succ)
    nxt, lab = succ.copy(), cp.arange(n, dtype=cp.int32)
    nxt2, lab2 = cp.empty_like(nxt), cp.empty_like(lab)
    rounds = 0
    while True:
        changed = _flag()
        _launch("jump_min", n, nxt, lab, nxt2, lab2, _i64(n), changed)
        nxt, nxt2, lab, lab2 = nxt2, nxt, lab2, lab
        rounds += 1
        if not int(changed[0]):
            return lab, rounds


def _spanning_links(la: cp.ndarray, lb: cp.ndarray, cycles: int) -> tuple[cp.ndarray, int]:
    """Which links (between cycles ``la[i]``, ``lb[i]``) form a spanning forest; Borůvka rounds."""
    links = len(la)
    chosen = cp.zeros(max(links, 1), dtype=cp.uint8)
    comp = cp.arange(cycles, dtype=cp.int32)  # cycle -> its component's root cycle
    parent = cp.arange(cycles, dtype=cp.int32)
    best = cp.empty(cycles, dtype=cp.int32)
    rounds = 0
    while links:
        _launch("reset_best", cycles, best, _i64(cycles))
        live = _flag()
        _launch("boruvka_min", links, la, lb, _i64(links), comp, best, live)
        if not int(live[0]):
            break
        _launch("boruvka_hook", cycles, best, la, lb, comp, _i64(cycles), parent, chosen)
        _launch("compress", cycles, parent, _i64(cycles))
        comp = parent[comp]
        rounds += 1
    return chosen[:links], rounds


def _successors_directed(src: cp.ndarray, dst: cp.ndarray) -> cp.ndarray:
    by_src = cp.argsort(src).astype(cp.int32)
    by_dst = cp.argsort(dst).astype(cp.int32)
    succ = cp.empty(len(src), dtype=cp.int32)
    succ[by_dst] = by_src
    return succ


def _orient(src: cp.ndarray, dst: cp.ndarray) -> tuple[cp.ndarray, cp.ndarray, cp.ndarray, cp.ndarray, cp.ndarray, int]:
    """Undirected edges as balanced arcs: (arc ids kept: 2i or 2i+1, src, dst, succ, labels, rounds)."""
    m = len(src)
    asrc = cp.stack([src, dst], axis=1).reshape(-1)
    adst = cp.stack([dst, src], axis=1).reshape(-1)
    by_dst = cp.argsort(adst).astype(cp.int32).reshape(-1, 2)  # degrees are even: pairs stay at one vertex
    partner = cp.empty(2 * m, dtype=cp.int32)
    partner[by_dst[:, 0]] = by_dst[:, 1]
    partner[by_dst[:, 1]] = by_dst[:, 0]
    succ = partner ^ 1
    del partner, by_dst
    lab, rounds = cycle_labels(succ)
    keep = cp.flatnonzero(lab < lab[cp.arange(2 * m, dtype=cp.int32) ^ 1]).astype(cp.int32)
    new_id = cp.full(2 * m, -1, dtype=cp.int32)
    new_id[keep] = cp.arange(len(keep), dtype=cp.int32)
    return keep, asrc[keep], adst[keep], new_id[succ[keep]], new_id[lab[keep]], rounds


def _merge(dst: cp.ndarray, succ: cp.ndarray, lab: cp.ndarray, phases: dict, counts: dict) -> cp.ndarray:
    """Join all cycles into one by rotating successors at the forest's links."""
    n = len(succ)
    roots = cp.flatnonzero(lab == cp.arange(n, dtype=cp.int32))
    cycles = len(roots)
    counts["initial_cycles"] = int(cycles)
    if cycles <= 1:
        return succ
    t = time.perf_counter()
    order = cp.argsort((dst.astype(cp.int64) << 32) | lab.astype(cp.int64)).astype(cp.int32)
    v_s, c_s = dst[order], lab[order]
    first = cp.ones(n, dtype=cp.bool_)
    first[1:] = (v_s[1:] != v_s[:-1]) | (c_s[1:] != c_s[:-1])
    at = cp.flatnonzero(first)
    rep, rep_v, rep_c = order[at], v_s[at], c_s[at]
    del order, v_s, c_s, first, at
    linked = cp.flatnonzero(rep_v[1:] == rep_v[:-1]).astype(cp.int32)  # link j joins reps j, j+1
    cycle_index = cp.empty(n, dtype=cp.int32)
    cycle_index[roots] = cp.arange(cycles, dtype=cp.int32)
    la, lb = cycle_index[rep_c[linked]], cycle_index[rep_c[linked + 1]]
    wait_idle()
    phases["cycle graph"] = time.perf_counter() - t
    t = time.perf_counter()
    chosen_links, rounds = _spanning_links(la, lb, cycles)
    counts["forest_rounds"] = rounds
    wait_idle()
    phases["forest"] = time.perf_counter() - t
    t = time.perf_counter()
    reps = len(rep)
    chosen = cp.zeros(reps, dtype=cp.uint8)  # chosen[j]: reps j and j + 1 are linked in the forest
    chosen[linked] = chosen_links
    prev = cp.zeros(reps, dtype=cp.bool_)
    prev[1:] = chosen[:-1].astype(cp.bool_)
    starts = cp.flatnonzero(~prev).astype(cp.int32)
    start = starts[cp.cumsum(~prev) - 1]
    out = succ.copy()
    _launch("rotate", reps, rep, chosen, start, _i64(reps), succ, out)
    wait_idle()
    phases["rotate"] = time.perf_counter() - t
    return out


def _rank(succ: cp.ndarray, first: int) -> tuple[cp.ndarray, int]:
    """Arcs in tour order from ``first`` (one cycle through all arcs), by Wyllie's list ranking."""
    n = len(succ)
    last = int(cp.flatnonzero(succ == first)[0])
    nxt = succ.copy()
    nxt[last] = last
    dist = cp.ones(n, dtype=cp.int32)
    dist[last] = 0
    nxt2, dist2 = cp.empty_like(nxt), cp.empty_like(dist)
    rounds = 0
    while (1 << rounds) < n:
        _launch("rank_step", n, nxt, dist, nxt2, dist2, _i64(n))
        nxt, nxt2, dist, dist2 = nxt2, nxt, dist2, dist
        rounds += 1
    tour = cp.empty(n, dtype=cp.int32)
    tour[(n - 1) - dist] = cp.arange(n, dtype=cp.int32)
    return tour, rounds


def run(arcs: Arcs, params: EulerParams) -> Result:
    """The tour as columns step, src, dst, edge_id (internal vertex indices)."""
    plan: TourPlan = plan_tour(arcs.graph, params, edge_components)
    m = arcs.m
    phases: dict[str, float] = {}
    counts: dict[str, int] = {}
    if m == 0:
        empty = cp.empty(0, dtype=cp.int64)
        return Result({"step": empty, "src": empty, "dst": empty, "edge_id": empty}, {"kind": plan.kind})
    src, dst = arcs.src, arcs.dst
    path = plan.kind == "path"
    if path:  # a virtual edge from the end to the start closes the path
        src = cp.concatenate([src, cp.asarray([plan.end], dtype=cp.int32)])
        dst = cp.concatenate([dst, cp.asarray([plan.start], dtype=cp.int32)])
    t = time.perf_counter()
    if arcs.directed:
        edge = None
        succ = _successors_directed(src, dst)
        wait_idle()
        phases["sort"] = time.perf_counter() - t
        t = time.perf_counter()
        lab, rounds = cycle_labels(succ)
    else:
        edge, src, dst, succ, lab, rounds = _orient(src, dst)  # edge: kept arc ids (2i or 2i+1)
    counts["label_rounds"] = rounds
    wait_idle()
    phases["labels" if arcs.directed else "orient+labels"] = time.perf_counter() - t
    succ = _merge(dst, succ, lab, phases, counts)
    del lab
    t = time.perf_counter()
    n_arcs = len(succ)
    virtual = n_arcs - 1 if arcs.directed else None
    if path and not arcs.directed:
        virtual = int(cp.flatnonzero((edge >> 1) == m)[0])
    if path:
        first = int(succ[virtual])
    else:
        first = int(cp.flatnonzero(src == plan.start)[0])
    tour, rank_rounds = _rank(succ, first)
    counts["rank_rounds"] = rank_rounds
    if path:
        tour = tour[:-1]  # the virtual arc comes last
    t_src, t_dst = src[tour].astype(cp.int64), dst[tour].astype(cp.int64)
    ids = (tour if edge is None else edge[tour] >> 1).astype(cp.int64)
    if path and int(t_src[0]) != plan.start:  # undirected: the virtual edge was kept start -> end
        t_src, t_dst, ids = t_dst[::-1].copy(), t_src[::-1].copy(), ids[::-1].copy()
    wait_idle()
    phases["rank"] = time.perf_counter() - t
    details = {"phases_s": phases, "kind": plan.kind, **counts}
    return Result({"step": cp.arange(m, dtype=cp.int64), "src": t_src, "dst": t_dst, "edge_id": ids}, details)
