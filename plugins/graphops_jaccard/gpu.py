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

from typing import Any

import cupy as cp
import numpy as np

from graphops.plugin import CSR, PairIndex, chunks, grid, load_module, wait_idle

from .common import MODE_DEFINES, THREAD_MAX, WARP_MAX, Adjacency, Mode, adjacency, require_default_pairs, result
from .params import JaccardParams

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
_MODULE = load_module(__package__, "jaccard", defines={"TASK_PAIRS": TASK_PAIRS, **MODE_DEFINES})


def run(csr: CSR, pairs: PairIndex, params: JaccardParams) -> dict[str, Any]:
    require_default_pairs(params, "gpu")
    adj = adjacency(csr, params.symmetrize, params.use_weight, row_sums)
    return result(pairs, coefficients(adj, pairs.first, pairs.second))


# Pairs in the first chunk, before any timing: a graph of up to 33.5 M pairs (a 4096² grid) is
# one chunk, with one read-back (an H100 scores 70 M to 22 G pairs/s, so this is 1.5 ms to 0.5 s,
# still within the second Ctrl-C is promised; two chunks cost the grid 0.1 ms more). Chunks are
# cut by count: pairs come in edge order, so hub pairs spread over all chunks.
FIRST_CHUNK_PAIRS = 1 << 25


def coefficients(adj: Adjacency, first: Any, second: Any, cpu_key: int = -1, cpu_cut: int = 0,
                 out: Any = None, shared: bool = False) -> Any:
    """J of every pair not in a CPU share (see :func:`launch`), in chunks of about 0.2 s; with
    ``shared``, the counts |N(u) ∩ N(v)| instead (as float64, exact)."""
    out = cp.empty(len(first), cp.float64) if out is None else out
    for lo, hi in chunks(len(first), what="jaccard (gpu)", first=FIRST_CHUNK_PAIRS, sync=wait_idle):
        launch(adj, first[lo:hi], second[lo:hi], out[lo:hi], cpu_key, min(max(cpu_cut - lo, 0), hi - lo), shared)
    return out


def launch(adj: Adjacency, first: Any, second: Any, out: Any, cpu_key: int = -1, cpu_cut: int = 0,
           shared: bool = False) -> None:
    """Queue the kernels that write ``out[i]`` for every pair not in the CPU's share: those
    whose key d_u + d_v is below ``cpu_key``, or equal to it at a position below ``cpu_cut``."""
    n = len(first)
    if n == 0:
        return
    weighted = adj.weights is not None
    mode = int(Mode.of(weighted, shared))
    w = adj.weights if weighted else cp.zeros(1, cp.float64)
    wdeg = adj.wdeg if weighted else w
    light = adj.max_degree <= THREAD_MAX  # no list is long: jaccard_thread scores every pair, lists nothing
    lists = cp.empty(1 if light else n, cp.int64)
    counts = cp.zeros(2, cp.uint64)
    common = (adj.indptr, adj.indices, w, wdeg, first, second)
    _MODULE.get_function("jaccard_thread")(
        grid(n, _THREADS), (_THREADS,),
        (*common, cp.int64(n), cp.int64(cpu_key), cp.int64(cpu_cut), cp.int64(THREAD_MAX), cp.int64(WARP_MAX),
         cp.int32(mode), out, lists, counts))
    if light:  # nor a read-back of the (empty) lists' lengths
        return
    if not weighted:
        by_hub(adj, first, second, out, lists, counts, mode)
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
