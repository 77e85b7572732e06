"""GPU backend of ``jaccard``: load-balanced CUDA kernels (kernels/jaccard.cu) through CuPy.

Per chunk of pairs, ``jaccard_thread`` scores every pair whose shorter list has at most
``THREAD_MAX`` entries and lists the others on the device. Unweighted, the listed pairs are
then sorted by hub (the vertex with the longer list) and scored a hub per block, each entry of
the shorter lists looked up in the hub's hash set (shared memory) or bitmap (global memory,
for the largest hubs): :func:`by_hub`, which reads the two list lengths back (one small copy;
none when no vertex has more than ``THREAD_MAX`` neighbours, as on a grid).
Weighted, ``jaccard_warp`` and ``jaccard_block`` drain the lists with binary searches, queued
back to back. Pairs go in chunks of about equal work (``graphops.base.work.chunks``), so
Ctrl-C stops a long call within about a second.
"""
from __future__ import annotations

import sys
from typing import Any

import cupy as cp
import numpy as np

from graphops.plugin import CSR, PairIndex, chunks, grid, load_module, wait_idle

from . import measures
from .common import (FORMULA_DEFINES, MODE_DEFINES, THREAD_MAX, WARP_MAX, Adjacency, Measure, Mode, adjacency,
                     result)
from .params import JaccardParams, SimilarityParams

_THREADS = 256

# Hubs of the heavy pairs by degree: (largest degree, hash slots, threads per block) of each class
# whose hash set sits in shared memory (slots >= 2 x degree); larger hubs get bitmaps over all
# vertices, at most BITMAP_BYTES of them at a time.
HASH_CLASSES = ((512, 1024, 256), (2048, 4096, 256), (8192, 16384, 512))
BITMAP_BYTES = 1 << 30
# A task (one block, one hub) probes about max(4 x the hub's degree, TASK_WORK) entries of at
# most TASK_PAIRS pairs, so building the hub's set costs at most a quarter of the probing and a
# hub's pairs spread over many blocks.
TASK_WORK = 32768
TASK_PAIRS = 1024
_MODULE = load_module(__package__, "jaccard", defines={"TASK_PAIRS": TASK_PAIRS, **MODE_DEFINES, **FORMULA_DEFINES})


def run(csr: CSR, pairs: PairIndex, params: JaccardParams) -> dict[str, Any]:
    if not params.default_pairs():
        return run_measure(csr, pairs, params)
    adj = adjacency(csr, params.symmetrize, params.use_weight, row_sums)
    return result(pairs, coefficients(adj, pairs.first, pairs.second))


def run_measure(csr: CSR, pairs: PairIndex, params: SimilarityParams) -> dict[str, Any]:
    """Any measure of the family (``params.measure``) on the pairs it names (:mod:`.measures`)."""
    return measures.run_measure(csr, pairs, params, sys.modules[__name__])


def pair_scores(adj: Adjacency, t: measures.Tables, first: Any, second: Any) -> Any:
    """A family member's score of every given pair: the kernels' raw mode, then its formula."""
    return finish(adj, t, first, second, coefficients(adj, first, second, mode=Mode(t.acc), aux=t.aux))


def finish(adj: Adjacency, t: measures.Tables, first: Any, second: Any, raw: Any) -> Any:
    """The measure's formula on each pair's raw count or sum, in place."""
    n = len(raw)
    if n:
        _MODULE.get_function("finish_pairs")(grid(n, _THREADS), (_THREADS,),
                                             (adj.indptr, first, second, t.size, raw, cp.int64(n), cp.int32(t.formula),
                                              cp.int32(t.weighted), raw))
    return raw


# Pairs in the first chunk, before any timing: a graph of up to 33.5 M pairs (a 4096² grid) is
# one chunk, with one read-back (an H100 scores 70 M to 22 G pairs/s, so this is 1.5 ms to 0.5 s,
# still within the second Ctrl-C is promised; two chunks cost the grid 0.1 ms more). Chunks are
# cut by count: pairs come in edge order, so hub pairs spread over all chunks.
FIRST_CHUNK_PAIRS = 1 << 25


def coefficients(adj: Adjacency, first: Any, second: Any, cpu_key: int = -1, cpu_cut: int = 0,
                 out: Any = None, mode: Mode | None = None, aux: Any = None) -> Any:
    """J of every pair not in a CPU share (see :func:`launch`), in chunks of about 0.2 s; with
    ``mode``, that mode's value instead (the counts |N(u) ∩ N(v)| as float64, exact; a sum of the
    family, ``aux`` g(x) for ``Mode.AUX_SUM``)."""
    out = cp.empty(len(first), cp.float64) if out is None else out
    for lo, hi in chunks(len(first), what="jaccard (gpu)", first=FIRST_CHUNK_PAIRS, sync=wait_idle):
        launch(adj, first[lo:hi], second[lo:hi], out[lo:hi], cpu_key, min(max(cpu_cut - lo, 0), hi - lo), mode, aux)
    return out


def launch(adj: Adjacency, first: Any, second: Any, out: Any, cpu_key: int = -1, cpu_cut: int = 0,
           mode: Mode | None = None, aux: Any = None) -> None:
    """Queue the kernels that write ``out[i]`` for every pair not in the CPU's share: those
    whose key d_u + d_v is below ``cpu_key``, or equal to it at a position below ``cpu_cut``."""
    n = len(first)
    if n == 0:
        return
    weighted = adj.weights is not None
    mode = Mode.of(weighted) if mode is None else Mode(mode)
    w = adj.weights if weighted else cp.zeros(1, cp.float64)
    wdeg = adj.wdeg if weighted and adj.wdeg is not None else w
    light = adj.max_degree <= THREAD_MAX  # no list is long: jaccard_thread scores every pair, lists nothing
    lists = cp.empty(1 if light else n, cp.int64)
    counts = cp.zeros(2, cp.uint64)
    common = (adj.indptr, adj.indices, w, wdeg, w if aux is None else aux, first, second)
    _MODULE.get_function("jaccard_thread")(
        grid(n, _THREADS), (_THREADS,),
        (*common, cp.int64(n), cp.int64(cpu_key), cp.int64(cpu_cut), cp.int64(THREAD_MAX), cp.int64(WARP_MAX),
         cp.int32(mode), out, lists, counts))
    if light:  # nor a read-back of the (empty) lists' lengths
        return
    if not mode.sums:
        by_hub(adj, first, second, out, lists, counts, int(mode))
        return
    _MODULE.get_function("jaccard_warp")(grid(32 * n, _THREADS, per_sm=8), (_THREADS,),
                                         (*common, cp.int32(mode), out, lists, counts))
    _MODULE.get_function("jaccard_block")(grid(_THREADS * n, _THREADS, per_sm=4), (_THREADS,),
                                          (*common, cp.int32(mode), out, lists, counts, cp.int64(n)))


def by_hub(adj: Adjacency, first: Any, second: Any, out: Any, lists: Any, counts: Any, mode: int) -> None:
    """Score the heavy pairs ``jaccard_thread`` listed (warp list in front, block list at the back
    of ``lists``), grouped by hub: one sort by (hub degree, hub), tasks of one hub, a launch per
    class of hub degree."""
    n = len(first)
    c_warp, c_block = (int(c) for c in counts.get())
    if c_warp + c_block == 0:
        return
    heavy = lists[:c_warp] if not c_block else cp.concatenate([lists[:c_warp], lists[n - c_block:]])
    m = len(heavy)
    keys, short = cp.empty(m, cp.int64), cp.empty(m, cp.int32)
    _MODULE.get_function("hub_keys")(grid(m, _THREADS), (_THREADS,),
                                     (adj.indptr, first, second, heavy, cp.int64(m), keys, short))
    order = cp.argsort(keys)
    keys, pairs, short = keys[order], heavy[order], short[order].astype(cp.int64)
    degree = keys >> 32
    entry = cp.zeros(m + 1, cp.int64)
    cp.cumsum(short, out=entry[1:])
    start = cp.ones(m, dtype=bool)
    start[1:] = keys[1:] != keys[:-1]
    group = cp.cumsum(start) - 1
    group_first = cp.flatnonzero(start)
    before = entry[:-1] + 32 * cp.arange(m, dtype=cp.int64)  # work before each pair: entries + 32 a pair
    work = (before - before[group_first][group]) // cp.maximum(4 * degree, TASK_WORK)
    count = (cp.arange(m, dtype=cp.int64) - group_first[group]) // TASK_PAIRS
    start[1:] |= (work[1:] != work[:-1]) | (count[1:] != count[:-1])
    starts = cp.flatnonzero(start)
    task_ptr = cp.concatenate([starts, cp.asarray([m], cp.int64)])
    limits = cp.asarray([c[0] for c in HASH_CLASSES], cp.int64)
    bounds = [0, *cp.searchsorted(degree[starts], limits, side="right").get().tolist()]
    common = (adj.indptr, adj.indices, first, second, pairs, keys, entry, task_ptr)
    fn = _MODULE.get_function("jaccard_hub")
    for (_, slots, threads), t0, t1 in zip(HASH_CLASSES, bounds[:-1], bounds[1:]):
        if t1 > t0:
            fn.max_dynamic_shared_size_bytes = 4 * slots
            fn(grid(t1 - t0, 1, per_sm=2048 // threads), (threads,),
               (*common, cp.int64(t0), cp.int64(t1 - t0), cp.int32(33 - slots.bit_length()), _NULL, _NULL,
                cp.int64(0), cp.int32(mode), out), shared_mem=4 * slots)
    if bounds[-1] < len(starts):
        _by_bitmap(adj, keys, starts[bounds[-1]:], bounds[-1], common, mode, out)


_NULL = np.uint64(0)


def _by_bitmap(adj: Adjacency, keys: Any, starts: Any, t0: int, common: tuple, mode: int, out: Any) -> None:
    """The tasks of the largest hubs (task ``t0`` on): bitmaps of as many hubs as BITMAP_BYTES
    holds, then their tasks, batch after batch."""
    task_hub = keys[starts] & 0xFFFFFFFF
    new = cp.ones(len(task_hub), dtype=bool)
    new[1:] = task_hub[1:] != task_hub[:-1]
    rank = cp.cumsum(new, dtype=cp.int64) - 1
    hubs = task_hub[new]
    words = (adj.n_vertices + 31) // 32
    batch = max(1, BITMAP_BYTES // (4 * words))
    bits = cp.empty(min(batch, len(hubs)) * words, cp.uint32)
    fill, fn = _MODULE.get_function("hub_bitmaps"), _MODULE.get_function("jaccard_hub")
    task_bounds = cp.searchsorted(rank, cp.arange(0, len(hubs) + batch, batch), side="left").get().tolist()
    for j, (a, b) in enumerate(zip(task_bounds[:-1], task_bounds[1:])):
        if b <= a:
            continue
        some = hubs[j * batch:(j + 1) * batch]
        bits.fill(0)
        fill(grid(len(some), 1, per_sm=8), (_THREADS,), (adj.indptr, adj.indices, some, cp.int64(len(some)),
                                                         cp.int64(words), bits))
        fn(grid(b - a, 1, per_sm=2), (1024,),
           (*common, cp.int64(t0 + a), cp.int64(b - a), cp.int32(0), bits, rank[a:b] - j * batch,
            cp.int64(words), cp.int32(mode), out))


def pair_keys(adj: Adjacency, first: Any, second: Any) -> Any:
    """d_u + d_v per pair (int64), the work key of the hybrid split."""
    n = len(first)
    keys = cp.empty(n, cp.int64)
    if n:
        _MODULE.get_function("pair_keys")(grid(n, _THREADS), (_THREADS,),
                                          (adj.indptr, first, second, cp.int64(n), keys))
    return keys


def row_sums(indptr: Any, w: Any) -> Any:
    n = len(indptr) - 1
    out = cp.empty(n, cp.float64)
    if n:
        _MODULE.get_function("row_sums")(grid(n, _THREADS), (_THREADS,), (indptr, w, cp.int64(n), out))
    return out


# ---- two-hop pairs (kernels/jaccard.cu's two_hop) ---------------------------------------------------

TWO_HOP_THREADS = 256  # the kernel's block (TWO_HOP in the source)
# The blocks' lane arrays (a count, a sum and a bit per vertex each) take at most this much; at most
# eight blocks a multiprocessor.
LANE_BYTES = 512 << 20
# top_k: the rows a launch may append before the k best so far prune them (24 bytes each); the first
# launch walks at most this many wedges, so it cannot overflow; a later one that does is split in two.
BEST_ROWS = 1 << 24
# First chunk of the full two-hop listing, in wedges walked, before any timing.
FIRST_CHUNK_WEDGES = 1 << 26


class _Lanes:
    """Each block's arrays over all vertices (count, sum, bits, group flags), zero between uses: the
    kernel clears what it wrote as it reads it back."""

    def __init__(self, n: int, summed: bool) -> None:
        from graphops.plugin import gpu_attribute

        words = (n + 31) // 32
        groups = (words + TWO_HOP_THREADS - 1) // TWO_HOP_THREADS
        per_lane = 4 * n + (8 * n if summed else 0) + 4 * words + groups
        self.blocks = int(max(1, min(8 * gpu_attribute("MultiProcessorCount"), LANE_BYTES // max(per_lane, 1))))
        self.cnt = cp.zeros(self.blocks * n, cp.int32)
        self.acc = cp.zeros(self.blocks * n if summed else 1, cp.float64)
        self.bits = cp.zeros(self.blocks * words, cp.uint32)
        self.flags = cp.zeros(self.blocks * groups, cp.uint8)
        self.next = cp.zeros(1, cp.uint64)


def _walk(adj: Adjacency, t: measures.Tables, lanes: _Lanes, us: Any, upper: bool, pass_: int, counts: Any = None,
          offsets: Any = None, out: tuple | None = None, best: tuple = (-np.inf, 0, 0), found: Any = None,
          capacity: int = 0) -> None:
    """One launch of the kernel's pass ``pass_`` over the first vertices ``us`` (what a pass does not
    use is a one-element stand-in)."""
    none = cp.empty(1, cp.int64)
    counts, offsets, found = (none if a is None else a for a in (counts, offsets, found))
    out = (none, none, cp.empty(1, cp.float64)) if out is None else out
    lanes.next.fill(0)
    _MODULE.get_function("two_hop")(
        (lanes.blocks,), (TWO_HOP_THREADS,),
        (adj.indptr, adj.indices, t.weights, t.size, t.aux, us, cp.int64(len(us)), cp.int64(adj.n_vertices),
         cp.int32(upper), cp.int32(t.acc), cp.int32(t.formula), cp.int32(t.weighted), cp.int32(pass_),
         lanes.cnt, lanes.acc, lanes.bits, lanes.flags, lanes.next, counts, offsets, *out,
         cp.float64(best[0]), cp.int64(best[1]), cp.int64(best[2]), found, cp.int64(capacity)))


def two_hop(adj: Adjacency, measure: Measure, t: measures.Tables, vertices: Any = None, top_k: int | None = None,
            upper: bool | None = None) -> tuple[Any, Any, Any]:
    """(first, second, score) of the pairs that share a neighbour, as :func:`.measures.two_hop`
    gives them on the CPU (the same pairs in the same order; the same scores, sums added in
    another order: within a few units of the last place). Each launch takes its first vertices
    heaviest first, so a hub's long walk starts early instead of last."""
    us = cp.arange(adj.n_vertices, dtype=cp.int64) if vertices is None else cp.asarray(vertices, cp.int64)
    work = adj.wedges(us)
    cost = np.concatenate([[0], np.cumsum(cp.asnumpy(work) + 1)])
    lanes = _Lanes(adj.n_vertices, Mode(t.acc).sums)
    what = f"{measure.name} two-hop (gpu)"
    if top_k is not None:
        upper = vertices is None if upper is None else upper
        return _best(adj, t, lanes, us, work, cost, upper, top_k, what)
    counts = cp.zeros(len(us), cp.int64)
    for lo, hi in chunks(len(us), what=what, cost=cost, first=FIRST_CHUNK_WEDGES, sync=wait_idle):
        order = cp.argsort(-work[lo:hi])
        part = cp.empty(hi - lo, cp.int64)
        _walk(adj, t, lanes, us[lo:hi][order], False, 0, counts=part)
        counts[lo + order] = part
    offsets = cp.zeros(len(us) + 1, cp.int64)
    cp.cumsum(counts, out=offsets[1:])
    total = int(offsets[-1])
    out = cp.empty(total, cp.int64), cp.empty(total, cp.int64), cp.empty(total, cp.float64)
    for lo, hi in chunks(len(us), what=what, cost=cost, first=FIRST_CHUNK_WEDGES, sync=wait_idle):
        order = cp.argsort(-work[lo:hi])
        _walk(adj, t, lanes, us[lo:hi][order], False, 1, offsets=offsets[lo + order], out=out, capacity=total)
    return out


def _best(adj: Adjacency, t: measures.Tables, lanes: _Lanes, us: Any, work: Any, cost: Any, upper: bool, k: int,
          what: str) -> tuple[Any, Any, Any]:
    """The k best two-hop pairs: each launch appends only the pairs that beat the k-th best so far
    (the first launch, walking at most BEST_ROWS wedges, all of its pairs), which are merged in."""
    capacity = max(BEST_ROWS, adj.n_vertices)  # a first vertex alone has fewer pairs than vertices
    buf = cp.empty(capacity, cp.int64), cp.empty(capacity, cp.int64), cp.empty(capacity, cp.float64)
    found = cp.zeros(1, cp.uint64)
    best = (cp.empty(0, cp.int64), cp.empty(0, cp.int64), cp.empty(0, cp.float64))
    bar = (-np.inf, 0, 0)  # the k-th best so far: its score, then its pair

    def piece(part: Any) -> None:
        nonlocal best, bar
        found.fill(0)
        _walk(adj, t, lanes, part, upper, 2, out=buf, best=bar, found=found, capacity=capacity)
        m = int(found.get()[0])
        if m > capacity:  # more beat the bar than the buffer holds: again, in halves
            piece(part[:len(part) // 2])
            piece(part[len(part) // 2:])
            return
        best = measures.best_of(*(cp.concatenate([a, b[:m]]) for a, b in zip(best, buf)), k)
        if len(best[0]) == k:
            bar = (float(best[2][-1]), int(best[0][-1]), int(best[1][-1]))

    for lo, hi in chunks(len(us), what=what, cost=cost, first=BEST_ROWS):
        piece(us[lo:hi][cp.argsort(-work[lo:hi])])
    return best
