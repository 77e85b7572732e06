"""Gram matrices: normalization, filling a large one on the GPU in tiles of rows, and cutting
one into parts for a Dask cluster.

:func:`normalize` works on NumPy and CuPy arrays alike. :func:`gram_rows` (GPU) is how a
kernel plugin whose backend fills rows of a Gram matrix (``sp_kernel``, ``mg_kernel``) gets
interruptible tiles sized by timing, device memory bounded by two tiles, the copy to the
host overlapped with the next tile, the lower triangle mirrored and normalization on the
GPU. It imports CuPy when called, so this module is importable without a GPU.

:func:`gram_split` cuts a call of an algorithm that declares a :class:`~graphops.host.algorithm.Gram`
into blocks of rows (or of columns) for the cluster executor: ``K[a, b]`` over one set (square)
or a set against another, each block on a worker from the whole sets; the raw values put
together, the lower triangle mirrored from the upper (as one process does), then normalized here
with the raw diagonals (of a test × train matrix: from diagonal parts when the algorithm has a
diagonal mode, else each part normalizes its own block). Each pair is solved by the same code on
the same two graphs as in one process, so the values are equal. Given the cluster's description, it
first asks the algorithm's cost estimate (:mod:`graphops.engine.gramcost`) whether the cluster pays,
and answers :class:`~graphops.engine.parts.Here` when it does not.
"""
from __future__ import annotations

import os
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from graphops.base.device import Device, device_of, to_device
from graphops.base.timing import phase
from graphops.base.work import chunks
from graphops.engine.gramcost import Site, estimate
from graphops.engine.local import run_part
from graphops.engine.parts import PARTS_PER_WORKER, Here, Part, Split, kept_slice, rows_by_cost
from graphops.host.algorithm import Algorithm

__all__ = ["normalize", "gram_rows", "mirror_upper", "gram_split", "gram_part"]


def normalize(xp: Any, K: Any, diag_rows: Any, diag_cols: Any) -> Any:
    """``K / sqrt(d_rows d_colsᵀ)``, with 0 where either diagonal entry is 0."""
    scale = xp.sqrt(xp.outer(diag_rows, diag_cols))
    return xp.where(scale > 0, K / xp.where(scale > 0, scale, 1.0), 0.0)


def gram_rows(na: int, nb: int, fill: Any, *, what: str, tile: int = 1024, progress: bool | None = None,
              mirror: bool = False, diagonals: tuple[Any, Any] | None = None, to_host: bool = True,
              row_work: Any = None, first: float | None = None, tile_entries: int | None = None) -> Any:
    """The ``na × nb`` Gram matrix, ``fill(r0, r1, out)`` writing rows ``r0:r1`` into ``out``.

    Rows go in tiles sized by :func:`graphops.base.work.chunks` (each about 0.2 s of GPU work, at
    most ``tile`` rows; ``row_work``: each row's work, e.g. its path pairs, and ``first`` the
    work of the first tile before any timing; without them every row counts the same), so Ctrl-C
    stops a long job within about a second. The host waits for the tile before the one it
    just queued, so the GPU always has the next tile and at most two are in flight. Device memory holds two tiles at a time when the
    result goes to the host: the GPU fills one while the other is copied out (a second
    stream), so the copy of the matrix hides behind the computation. ``mirror``: only entries
    on and above the diagonal are filled; the rest are copied from them. ``diagonals``:
    normalize each tile on the GPU. ``tile_entries``: most entries of a tile (``None``: 2**21, which keeps
    a pinned copy's tiles at 16 MB). ``fill`` may instead return the tile's values (float32 or
    float64, e.g. a tensor-core GEMM's float32): they are cast into ``out``, and normalized, in
    the same single pass.
    """
    rows = max(1, min(tile, (tile_entries or 1 << 21) // max(nb, 1), na))
    if row_work is None:  # cheap per pair (a GEMM): whole tiles from the start
        row_work = np.arange(nb, nb - na, -1).clip(1) if mirror else np.full(na, max(nb, 1))
        first = None
    cost = np.concatenate([[0], np.cumsum(np.asarray(row_work, dtype=np.float64) + 1.0)])
    first = float(cost[min(rows, na)]) if first is None else first
    import cupy as cp

    from graphops.base.cuda import gram_tile, wait

    computed: list[Any] = []  # the event after each tile's computation

    def sync() -> None:  # wait for the tile before the latest: one tile stays queued (no idle GPU)
        if len(computed) >= 2:
            wait(computed[-2])

    ranges = chunks(na, what=f"{what}, {na} x {nb} Gram", cost=cost, first=first, max_items=rows,
                    progress=progress, sync=sync)

    def tile(r0: int, r1: int, out: Any) -> None:
        got = fill(r0, r1, out)  # None: written to out; else the tile (float32 or float64) to put there
        drow, dcol = (None, None) if diagonals is None else (diagonals[0][r0:r1], diagonals[1])
        if got is not None or drow is not None:
            gram_tile(out if got is None else got, out, drow, dcol)

    if not to_host:
        K = cp.empty((na, nb), cp.float64)
        for r0, r1 in ranges:
            tile(r0, r1, K[r0:r1])
            computed.append(cp.cuda.get_current_stream().record())
        return mirror_upper(K) if mirror else K
    return _pipelined(na, nb, rows, tile, ranges, computed, mirror)


# A result of at most this many bytes (a 16,384² Gram) is page-locked host memory from CuPy's pool:
# a later call reuses the buffer an earlier result freed (NCI1's 135 MB sp_kernel Gram reaches the
# host in 3.4 ms that way, 110 ms when the memory must be page-locked anew). A larger one is
# ordinary memory, filled through two page-locked tiles, so no call page-locks gigabytes.
PINNED_RESULT_BYTES = 1 << 31


def _pipelined(na: int, nb: int, rows: int, tile: Any, ranges: Any, computed: list[Any], mirror: bool) -> Any:
    """Fill a host matrix tile by tile: compute on one stream, copy out on another.

    ``computed`` receives each tile's end-of-computation event (the ranges' ``sync`` waits on it).
    ``mirror``: each tile's rows get their lower triangle from the rows above them as soon as the
    tile is on the host, while the GPU computes a later tile.
    """
    import cupy as cp
    import cupyx

    from graphops.base.cuda import wait, wait_idle

    pinned = na * nb * 8 <= PINNED_RESULT_BYTES
    K = cupyx.empty_pinned((na, nb), np.float64) if pinned else np.empty((na, nb))
    staging = None if pinned else [cupyx.empty_pinned((rows, nb), np.float64) for _ in range(2)]
    # compute: a blocking stream, so it waits for the set-up work queued on the default stream
    compute, copy = cp.cuda.Stream(), cp.cuda.Stream(non_blocking=True)
    buffers = [cp.empty((rows, nb), cp.float64) for _ in range(2)]
    copied: list[Any] = [None, None]  # when each buffer's last copy to the host finished
    held: list[Any] = [None, None]  # staged: the rows each staging tile holds for K
    ends: list[int] = []  # each tile's last row + 1
    mirrored = 0  # rows before this one have their lower triangle

    def land(slot: int) -> None:  # the copy two tiles back is done with this slot (staged: rows into K)
        if copied[slot] is not None:
            wait(copied[slot])
        if held[slot] is not None:
            a, b = held[slot]
            K[a:b] = staging[slot][:b - a]
            held[slot] = None

    with compute:
        for k, (r0, r1) in enumerate(ranges):
            slot = k % 2
            land(slot)
            tile(r0, r1, buffers[slot][:r1 - r0])
            computed.append(compute.record())
            copy.wait_event(computed[-1])
            dest = K[r0:r1] if pinned else staging[slot][:r1 - r0]
            buffers[slot][:r1 - r0].get(stream=copy, out=dest, blocking=False)  # queued: overlaps the next tile
            copied[slot] = copy.record()
            held[slot] = None if pinned else (r0, r1)
            ends.append(r1)
            if mirror and k >= 2:  # tiles reach the host in order: every row before ends[k - 2] is there
                mirror_rows(K, mirrored, ends[k - 2])
                mirrored = ends[k - 2]
    wait_idle(copy)
    land(0)
    land(1)
    if mirror:
        mirror_rows(K, mirrored, na)
    return K


# Host threads that mirror a Gram matrix's rows (blocks of rows are independent: each writes its own
# lower triangle and reads only the upper one, and NumPy copies without the GIL). The rows of the
# last two tiles are mirrored after the GPU is done, a wait of its own: NCI1's 4,110² float32
# mg_kernel Gram on the 16-core H100 host, 1 -> 8 threads: 501.1 -> 498.2 ms (medians of 7).
MIRROR_THREADS = 8


def mirror_rows(K: Any, a: int, b: int, block: int = 512) -> Any:
    """Fill the lower triangle of rows ``a:b`` of a square matrix from its upper triangle (the rows
    above them and the diagonal block), in square blocks that stay in cache while transposed
    (NumPy or CuPy; 4,110² in NumPy: 37–40 ms, 59 ms a whole strip of rows at a time), a NumPy
    matrix's blocks of rows on up to MIRROR_THREADS threads."""
    xp = np if isinstance(K, np.ndarray) else __import__("cupy")

    def rows(r0: int) -> None:
        r1 = min(r0 + block, b)
        diag = K[r0:r1, r0:r1]
        diag[...] = xp.triu(diag) + xp.triu(diag, 1).T
        for c0 in range(0, r0, block):
            c1 = min(c0 + block, r0)
            K[r0:r1, c0:c1] = K[c0:c1, r0:r1].T

    starts = range(a, b, block)
    threads = min(MIRROR_THREADS, os.cpu_count() or 1, len(starts))
    if xp is np and threads > 1:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(rows, starts[::-1]))  # the widest blocks first
    else:
        for r0 in starts:
            rows(r0)
    return K


def mirror_upper(K: Any, block: int = 512) -> Any:
    """Copy the upper triangle of a square matrix onto its lower one (NumPy or CuPy)."""
    return mirror_rows(K, 0, len(K), block)


# on a cluster -------------------------------------------------------------------------------

def gram_split(algo: Algorithm, inputs: Mapping[str, Any], params: Any, workers: int,
               site: Site | None = None) -> Split | Here:
    """The :class:`Split` of a call of ``algo`` (which declares ``gram``): a pair's work is taken as
    ``w_a w_b + 1``, with ``w`` a graph's node count (``work="nodes"``: a product graph's size) or
    its square (``"node_pairs"``). A test × train matrix is cut into blocks of rows (test graphs),
    each against the whole training set, or of columns when ``cut_larger`` and the training set
    is the larger. ``site``: the cluster the call was given (:mod:`graphops.engine.gramcost`);
    when the algorithm's estimate says it would not pay there, :class:`Here` with the estimate
    (``None``: no estimate, always cut)."""
    g = algo.gram
    cost = None if site is None else estimate(algo, inputs, params, workers, site)
    if cost is not None and not cost.pays:
        return Here(cost.why())
    graphs, other = inputs["graphs"], inputs.get(g.second)
    w = [_graph_work(s, g.work) for s in (graphs, other) if s is not None]
    wa, kind = w[0], "rows"
    n_parts = workers * PARTS_PER_WORKER
    if other is None:  # row i: the pairs (i, j >= i)
        per_row = wa * np.cumsum(wa[::-1])[::-1] + np.arange(len(wa), 0, -1)
        parts = [Part((kind, g.second, ((p.select[0], p.select[1]),)), p.cost) for p in rows_by_cost(per_row, n_parts)]
    else:
        if g.cut_larger and len(w[1]) > len(wa):  # column j: the pairs (i, j) of every test graph i
            kind, per_row = "cols", w[1] * wa.sum() + len(wa)
        else:
            per_row = wa * w[1].sum() + len(w[1])
        shares = tapered(workers, n_parts // max(workers, 1))
        turns = 4 * max(1, round(sum(shares) / min(shares)))  # the smallest part takes about four turns
        order = dealt(len(per_row), turns, max(1, min(DEALT, len(per_row) // (4 * turns))))  # 4+ runs a turn
        parts = [Part((kind, g.second, runs_of(order[p.select[0]:p.select[1]])), p.cost)
                 for p in rows_by_cost(per_row[order], n_parts, shares)]
    normalize_here = _normalized(algo, params) and not _self_normalized(algo, params, other)
    if other is not None and normalize_here:  # the diagonals of both sets, in parts of their own
        for slot, ws in (("graphs", w[0]), (g.second, w[1])):
            parts += [Part(("diagonal", slot, ((p.select[0], p.select[1]),)), p.cost)
                      for p in rows_by_cost(ws * ws + 1, workers)]
    shape = (len(wa), len(wa) if other is None else len(w[1]))
    merge = _GramMerge(tuple(p.select for p in parts), shape, other is None, normalize_here,
                       graphs.device is Device.CPU)
    return Split(parts, gram_part, merge, reason="" if cost is None else cost.why())


# A worker's parts of a test x train matrix, costliest first, take shares 1, TAPER, TAPER², ... of
# its work, so that its last part, whose block is copied off the GPU and placed after every other
# part has ended, is its smallest (1.0: equal parts). Measured on 2 H200s (2026-11-28), mg_kernel
# 5,000 x 100,000 on 2 workers: 11,303 ms with equal parts (a merge of 150 ms after the last part),
# 11,068 ms tapered by 0.5 (a merge of 31 ms); 1,000 x 20,000: 528 against 510 ms. Values identical.
TAPER = 0.5


def tapered(workers: int, per_worker: int) -> list[float]:
    """The parts' shares of the work, ``workers`` parts of each size (:data:`TAPER`, in (0, 1])."""
    taper = float(TAPER)
    if not 0.0 < taper <= 1.0:
        raise ValueError(f"graphops.engine.gram.TAPER must be in (0, 1] (1: equal parts), got {TAPER!r}")
    return [max(taper ** r, 1e-6) for r in range(per_worker) for _ in range(workers)]


# A test x train block's graphs: runs of DEALT graphs of the set (fewer where the set is small),
# dealt in turn to four times as many turns as the smallest part's share goes into the whole (each
# turn's runs from all over the set), so that each part, at least three whole turns and pieces of
# two, gets graphs from all over it. A pair's true cost also grows with what the work estimate does
# not see (mg_kernel's solver iterations grow with the graphs' size), and sets are often ordered by
# size or class: contiguous blocks of about equal estimated work took 0.6 to 1.7 times the mean on
# 4 GPUs (mg_kernel, 5,000 x 100,000 graphs ordered by size).
DEALT = 32


def dealt(n: int, parts: int, run: int = DEALT) -> np.ndarray:
    """The order of ``n`` graphs in which runs of ``run`` consecutive ones are dealt to ``parts``
    parts in turn: runs 0, parts, 2 parts, ..., then 1, parts + 1, ... (contiguous ranges of this
    order each take runs from all over the set)."""
    runs = np.arange(-(-n // run))
    by_turn = np.argsort(runs % max(parts, 1), kind="stable")
    starts = by_turn * run
    lengths = np.minimum(starts + run, n) - starts
    return (np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))).astype(np.int64)


def runs_of(index: np.ndarray) -> tuple[tuple[int, int], ...]:
    """``index`` (ascending within runs) as its maximal ranges ``(a, b)`` of consecutive values."""
    if len(index) == 0:
        return ()
    cut = np.flatnonzero(np.diff(index) != 1) + 1
    starts = np.concatenate([[0], cut])
    ends = np.concatenate([cut, [len(index)]])
    return tuple((int(index[s]), int(index[e - 1]) + 1) for s, e in zip(starts, ends))


def _graph_work(graphs: Any, work: str) -> np.ndarray:
    """Each graph's factor of a pair's work (``Gram.work``): its nodes, their square, or its nodes
    and edges (a product graph's size: a sparse product's entries grow with both sets' edges)."""
    nodes = np.diff(to_device(graphs.node_ptr, Device.CPU)).astype(np.float64)
    if work == "node_pairs":
        return nodes ** 2
    if work == "nodes_edges":
        return nodes + np.diff(to_device(graphs.edge_ptr, Device.CPU)).astype(np.float64)
    return nodes


def _normalized(algo: Algorithm, params: Any) -> bool:
    return algo.gram.normalize is not None and bool(getattr(params, algo.gram.normalize))


def _self_normalized(algo: Algorithm, params: Any, other: Any) -> bool:
    """Whether a test × train part normalizes its own block: an algorithm without a diagonal mode
    computes each of its graphs' K[a, a] in the part (a graph's own value, the same in any set),
    where diagonal parts would need a call per graph."""
    return other is not None and _normalized(algo, params) and algo.gram.diagonal is None


def gram_part(algo: Algorithm, inputs: Mapping[str, Any], params: Any, backend: str, select: tuple) -> Any:
    """On a worker: a block of raw Gram rows (or columns), or raw diagonal entries of one set."""
    kind, slot, runs = select
    g = algo.gram
    raw = params.model_copy(update={g.normalize: False}) if g.normalize is not None else params
    # a GPU backend works on sets kept on the worker's GPU: its block stays there (the client
    # takes it device to device, or the core copies it to the host)
    device = "gpu" if algo.backends[backend].device == "gpu" else None
    if kind in ("rows", "cols"):
        other, graphs = inputs.get(slot), inputs["graphs"]
        with phase("slice", sync=True):  # the part's graphs, cut from the sets kept here (on its device)
            if kind == "cols":
                both = {"graphs": kept_slice(graphs, device=device), slot: kept_slice(other, runs, device=device)}
            elif other is None:  # rows r0:r1 of a square matrix: their pairs (i, j >= i)
                (r0, r1), = runs
                both = {"graphs": kept_slice(graphs, ((r0, r1),), device=device),
                        slot: kept_slice(graphs, ((r0, len(graphs)),), device=device)}
            else:
                both = {"graphs": kept_slice(graphs, runs, device=device), slot: kept_slice(other, device=device)}
        with phase("compute", sync=True):
            return run_part(algo, both, params if _self_normalized(algo, params, other) else raw, backend)
    with phase("slice", sync=True):
        subset = kept_slice(inputs[slot], runs, device=device)
    with phase("compute", sync=True):
        return run_part(algo, {"graphs": subset}, raw.model_copy(update={g.diagonal: True}), backend)


# Threads placing a host result's blocks as they come (NumPy copies run without the GIL), each block
# in pieces of rows (about PIECE_BYTES) that a thread takes off the GPU into a pinned buffer of its
# own and copies into place. Measured on 4 H100s (2026-11-27), one 5,000 x 6,250 float64 block
# (250 MB) of mg_kernel's 5,000 x 100,000 matrix in dealt runs of columns: off the GPU into pageable
# memory 62 ms, into pinned 4.6 ms; placed into a matrix never written before 584 ms (page faults),
# into one already written 98 ms (162 ms with the pageable copy). The four last blocks, which come
# together, took 598 ms after the last part ended when placed one after another, 218-459 ms on
# four threads. So the matrix is written once by these threads while the parts run (start), and
# the blocks go through pinned memory, piece by piece on all the threads.
PLACING_THREADS = 8
PIECE_BYTES = 32 << 20


@dataclass(frozen=True)
class _GramMerge:
    selects: tuple
    shape: tuple[int, int]
    square: bool
    normalize: bool
    host: bool  # the caller's sets live on the host: so does the result

    state: dict = field(default_factory=dict, compare=False)  # a host result's blocks placed as they came

    def _placed_as_they_come(self, kind: str) -> bool:
        return self.host and not self.normalize and not self.square and kind in ("rows", "cols")

    def start(self) -> None:
        """The parts were submitted: a host result's matrix made now and written once (its pages
        taken from the system) by the placing threads while the workers compute."""
        if any(self._placed_as_they_come(kind) for kind, _, _ in self.selects):
            self._open()

    def _open(self) -> dict:
        if "K" not in self.state:
            K = np.empty(self.shape)
            pool = ThreadPoolExecutor(max(1, min(PLACING_THREADS, os.cpu_count() or 1)))
            weakref.finalize(self, pool.shutdown, wait=False)  # a call that failed midway: its threads end
            rows = max(1, PIECE_BYTES // max(1, K.strides[0]))
            touched = [pool.submit(K[r0:r0 + rows].fill, 0.0) for r0 in range(0, len(K), rows)]
            self.state.update(K=K, pool=pool, placing={}, touched=touched, staging=threading.local())
        return self.state

    def add(self, k: int, value: Any) -> bool:
        """A block as it arrives (the executor calls this while other parts still run): a raw host
        result gets it copied into place now, in pieces of rows on the placing threads, so the
        copies off the GPU overlap the computation and the last blocks, which come together, are
        placed side by side. Whether it will be placed (the executor then keeps no second copy of it)."""
        kind, _, runs = self.selects[k]
        if not self._placed_as_they_come(kind):
            return False
        state = self._open()
        rows = max(1, PIECE_BYTES // max(1, value.dtype.itemsize * (value.shape[1] if value.ndim > 1 else 1)))
        state["placing"][k] = [state["pool"].submit(self._put, kind, runs, value, r0, min(r0 + rows, len(value)))
                               for r0 in range(0, len(value), rows)] or [state["pool"].submit(lambda: None)]
        return True

    def _put(self, kind: str, runs: tuple, value: Any, r0: int, r1: int) -> None:
        """Rows ``r0:r1`` of a block put in place: off the GPU through this thread's pinned buffer, once
        the matrix is written (a first write still running on another thread would zero what this one
        places; every one of them was taken by a thread before this task, so the wait ends)."""
        for touched in self.state["touched"]:
            touched.result()
        piece = value[r0:r1]
        if device_of(value) is Device.GPU:
            import cupy
            import cupyx

            with piece.device:
                piece = cupy.ascontiguousarray(piece)
                buf = getattr(self.state["staging"], "buf", None)
                if buf is None or buf.nbytes < piece.nbytes or buf.dtype != piece.dtype:
                    buf = self.state["staging"].buf = cupyx.empty_pinned(max(piece.size, PIECE_BYTES // piece.itemsize),
                                                                         piece.dtype)
                piece = piece.get(out=buf[:piece.size].reshape(piece.shape))
        _place(self.state["K"], kind, runs, piece, (r0, r1))

    def __call__(self, values: list[Any]) -> Any:
        if "K" in self.state:  # blocks went to the host as they came (those placed are None here)
            for k, v in enumerate(values):
                if k not in self.state["placing"]:
                    self.add(k, v)
            try:
                for done in [*self.state["touched"], *(f for fs in self.state["placing"].values() for f in fs)]:
                    done.result()  # a block's error is raised here
            finally:
                self.state["pool"].shutdown(wait=True)
            return self.state["K"]
        K = self._merged(values)
        return to_device(K, Device.CPU) if self.host else K

    def _merged(self, values: list[Any]) -> Any:
        xp = device_of(values[0]).xp
        K = xp.empty(self.shape, dtype=xp.float64)
        diag: dict[str, Any] = {"graphs": xp.empty(self.shape[0]), "other": xp.empty(self.shape[1])}
        for (kind, slot, runs), v in zip(self.selects, values):
            if kind == "rows" and self.square:
                (r0, r1), = runs
                K[r0:r1, r0:] = v
            elif kind in ("rows", "cols"):
                _place(K, kind, runs, v)
            else:
                (r0, r1), = runs
                diag["graphs" if slot == "graphs" else "other"][r0:r1] = xp.asarray(v)
        if self.square:
            K = mirror_upper(K)
        if not self.normalize:
            return K
        if self.square:
            d = xp.diag(K).copy()
            return normalize(xp, K, d, d)
        return normalize(xp, K, diag["graphs"], diag["other"])


def _place(K: Any, kind: str, runs: tuple[tuple[int, int], ...], block: Any,
           rows: tuple[int, int] | None = None) -> None:
    """A test x train block into ``K``: its rows (``kind="rows"``) or columns are the runs' graphs, in
    order. ``rows``: ``block`` holds only the block's rows ``r0:r1``."""
    r0, r1 = (0, len(block)) if rows is None else rows
    k = 0
    for a, b in runs:
        if kind == "cols":
            K[r0:r1, a:b] = block[:, k:k + b - a]
        else:  # the block's rows k:k + b - a are K's a:b; those within r0:r1
            lo, hi = max(k, r0), min(k + b - a, r1)
            if lo < hi:
                K[a + lo - k:a + hi - k] = block[lo - r0:hi - r0]
        k += b - a
