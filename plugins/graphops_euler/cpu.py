"""CPU backend of ``euler``: an iterative Hierholzer walk over the edges, in Numba, O(m).

The walk keeps a stack of (vertex, edge it was reached by) and a next-edge cursor per vertex
(undirected edges are listed at both ends; taking one marks the other). The walk is bound by
memory latency (each step goes to a random vertex), so each vertex's cursor and edges share
one block of memory (:func:`_blocks`). Stuck vertices are
popped and their edges written from the back of the tour to the front, so the tour comes out
in walking order. The walk is resumable: it runs in chunks of steps (graphops.base.work.chunks),
so Ctrl-C stops it within about a second and a progress bar can follow it.
"""
from __future__ import annotations

import time

import numpy as np

from graphops.plugin import Result, chunks, njit

from .common import Arcs, plan_tour
from .merge import _find, arange
from .params import MERGE_FROM, EulerParams

__all__ = ["run", "edge_components"]


@njit
def _union_find(n, src, dst):
    parent = np.arange(n)
    for i in range(len(src)):
        a, b = _find(parent, src[i]), _find(parent, dst[i])
        if a != b:
            if a < b:
                parent[b] = a
            else:
                parent[a] = b
    has_edge = np.zeros(n, np.bool_)
    for i in range(len(src)):
        has_edge[src[i]] = True
        has_edge[dst[i]] = True
    count, first, other = 0, -1, -1
    for v in range(n):
        if has_edge[v]:
            r = _find(parent, v)
            if r == v:
                count += 1
            if first < 0:
                first = v
            elif other < 0 and r != _find(parent, first):
                other = v
    return count, first, other


def edge_components(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[int, int, int]:
    """Components carrying edges and, when more than one, a vertex in two different ones."""
    count, first, other = _union_find(n, np.asarray(src, np.int64), np.asarray(dst, np.int64))
    return int(count), (int(first) if count > 1 else -1), int(other)


@njit
def _blocks(n, src, dst, undirected):
    """Each vertex's half-edges in one block of a single int64 array, so that the walk finds a
    vertex's cursor and its next edges in one cache line (a miss per visit, not three):
    ``[cursor, end, vertex, (head block, edge[, twin entry]) * degree]``. An entry names the
    head's block, not the head, so following it needs no offset table; an undirected edge's
    two entries point at each other, and the walk marks the twin used (twin = -1) when it
    takes one. Entries keep the edge order within a vertex."""
    width = 3 if undirected else 2
    deg = np.zeros(n, np.int64)
    for i in range(len(src)):
        deg[src[i]] += 1
        if undirected:
            deg[dst[i]] += 1
    start = np.empty(n, np.int64)
    total = 0
    for v in range(n):
        start[v] = total
        total += 3 + width * deg[v]
    blk = np.empty(total, np.int64)
    for v in range(n):
        b = start[v]
        blk[b] = b + 3
        blk[b + 1] = b + 3 + width * deg[v]
        blk[b + 2] = v
    for i in range(len(src)):
        u, v = src[i], dst[i]
        a = blk[start[u]]
        blk[start[u]] = a + width
        blk[a], blk[a + 1] = start[v], i
        if undirected:
            c = blk[start[v]]
            blk[start[v]] = c + width
            blk[c], blk[c + 1] = start[u], i
            blk[a + 2], blk[c + 2] = c, a
    for v in range(n):  # rewind the cursors
        blk[start[v]] = start[v] + 3
    return blk, start


@njit
def _walk(steps, blk, undirected, stack, top, k, out_e, out_from, out_to):
    """Up to ``steps`` pushes or pops of Hierholzer's walk; returns the new (top, k).
    ``stack[t] = (block of the vertex, edge it was reached by)``."""
    width = 3 if undirected else 2
    done = 0
    while top >= 0 and done < steps:
        b = stack[top, 0]
        c = blk[b]
        end = blk[b + 1]
        pushed = False
        while c < end:
            if undirected:
                twin = blk[c + 2]
                if twin < 0:  # taken from the other end
                    c += width
                    continue
                blk[twin + 2] = -1
            top += 1
            stack[top, 0] = blk[c]
            stack[top, 1] = blk[c + 1]
            c += width
            pushed = True
            break
        blk[b] = c
        if not pushed:
            e = stack[top, 1]
            if e >= 0:
                k -= 1
                out_e[k], out_from[k], out_to[k] = e, blk[stack[top - 1, 0] + 2], blk[b + 2]
            top -= 1
        done += 1
    return top, k


def run(arcs: Arcs, params: EulerParams) -> Result:
    """The tour as columns step, src, dst, edge_id (internal vertex indices)."""
    plan = plan_tour(arcs.graph, params, edge_components)
    method = params.method if params.method != "auto" else ("merge" if arcs.m >= MERGE_FROM else "hierholzer")
    if method == "merge" and arcs.m:
        return _run_merge(arcs, plan)
    m, undirected = arcs.m, not arcs.directed
    t0 = time.perf_counter()
    blk, start = _blocks(arcs.n, arcs.src, arcs.dst, undirected)
    t1 = time.perf_counter()
    out_e, out_from, out_to = (np.empty(m, np.int64) for _ in range(3))
    if m:
        stack = np.empty((m + 1, 2), np.int64)
        stack[0] = start[plan.start], -1
        top, k = 0, m
        for lo, hi in chunks(2 * m + 1, what="euler walk", first=1 << 16):
            top, k = _walk(hi - lo, blk, undirected, stack, top, k, out_e, out_from, out_to)
        if k != 0:  # the checks before work make this impossible; never return a partial tour
            raise RuntimeError(f"euler cpu: the walk used {m - k} of {m} edges")
    step = arange(m)
    t2 = time.perf_counter()
    details = {"phases_s": {"blocks": t1 - t0, "walk": t2 - t1}, "kind": plan.kind, "method": "hierholzer"}
    return Result({"step": step, "src": out_from, "dst": out_to, "edge_id": out_e}, details)



@njit
def _first_out(src, v):
    for a in range(len(src)):
        if src[a] == v:
            return a
    return -1


def _run_merge(arcs: Arcs, plan) -> Result:
    """Cycle merging (:mod:`graphops_euler.merge`): the GPU's algorithm with interleaved walks."""
    from . import merge as mg

    phases: dict[str, float] = {}
    t = time.perf_counter()
    m, n = arcs.m, arcs.n
    src, dst = np.asarray(arcs.src, np.int64), np.asarray(arcs.dst, np.int64)
    path = plan.kind == "path"
    if path:  # a virtual edge from the end to the start closes the path
        src, dst = np.append(src, plan.end), np.append(dst, plan.start)
    by_dst = None
    if arcs.directed:
        succ, by_dst = mg.successors(src, dst, n)
        phases["sort"] = time.perf_counter() - t
        t = time.perf_counter()
        lab = mg.cycle_labels(succ)
        phases["labels"] = time.perf_counter() - t
    else:
        src, dst, succ, lab, by_dst = mg.orient(src, dst, n, phases)  # arc i is edge i, one way
    t = time.perf_counter()
    cycles = mg.merge(dst, succ, lab, n, by_dst)
    del lab, by_dst
    phases["merge"] = time.perf_counter() - t
    t = time.perf_counter()
    if path:
        first = int(succ[m])  # after the virtual arc m
    else:
        first = _first_out(src, plan.start)
    tour = mg.rank(succ, first)
    if path:
        tour = tour[:-1]  # the virtual arc comes last
    t_src, t_dst = mg.gather(src, tour), mg.gather(dst, tour)
    ids = tour
    if path and int(t_src[0]) != plan.start:  # undirected: the virtual edge was kept start -> end
        t_src, t_dst, ids = t_dst[::-1].copy(), t_src[::-1].copy(), ids[::-1].copy()
    phases["rank"] = time.perf_counter() - t
    step = arange(m)
    details = {"phases_s": phases, "kind": plan.kind, "method": "merge", "initial_cycles": int(cycles)}
    return Result({"step": step, "src": t_src, "dst": t_dst, "edge_id": np.ascontiguousarray(ids)}, details)
