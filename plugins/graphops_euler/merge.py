"""Cycle merging on the CPU: the GPU's algorithm, arranged so that memory misses overlap.

Hierholzer's walk is one chain of dependent memory reads: on a large random graph each step
waits for DRAM (about 240 ns here, two or three misses per edge). Cycle merging needs the same
chains, but they can be cut: arcs chosen by a hash ("splitters", one in ``SPACING``) start
walks that each stop at the next splitter, and each thread advances ``LANES`` such walks in
turn, so that many misses are in flight at once (about 11 ns a step instead of 240).

1. Successors: counting sorts of the arcs by tail and by head; the k-th in-arc of a vertex
   is followed by its k-th out-arc. Undirected edges are two arcs; consecutive in-arcs at a
   vertex are partners, ``succ = partner ^ 1``, and of each pair of mirror cycles the one with
   the smaller label keeps its direction.
2. Cycle labels: the splitter walks give each arc its splitter; walking the (short) list of
   splitters gives each splitter's cycle the smallest splitter on it. Arcs of cycles without a
   splitter are walked one cycle at a time (such cycles are short).
3. Merge: at each vertex, the in-arcs whose cycle differs (union-find) from the first one's
   swap successors with it, joining the two cycles.
4. Rank: splitter walks again on the single cycle (the start arc is a splitter), the list of
   splitters summed in order, and each arc placed at its splitter's base plus its offset.
"""
from __future__ import annotations

import numpy as np

from graphops.jit import njit, prange

__all__ = ["successors", "orient", "cycle_labels", "merge", "rank"]

SPACING = 16  # one splitter in SPACING arcs (by hash)
LANES = 32  # walks each thread advances in turn


@njit(parallel=True)
def _counting_order(keys, n, threads):
    """Positions 0..len-1 sorted by key (stable), by counting: each thread counts and then
    places its own stretch of the keys, after the threads before it."""
    size = len(keys)
    count = np.zeros((threads, n + 1), np.int64)
    for t in prange(threads):
        for i in range(size * t // threads, size * (t + 1) // threads):
            count[t, keys[i]] += 1
    total = 0
    for v in range(n):  # exclusive prefix, key-major then thread
        for t in range(threads):
            c = count[t, v]
            count[t, v] = total
            total += c
    order = np.empty(size, np.int64)
    for t in prange(threads):
        for i in range(size * t // threads, size * (t + 1) // threads):
            k = keys[i]
            order[count[t, k]] = i
            count[t, k] += 1
    return order


def _threads(size: int, n: int) -> int:
    """Threads for a counting sort: each keeps n counters, so not more than the keys pay for."""
    from numba import get_num_threads

    return int(max(1, min(get_num_threads(), 4, size // max(n, 1))))


@njit(parallel=True)
def _pair(by_src, by_dst, succ):
    for k in prange(len(by_src)):
        succ[by_dst[k]] = by_src[k]


def successors(src: np.ndarray, dst: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``succ[a]``: the arc after arc ``a`` (the k-th in-arc of a vertex -> its k-th out-arc),
    and the arcs ordered by head (for :func:`merge`)."""
    threads = _threads(len(src), n)
    by_src = _counting_order(src, n, threads)
    by_dst = _counting_order(dst, n, threads)
    succ = np.empty(len(src), np.int64)
    _pair(by_src, by_dst, succ)
    return succ, by_dst


def _undirected_successors(src: np.ndarray, dst: np.ndarray, n: int) -> np.ndarray:
    adst = np.stack([dst, src], axis=1).reshape(-1)  # arc 2i: src -> dst, 2i + 1: dst -> src
    by_dst = _counting_order(adst, n, _threads(len(adst), n))  # even degrees: pairs 2k, 2k+1 share a vertex
    return _partners(by_dst)


@njit
def _partners(by_dst):
    m = len(by_dst) // 2
    succ = np.empty(2 * m, np.int64)
    for k in range(m):
        a, b = by_dst[2 * k], by_dst[2 * k + 1]
        succ[a] = b ^ 1
        succ[b] = a ^ 1
    return succ


@njit
def _splitters(size, mask, first):
    """Arcs whose hash has its low bits clear (one in mask + 1), plus ``first``."""
    flags = np.zeros(size, np.bool_)
    count = 0
    for a in range(size):
        h = (np.uint64(a) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)
        if (h & np.uint64(mask)) == np.uint64(0) or a == first:
            flags[a] = True
            count += 1
    out = np.empty(count, np.int64)
    j = 0
    for a in range(size):
        if flags[a]:
            out[j] = a
            j += 1
    return flags, out


@njit(parallel=True)
def _segments(succ, flags, splitters, owner, offset, next_splitter, length, threads):
    """From every splitter, walk until the next one: ``owner``/``offset`` of each arc walked,
    and each splitter's next splitter and segment length. Each thread keeps LANES walks going."""
    total = len(splitters)
    for t in prange(threads):
        lo = total * t // threads
        hi = total * (t + 1) // threads
        cur = np.empty(LANES, np.int64)
        who = np.empty(LANES, np.int64)
        dist = np.empty(LANES, np.int64)
        taken = lo
        live = 0
        for j in range(LANES):  # start the lanes
            if taken < hi:
                s = splitters[taken]
                cur[j], who[j], dist[j] = s, taken, 0
                taken += 1
                live += 1
            else:
                who[j] = -1
        while live > 0:
            for j in range(LANES):
                if who[j] < 0:
                    continue
                a = cur[j]
                owner[a] = who[j]
                offset[a] = dist[j]
                b = succ[a]
                dist[j] += 1
                if flags[b]:  # the segment ends before the next splitter
                    next_splitter[who[j]] = b
                    length[who[j]] = dist[j]
                    if taken < hi:
                        s = splitters[taken]
                        cur[j], who[j], dist[j] = s, taken, 0
                        taken += 1
                    else:
                        who[j] = -1
                        live -= 1
                else:
                    cur[j] = b
    return 0


@njit
def _label_from_segments(succ, flags, splitters, owner, next_splitter):
    """Cycle label of every arc: the smallest splitter arc on its cycle, or for a cycle
    without splitters its smallest arc."""
    k = len(splitters)
    cyc = np.full(k, -1, np.int64)
    for i in range(k):  # splitters in increasing arc order: the first seen is the smallest
        if cyc[i] >= 0:
            continue
        j = i
        while cyc[j] < 0:
            cyc[j] = splitters[i]
            j = np.searchsorted(splitters, next_splitter[j])
    lab = np.empty(len(succ), np.int64)
    for a in range(len(succ)):
        o = owner[a]
        lab[a] = cyc[o] if o >= 0 else -1
    for a in range(len(succ)):  # cycles no splitter reached: walk each once
        if lab[a] < 0:
            b = a
            while lab[b] < 0:
                lab[b] = a
                b = succ[b]
    return lab


def _walks(succ: np.ndarray, first: int = -1, spacing: int = SPACING):
    from numba import get_num_threads

    flags, splitters = _splitters(len(succ), spacing - 1, first)
    owner = np.full(len(succ), -1, np.int64)
    offset = np.empty(len(succ), np.int64)
    next_splitter = np.empty(len(splitters), np.int64)
    length = np.empty(len(splitters), np.int64)
    _segments(succ, flags, splitters, owner, offset, next_splitter, length, max(1, get_num_threads()))
    return flags, splitters, owner, offset, next_splitter, length


def cycle_labels(succ: np.ndarray) -> np.ndarray:
    """The label of each arc's cycle (equal within a cycle, distinct between cycles)."""
    flags, splitters, owner, _, next_splitter, _ = _walks(succ)
    return _label_from_segments(succ, flags, splitters, owner, next_splitter)


@njit
def _keep(lab):
    keep = len(lab) // 2
    out = np.empty(keep, np.int64)
    for i in range(keep):
        a = 2 * i
        out[i] = a if lab[a] < lab[a + 1] else a + 1
    return out


@njit
def _compact(kept, succ, lab, src, dst):
    """The kept arcs as a balanced directed graph: tails, heads, successors, labels."""
    m = len(kept)
    new_id = np.full(len(succ), -1, np.int64)
    for i in range(m):
        new_id[kept[i]] = i
    ksrc, kdst = np.empty(m, np.int64), np.empty(m, np.int64)
    ksucc, klab = np.empty(m, np.int64), np.empty(m, np.int64)
    for i in range(m):
        a = kept[i]
        e = a >> 1
        if a & 1:
            ksrc[i], kdst[i] = dst[e], src[e]
        else:
            ksrc[i], kdst[i] = src[e], dst[e]
        ksucc[i] = new_id[succ[a]]
        klab[i] = lab[a]
    return ksrc, kdst, ksucc, klab


def orient(src: np.ndarray, dst: np.ndarray, n: int):
    """Undirected edges as balanced arcs: (kept arc ids 2i or 2i+1, tails, heads, successors, labels)."""
    succ = _undirected_successors(src, dst, n)
    lab = cycle_labels(succ)
    kept = _keep(lab)
    return (kept, *_compact(kept, succ, lab, src, dst))


@njit
def _find(parent, x):
    """The root of ``x`` in a union-find forest, compressing the path behind it."""
    root = x
    while parent[root] != root:
        root = parent[root]
    while parent[x] != root:
        parent[x], x = root, parent[x]
    return root


def merge(dst: np.ndarray, succ: np.ndarray, lab: np.ndarray, n: int, by_dst: np.ndarray | None = None) -> int:
    """Join all cycles into one: at each vertex, an in-arc whose cycle (union-find over labels)
    differs from the first in-arc's swaps successors with it. Returns the initial cycle count."""
    if by_dst is None:
        by_dst = _counting_order(dst, n, _threads(len(dst), n))
    ends = np.cumsum(np.bincount(dst, minlength=n))  # each vertex's in-arcs end here in by_dst
    return _merge(ends, succ, lab, by_dst)


@njit
def _merge(ends, succ, lab, by_dst):
    size = 0
    for a in range(len(lab)):
        size = max(size, lab[a] + 1)
    parent = np.arange(size)  # indexed by label (an arc id, of the undirected arcs when oriented)
    cycles = 0
    seen = np.zeros(size, np.bool_)
    for a in range(len(lab)):
        if not seen[lab[a]]:
            seen[lab[a]] = True
            cycles += 1
    k = 0
    for v in range(len(ends)):
        if ends[v] - k < 2:  # one in-arc (or none): nothing to join here
            k = ends[v]
            continue
        a1 = by_dst[k]
        r1 = _find(parent, lab[a1])
        for j in range(k + 1, ends[v]):
            ai = by_dst[j]
            ri = _find(parent, lab[ai])
            if ri != r1:
                parent[ri] = r1
                succ[a1], succ[ai] = succ[ai], succ[a1]
        k = ends[v]
    return cycles


@njit
def _place(succ, first, splitters, owner, offset, next_splitter, length):
    k = len(splitters)
    base = np.empty(k, np.int64)
    i = np.searchsorted(splitters, first)
    total = 0
    for _ in range(k):
        base[i] = total
        total += length[i]
        i = np.searchsorted(splitters, next_splitter[i])
    tour = np.empty(len(succ), np.int64)
    for a in range(len(succ)):
        tour[base[owner[a]] + offset[a]] = a
    return tour, total


def rank(succ: np.ndarray, first: int) -> np.ndarray:
    """The arcs of the single cycle ``succ`` in order from ``first``."""
    flags, splitters, owner, offset, next_splitter, length = _walks(succ, first)
    tour, total = _place(succ, first, splitters, owner, offset, next_splitter, length)
    if total != len(succ):
        raise RuntimeError(f"euler cpu: the merged successors form no single cycle ({total} of {len(succ)} arcs)")
    return tour
