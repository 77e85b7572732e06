"""Cycle merging on the CPU: the GPU's algorithm, arranged so that memory misses overlap.

Hierholzer's walk is one chain of dependent memory reads: on a large random graph each step
waits for DRAM (about 240 ns here, two or three misses per edge). Cycle merging needs the same
chains, but they can be cut: arcs chosen by a hash ("splitters", one in ``SPACING``) start
walks that each stop at the next splitter, and each thread advances ``LANES`` such walks in
turn, so that many misses are in flight at once (about 11 ns a step instead of 240).

1. Successors: counting sorts of the arcs by tail and by head (by buckets of keys first, so
   that the counters stay in cache); the k-th in-arc of a vertex is followed by its k-th
   out-arc. Undirected edges are two arcs; consecutive in-arcs at a
   vertex are partners, ``succ = partner ^ 1``, and of each pair of mirror cycles the one with
   the smaller label keeps its direction.
2. Cycle labels: the splitter walks give each arc its splitter; walking the (short) list of
   splitters gives each splitter's cycle the index of its first splitter. Arcs of cycles
   without a splitter are walked one cycle at a time (such cycles are short).
3. Merge: at each vertex, the in-arcs whose cycle differs (union-find) from the first one's
   swap successors with it, joining the two cycles.
4. Rank: splitter walks again on the single cycle (the start arc is a splitter), the list of
   splitters summed in order, and each arc placed at its splitter's base plus its offset.

Fresh memory costs here too (a page fault per 4 KiB, about 0.35 s per GiB on the 2-core
machine), so large arrays are made by Numba and reused where a phase allows: the sort writes
its order over its scratch array, and labels are written over the splitter owners.
"""
from __future__ import annotations

import time

import numpy as np

from graphops.plugin import njit, prange

__all__ = ["successors", "orient", "cycle_labels", "merge", "rank"]

SPACING = 16  # one splitter in SPACING arcs (by hash)
LANES = 32  # walks each thread advances in turn
LOW = 14  # counting sorts count 2**LOW keys at a time (16 K counters: in cache; fits uint16)


@njit(parallel=True)
def _counting_order(keys, n, threads, low):
    """Positions 0..len-1 sorted by key (stable), and where each key's run ends in that order.

    Counting sort in two passes so that neither scatters at random over a table of ``n``
    counters: the positions are first placed by bucket (``key >> low``; each thread places its
    own stretch of the keys, after the threads before it), then each bucket, whose
    ``2**low`` counters stay in cache, is counted and placed on its own."""
    size = len(keys)
    buckets = (n >> low) + 1
    width = 1 << low
    hist = np.zeros((threads, buckets), np.int64)
    for t in prange(threads):
        for i in range(size * t // threads, size * (t + 1) // threads):
            hist[t, keys[i] >> low] += 1
    starts = np.empty(buckets + 1, np.int64)
    total = 0
    for b in range(buckets):  # exclusive prefix, bucket-major then thread
        starts[b] = total
        for t in range(threads):
            c = hist[t, b]
            hist[t, b] = total
            total += c
    starts[buckets] = total
    where = np.empty(size, np.int64)
    low_key = np.empty(size, np.uint16)
    for t in prange(threads):
        for i in range(size * t // threads, size * (t + 1) // threads):
            k = keys[i]
            b = k >> low
            p = hist[t, b]
            where[p] = i
            low_key[p] = k & (width - 1)
            hist[t, b] = p + 1
    ends = np.empty(n, np.int64)
    for b in prange(buckets):  # the order is written over ``where``, a bucket at a time
        lo, hi, base = starts[b], starts[b + 1], b << low
        held = where[lo:hi].copy()
        count = np.zeros(width, np.int64)
        for j in range(lo, hi):
            count[low_key[j]] += 1
        run = lo
        for k in range(min(width, n - base)):
            c = count[k]
            count[k] = run
            run += c
            ends[base + k] = run
        for j in range(lo, hi):
            k = low_key[j]
            where[count[k]] = held[j - lo]
            count[k] += 1
    return where, ends


@njit(parallel=True)
def filled(size, value):
    """A new array of ``size`` int64 ``value`` (Numba's allocation: no huge-page stalls)."""
    out = np.empty(size, np.int64)
    for i in prange(size):
        out[i] = value
    return out


@njit
def empty(size):
    """A new int64 array from Numba's allocator (pages come as they are written, without the
    huge-page compaction stalls NumPy's madvise can cause)."""
    return np.empty(size, np.int64)


@njit(parallel=True)
def arange(size):
    out = np.empty(size, np.int64)
    for i in prange(size):
        out[i] = i
    return out


@njit(parallel=True)
def gather(values, index):
    out = np.empty(len(index), values.dtype)
    for i in prange(len(index)):
        out[i] = values[index[i]]
    return out


def _order(keys: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_counting_order` with all threads and buckets of 2**LOW keys."""
    from numba import get_num_threads

    return _counting_order(keys, n, max(1, get_num_threads()), LOW)


@njit(parallel=True)
def _pair(by_src, by_dst, succ):
    for k in prange(len(by_src)):
        succ[by_dst[k]] = by_src[k]


def successors(src: np.ndarray, dst: np.ndarray, n: int) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """``succ[a]``: the arc after arc ``a`` (the k-th in-arc of a vertex -> its k-th out-arc),
    and the arcs ordered by head with each head's end in that order (for :func:`merge`)."""
    by_src, _ = _order(src, n)
    by_dst = _order(dst, n)
    succ = empty(len(src))
    _pair(by_src, by_dst[0], succ)
    return succ, by_dst


@njit(parallel=True)
def _arc_heads(src, dst, heads):
    """Heads of the arcs of undirected edges: arc 2i is src -> dst, 2i + 1 is dst -> src."""
    for i in prange(len(src)):
        heads[2 * i], heads[2 * i + 1] = dst[i], src[i]
    return heads


@njit(parallel=True)
def _kept_order(by_dst, ends, odd):
    """The kept arcs (as edges) ordered by head, from all arcs ordered by head. The in-arcs
    ``by_dst[2k]`` and ``by_dst[2k + 1]`` are partners at one vertex: one lies on a cycle and
    the other on its mirror, so exactly one of them is kept, and each vertex's run of kept
    in-arcs ends at ``ends // 2``."""
    m = len(odd)
    order = np.empty(m, np.int64)
    for k in prange(m):
        a = by_dst[2 * k]
        order[k] = a >> 1 if (a & 1) == odd[a >> 1] else by_dst[2 * k + 1] >> 1
    half = np.empty(len(ends), np.int64)
    for v in prange(len(ends)):
        half[v] = ends[v] // 2
    return order, half


@njit(parallel=True)
def _partners(by_dst):
    m = len(by_dst) // 2
    succ = np.empty(2 * m, np.int64)
    for k in prange(m):
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
    """From every splitter, walk until the next one: ``owner``/``offset`` of each arc walked
    (no offsets when ``offset`` is empty), and each splitter's next splitter and segment
    length. Each thread keeps LANES walks going."""
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
                if len(offset):
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
def _label_from_segments(succ, owner, after):
    """Cycle labels, written over ``owner``: each cycle with splitters gets the index of its
    first splitter, each cycle without (walked once each; such cycles are short) a number
    after the splitters'. ``after[j]``: the splitter (index) after splitter j."""
    k = len(after)
    cyc = np.full(k, -1, np.int64)
    for i in range(k):
        j = i
        while cyc[j] < 0:
            cyc[j] = i
            j = after[j]
    _splitter_labels(owner, cyc)
    label = k
    for a in range(len(succ)):
        if owner[a] < 0:
            b = a
            while owner[b] < 0:
                owner[b] = label
                b = succ[b]
            label += 1
    return owner


@njit(parallel=True)
def _splitter_labels(owner, cyc):
    for a in prange(len(owner)):
        o = owner[a]
        if o >= 0:
            owner[a] = cyc[o]


def _walks(succ: np.ndarray, first: int = -1, spacing: int = SPACING, offsets: bool = True):
    from numba import get_num_threads

    flags, splitters = _splitters(len(succ), spacing - 1, first)
    owner = filled(len(succ), -1)
    offset = empty(len(succ) if offsets else 0)
    next_splitter = np.empty(len(splitters), np.int64)
    length = np.empty(len(splitters), np.int64)
    _segments(succ, flags, splitters, owner, offset, next_splitter, length, max(1, get_num_threads()))
    after = gather(owner, next_splitter)  # a splitter's own walk names it: arc -> splitter index
    return splitters, owner, offset, after, length


def cycle_labels(succ: np.ndarray) -> np.ndarray:
    """The label of each arc's cycle: equal within a cycle, distinct between cycles, and less
    than the number of cycles plus the number of splitters."""
    _, owner, _, after, _ = _walks(succ, offsets=False)
    return _label_from_segments(succ, owner, after)


@njit(parallel=True)
def _odd_kept(lab):
    """Per edge, 1 where its arc 2e + 1 is kept: of an edge's two arcs, the one on the mirror
    cycle with the smaller label (one byte per edge, so that later random reads stay in cache)."""
    m = len(lab) // 2
    odd = np.empty(m, np.uint8)
    for e in prange(m):
        odd[e] = lab[2 * e] >= lab[2 * e + 1]
    return odd


@njit(parallel=True)
def _compact(succ, lab, odd, src, dst, ends):
    """The kept arcs as a balanced directed graph: tails and heads (written into ``ends``, the
    arc-heads array the sort no longer needs: tails first, heads second), successors and
    labels. Kept arc ``a`` becomes arc ``a >> 1`` (one per edge); a kept arc's successor is kept."""
    m = len(src)
    ksrc, kdst = ends[:m], ends[m:]
    ksucc, klab = np.empty(m, np.int64), np.empty(m, np.int64)
    for i in prange(m):
        a = 2 * i + odd[i]
        if a & 1:
            ksrc[i], kdst[i] = dst[i], src[i]
        else:
            ksrc[i], kdst[i] = src[i], dst[i]
        ksucc[i] = succ[a] >> 1
        klab[i] = lab[a]
    return ksrc, kdst, ksucc, klab


def orient(src: np.ndarray, dst: np.ndarray, n: int, phases: dict[str, float]):
    """Undirected edges as balanced arcs, arc i for edge i in the direction kept: (tails,
    heads, successors, labels, and the arcs ordered by head as :func:`merge` takes them).
    Adds the seconds of its sort, labels and orientation to ``phases``."""
    t = time.perf_counter()
    heads = _arc_heads(src, dst, empty(2 * len(src)))
    by_dst, ends = _order(heads, n)  # even degrees: pairs 2k, 2k+1 share a vertex
    succ = _partners(by_dst)
    phases["sort"] = time.perf_counter() - t
    t = time.perf_counter()
    lab = cycle_labels(succ)
    phases["labels"] = time.perf_counter() - t
    t = time.perf_counter()
    odd = _odd_kept(lab)
    out = (*_compact(succ, lab, odd, src, dst, heads), _kept_order(by_dst, ends, odd))
    phases["orient"] = time.perf_counter() - t
    return out


@njit
def _find(parent, x):
    """The root of ``x`` in a union-find forest, compressing the path behind it."""
    root = x
    while parent[root] != root:
        root = parent[root]
    while parent[x] != root:
        parent[x], x = root, parent[x]
    return root


def merge(dst: np.ndarray, succ: np.ndarray, lab: np.ndarray, n: int,
          by_dst: tuple[np.ndarray, np.ndarray] | None = None) -> int:
    """Join all cycles into one: at each vertex, an in-arc whose cycle (union-find over labels)
    differs from the first in-arc's swaps successors with it. ``by_dst``: the arcs ordered by
    head and each head's end in that order (computed when not given). Returns the initial
    cycle count."""
    order, ends = by_dst if by_dst is not None else _order(dst, n)
    return _merge(ends, succ, lab, order, gather(lab, order))


@njit
def _merge(ends, succ, lab, by_dst, lab_in):
    """``lab_in``: the labels in ``by_dst`` order (gathered in parallel beforehand, so this
    sequential pass reads them in a stream)."""
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
        r1 = _find(parent, lab_in[k])
        for j in range(k + 1, ends[v]):
            ri = _find(parent, lab_in[j])
            if ri != r1:
                parent[ri] = r1
                a1, ai = by_dst[k], by_dst[j]
                succ[a1], succ[ai] = succ[ai], succ[a1]
        k = ends[v]
    return cycles


@njit
def _place(first, splitters, owner, offset, after, length):
    k = len(splitters)
    base = np.empty(k, np.int64)
    i = np.searchsorted(splitters, first)
    total = 0
    for _ in range(k):
        base[i] = total
        total += length[i]
        i = after[i]
    return _scatter_ranks(base, owner, offset), total


@njit(parallel=True)
def _scatter_ranks(base, owner, offset):
    tour = np.empty(len(owner), np.int64)
    for a in prange(len(owner)):
        if owner[a] >= 0:  # (all are, on a single cycle; the caller checks the total)
            tour[base[owner[a]] + offset[a]] = a
    return tour


def rank(succ: np.ndarray, first: int) -> np.ndarray:
    """The arcs of the single cycle ``succ`` in order from ``first``."""
    splitters, owner, offset, after, length = _walks(succ, first)
    tour, total = _place(first, splitters, owner, offset, after, length)
    if total != len(succ):
        raise RuntimeError(f"euler cpu: the merged successors form no single cycle ({total} of {len(succ)} arcs)")
    return tour
