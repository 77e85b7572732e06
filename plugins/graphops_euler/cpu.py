"""CPU backend of ``euler``: an iterative Hierholzer walk over a CSR of the edges, in Numba, O(m).

The walk keeps a stack of (vertex, edge it was reached by) and a next-edge pointer per vertex
(undirected edges also a used flag, since each is listed at both ends). Stuck vertices are
popped and their edges written from the back of the tour to the front, so the tour comes out
in walking order. The walk is resumable: it runs in chunks of steps (graphops.work.chunks),
so Ctrl-C stops it within about a second and a progress bar can follow it.
"""
from __future__ import annotations

import time

import numpy as np

from graphops import Result
from graphops.jit import njit, prange
from graphops.work import chunks

from .common import Arcs, plan_tour
from .params import EulerParams

__all__ = ["run", "edge_components"]


@njit
def _find(parent, v):
    root = v
    while parent[root] != root:
        root = parent[root]
    while parent[v] != root:  # path compression
        parent[v], v = root, parent[v]
    return root


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
def _csr(n, src, dst, undirected):
    """Half-edges grouped by their tail (counting sort, edge order kept within a vertex):
    ``pos[v] = (next, end)``, the range of v's half-edges, and ``adj[k] = (head, edge)``.
    Pairs share a cache line: the walk's random accesses are one miss each."""
    m = len(src)
    pos = np.zeros((n + 1, 2), np.int64)
    for i in range(m):
        pos[src[i] + 1, 1] += 1
        if undirected:
            pos[dst[i] + 1, 1] += 1
    for v in range(n):
        pos[v + 1, 1] += pos[v, 1]
    for v in range(n):
        pos[v, 0] = pos[v, 1]
        pos[v, 1] = pos[v + 1, 1]
    adj = np.empty((pos[n, 1], 2), np.int64)
    for i in range(m):
        u, v = src[i], dst[i]
        k = pos[u, 0]
        pos[u, 0] += 1
        adj[k, 0], adj[k, 1] = v, i
        if undirected:
            k = pos[v, 0]
            pos[v, 0] += 1
            adj[k, 0], adj[k, 1] = u, i
    for v in range(n - 1, 0, -1):  # rewind each vertex's cursor to its first half-edge
        pos[v, 0] = pos[v - 1, 1]
    pos[0, 0] = 0
    return pos, adj


@njit
def _walk(steps, pos, adj, used, undirected, stack, top, k, out_e, out_from, out_to):
    """Up to ``steps`` pushes or pops of Hierholzer's walk; returns the new (top, k).
    ``stack[t] = (vertex, edge it was reached by)``."""
    done = 0
    while top >= 0 and done < steps:
        v = stack[top, 0]
        pushed = False
        while pos[v, 0] < pos[v, 1]:
            j = pos[v, 0]
            pos[v, 0] = j + 1
            e = adj[j, 1]
            if undirected:
                if used[e]:
                    continue
                used[e] = True
            top += 1
            stack[top, 0] = adj[j, 0]
            stack[top, 1] = e
            pushed = True
            break
        if not pushed:
            e = stack[top, 1]
            if e >= 0:
                k -= 1
                out_e[k], out_from[k], out_to[k] = e, stack[top - 1, 0], v
            top -= 1
        done += 1
    return top, k


@njit(parallel=True)
def _arange(out):
    for i in prange(len(out)):
        out[i] = i


def run(arcs: Arcs, params: EulerParams) -> Result:
    """The tour as columns step, src, dst, edge_id (internal vertex indices)."""
    plan = plan_tour(arcs.graph, params)
    m, undirected = arcs.m, not arcs.directed
    t0 = time.perf_counter()
    pos, adj = _csr(arcs.n, arcs.src, arcs.dst, undirected)
    t1 = time.perf_counter()
    out_e, out_from, out_to = (np.empty(m, np.int64) for _ in range(3))
    if m:
        used = np.zeros(m if undirected else 1, np.bool_)
        stack = np.empty((m + 1, 2), np.int64)
        stack[0] = plan.start, -1
        top, k = 0, m
        for lo, hi in chunks(2 * m + 1, what="euler walk", first=1 << 16):
            top, k = _walk(hi - lo, pos, adj, used, undirected, stack, top, k, out_e, out_from, out_to)
        if k != 0:  # the checks before work make this impossible; never return a partial tour
            raise RuntimeError(f"euler cpu: the walk used {m - k} of {m} edges")
    step = np.empty(m, np.int64)
    _arange(step)
    t2 = time.perf_counter()
    details = {"phases_s": {"csr": t1 - t0, "walk": t2 - t1}, "kind": plan.kind}
    return Result({"step": step, "src": out_from, "dst": out_to, "edge_id": out_e}, details)

