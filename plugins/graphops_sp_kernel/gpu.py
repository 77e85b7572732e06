"""GPU backend of ``sp_kernel``: CUDA kernels (kernels/sp_kernel.cu) through CuPy, cuBLAS for X·Xᵀ.

One launch computes the shortest paths of every graph (a block per graph); the histogram
path then builds the feature matrix with a few array operations and one GEMM per tile of
rows; the FCSP path runs a block per graph pair, one launch per tile of rows. Device memory
holds two tiles of the Gram matrix when the result goes to the host, one being copied out
while the next is computed.

Decomposition of FCSP: pairs go to blocks (a grid-stride loop, so one launch covers a whole
tile of the Gram matrix, not a launch per pair), and inside a block the threads split graph
a's shortest paths while all of them stream graph b's list in the same order, which makes the
loads of b's path arrays warp-uniform broadcasts and keeps V (n_a × n_b) in shared memory.
Splitting a single pair over several blocks (a 2-D decomposition) pays only for graphs with
many thousands of paths, which the TU sets do not have; the pair count is what fills the GPU.
"""
from __future__ import annotations

from typing import Any

import cupy as cp
import numpy as np

from graphops.plugin import (CSR, Device, chunks, gpu_attribute, gram_rows, grid, load_module,
                             wait_idle)

from .common import (CELL_COST, DENSE_KEYS, GPU_LENGTH_COST, GPU_WALK_STEP_COST, ROW_COST, TABLE_LIMIT, alphabet,
                     compact, histograms, lengths, matrix_form_possible, negative_cycle_error, node_inputs)
from .params import SPKernelParams

_MODULE = load_module(__package__, "sp_kernel", options=("--fmad=false",),  # match the CPU's rounding
                      defines={"WALK_STEP_COST": GPU_WALK_STEP_COST, "LENGTH_COST": GPU_LENGTH_COST,
                               "CELL_COST": CELL_COST, "ROW_COST": ROW_COST})
_THREADS = 128


def counts_gram(a: Any, b: Any, out: Any) -> None:
    """``out = a @ b.T`` for float16 ``a`` (r × k) and ``b`` (c × k), C-contiguous with k a multiple
    of 8, into float32 ``out`` (r × c): one cuBLAS GEMM on the tensor cores, accumulating in float32.
    Exact where every entry of ``a`` and ``b`` is an integer of at most 2048 and every entry of
    the product is below 2**24 (counts: every partial sum is then a float32 integer too)."""
    from cupy_backends.cuda.libs import cublas

    r, k = a.shape
    c = b.shape[0]
    one, zero = np.ones(1, np.float32), np.zeros(1, np.float32)
    # row-major out (r × c) is column-major outᵀ (c × r) = b · aᵀ
    cublas.gemmEx(cp.cuda.device.get_cublas_handle(), _OP_T, _OP_N, c, r, k, one.ctypes.data, b.data.ptr, _R_16F,
                  k, a.data.ptr, _R_16F, k, zero.ctypes.data, out.data.ptr, _R_32F, c, _COMPUTE_32F, _GEMM_DEFAULT)


# cuBLAS / CUDA enumerators (cublas_api.h, library_types.h)
_OP_N, _OP_T, _R_16F, _R_32F, _COMPUTE_32F, _GEMM_DEFAULT = 0, 1, 2, 0, 68, -1


def run(graphs: CSR, other: CSR | None, params: SPKernelParams) -> Any:
    """Gram matrix ``K[a, b]`` of ``graphs`` against ``other`` (or against itself), float64.

    Computed in tiles of rows; a NumPy array when the caller's graphs live on the host (each
    tile's copy to the host overlaps the next tile's computation), else a CuPy array.
    """
    symmetric = other is None
    other = graphs if symmetric else other  # K against itself: the same set on both sides
    weighted = graphs.weights is not None or other.weights is not None
    direct = _direct_histograms(graphs, other, params, symmetric, weighted) if params.use_histogram else None
    if direct is not None:
        fill, da, db, mirror, row_work = direct
    else:
        pa = paths(graphs)
        pb = pa if symmetric else paths(other)
        lens = lengths(cp, pa["dist"], pb["dist"], weighted=weighted)
        gram = _histogram_gram if params.use_histogram else _fcsp_gram
        fill, da, db, mirror, row_work = gram(graphs, other, pa, pb, lens, params, symmetric)
    on_gpu = graphs.home is Device.GPU
    return gram_rows(graphs.n_graphs, other.n_graphs, fill, what="sp_kernel on the GPU", tile=params.tile,
                     progress=params.progress, mirror=mirror, diagonals=(da, db) if params.normalize else None,
                     to_host=not on_gpu, row_work=row_work, first=None if row_work is None else FIRST_TILE_WORK,
                     tile_entries=GEMM_TILE_ENTRIES if direct is not None and on_gpu else None)


# Entries of a GEMM tile when the Gram matrix stays on the GPU (no pinned copy to feed): NCI1's
# 4110² is one GEMM, not nine of 510 rows whose launches the host could not keep up with.
GEMM_TILE_ENTRIES = 1 << 25
# Counts up to this value are exact in float16 (11 significant bits); Gram entries below 2**24
# are exact float32 sums of exact products: the tensor-core GEMM then gives the float64 result.
HALF_COUNT_MAX = 2048
SINGLE_EXACT = float(1 << 24)


def _direct_histograms(ga: CSR, gb: CSR, params: SPKernelParams, symmetric: bool, weighted: bool) -> Any:
    """Delta kernels without path lists: the histograms come from the distance blocks in two
    launches (sp_mark, sp_count), and each tile of rows is one GEMM: float16 operands on the
    tensor cores when every count and Gram entry stays exact (``counts_gram``), else float64.
    A set's histograms against itself are kept with its CSR view, as its distances are (against
    another set they depend on both, and keeping them would keep that set alive). None when the
    key range (labels² × lengths) is too large for a table of flags."""
    key = ("delta_histograms", bool(params.node_kernel.delta), weighted, DENSE_KEYS, HALF_COUNT_MAX)
    made = (ga.cached(key, lambda: _delta_histograms(ga, gb, params, symmetric, weighted)) if symmetric
            else _delta_histograms(ga, gb, params, symmetric, weighted))
    if made is None:
        return None
    xa, xb, da, db, half = made
    if half:  # |K[a, b]| <= sqrt(K[a, a] K[b, b]) < 2**24: every partial sum is exact in float32
        buffer = cp.empty(0, cp.float32)

        def fill(r0: int, r1: int, out: Any) -> Any:
            nonlocal buffer
            if buffer.size < (r1 - r0) * len(xb):
                buffer = cp.empty((r1 - r0) * len(xb), cp.float32)
            part = buffer[:(r1 - r0) * len(xb)].reshape(r1 - r0, len(xb))
            counts_gram(xa[r0:r1], xb, part)
            return part  # gram_rows casts it into out (normalized) in one pass
    else:
        def fill(r0: int, r1: int, out: Any) -> None:
            cp.matmul(xa[r0:r1], xb.T, out=out)

    return fill, da, db, False, None


def _delta_histograms(ga: CSR, gb: CSR, params: SPKernelParams, symmetric: bool, weighted: bool) -> Any:
    """(X_a, X_b, diag_a, diag_b, half): both sides' histograms as GEMM operands (float16 when
    exact, else float64) and their raw diagonals; None when the key range is too large."""
    (dist_a, sq_a), (dist_b, sq_b) = _all_pairs(ga), _all_pairs(gb)
    lens = lengths(cp, dist_a, *(() if symmetric else (dist_b,)), weighted=weighted)
    labs = alphabet(cp, ga.node_labels, gb.node_labels) if params.node_kernel.delta else None
    n_labels = 0 if labs is None else len(labs)
    n_keys = max(n_labels, 1) ** 2 * len(lens)
    if n_keys > DENSE_KEYS:
        return None
    sides = [(ga, dist_a, sq_a), *(() if symmetric else ((gb, dist_b, sq_b),))]

    def args(g: CSR, dist: Any, sq: Any) -> tuple:
        label = (cp.zeros(1, cp.int32) if labs is None
                 else cp.searchsorted(labs, g.node_labels).astype(cp.int32))
        return (dist, sq, g.graph_ptr, cp.int64(g.n_graphs), label, cp.int32(n_labels), lens, cp.int32(len(lens)),
                cp.int32(not weighted))

    launches = [(grid(side[0].n_graphs, 1, per_sm=16), args(*side)) for side in sides]
    used = cp.zeros(n_keys, cp.uint8)
    for blocks, side_args in launches:
        _MODULE.get_function("sp_mark")(blocks, (_THREADS,), (*side_args, used))
    column = cp.cumsum(used, dtype=cp.int64) - 1
    n_features = int(column[-1]) + 1 if n_keys else 0
    ld = max(8, -(-n_features // 8) * 8)  # rows of 16-byte multiples for the tensor cores
    counts = []
    for (g, _, _), (blocks, side_args) in zip(sides, launches):
        c = cp.zeros((g.n_graphs, ld), cp.int32)
        _MODULE.get_function("sp_count")(blocks, (_THREADS,), (*side_args, column, cp.int64(ld), c))
        counts.append(c)
    ca, cb = counts[0], counts[-1]
    da = _squares(ca)
    db = da if symmetric else _squares(cb)
    most_count, most_square = cp.stack([_top(counts), _top((da, db))]).get().tolist()  # one read-back
    half = most_count <= HALF_COUNT_MAX and most_square < SINGLE_EXACT
    real = cp.float16 if half else cp.float64
    xa = ca.astype(real)
    return xa, xa if symmetric else cb.astype(real), da, db, half


def _top(arrays: Any) -> Any:
    """The largest entry of any of ``arrays`` (0 when all are empty), as a float64 device scalar."""
    tops = [a.max().astype(cp.float64) for a in arrays if a.size]
    return cp.stack(tops).max() if tops else cp.zeros((), cp.float64)


def _squares(counts: Any) -> Any:
    """Each row's Σ count², exactly (float64), the raw diagonal K[a, a]."""
    c = counts.astype(cp.float64)
    return (c * c).sum(1)


# Work of the first tile (path pairs) before any timing: about 0.1 s of FCSP walk on an H100.
FIRST_TILE_WORK = 4e10


def _all_pairs(csr: CSR) -> tuple[Any, Any]:
    """Distances of every graph (flattened ``n_g × n_g`` blocks) and the block offsets, kept with
    the CSR view as on the CPU (``paths.all_pairs``)."""
    return csr.cached("all_pairs", lambda: _compute_all_pairs(csr))


def _compute_all_pairs(csr: CSR) -> tuple[Any, Any]:
    """A block of threads per graph, in launches over ranges of graphs of about equal work."""
    graph_ptr = csr.graph_ptr
    sizes = cp.diff(graph_ptr)
    sq_ptr = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(sizes * sizes)])
    n_graphs = len(sizes)
    dist = cp.empty(int(sq_ptr[-1]), cp.float64)
    weighted = csr.weights is not None
    negative = cp.zeros(n_graphs, cp.int32)
    host_sizes = cp.asnumpy(sizes).astype(np.float64)
    cost = np.concatenate([[0], np.cumsum(host_sizes ** (3 if weighted else 2) + 1)])
    for g0, g1 in chunks(n_graphs, what="shortest paths (gpu)", cost=cost, first=1e10, sync=wait_idle):
        part = (graph_ptr[g0:g1 + 1], sq_ptr[g0:g1 + 1], cp.int64(g1 - g0), dist)
        if weighted:
            _MODULE.get_function("floyd_warshall")(grid(g1 - g0, 1, per_sm=16), (_THREADS,),
                                                   (csr.indptr, csr.indices, csr.weights, *part, negative[g0:g1]))
        else:
            _MODULE.get_function("bfs_all")(grid(g1 - g0, 1, per_sm=16), (_THREADS,),
                                            (csr.indptr, csr.indices, *part))
    if weighted and bool(negative.any()):
        raise negative_cycle_error(negative)
    return dist, sq_ptr


def paths(csr: CSR) -> dict[str, Any]:
    """Ordered pairs i != j with finite distance of every graph of a batched CSR on the GPU:
    ``graph``, local ``i`` and ``j``, ``dist`` (grouped by graph), and ``n_graphs``."""
    dist, sq_ptr = _all_pairs(csr)
    k = cp.arange(len(dist), dtype=cp.int64)
    g = cp.searchsorted(sq_ptr, k, side="right") - 1
    n = (csr.graph_ptr[1:] - csr.graph_ptr[:-1])[g]
    local = k - sq_ptr[g]
    i, j = local // n, local % n
    keep = cp.isfinite(dist) & (i != j)
    return {"graph": g[keep], "i": i[keep], "j": j[keep], "dist": dist[keep], "n_graphs": csr.n_graphs}


def _keys(csr: CSR, p: dict, labs: Any, lens: Any) -> Any:
    length_id = cp.searchsorted(lens, p["dist"]).astype(cp.int64)
    if labs is None:
        return length_id
    label = cp.searchsorted(labs, csr.node_labels).astype(cp.int64)
    first = csr.graph_ptr[p["graph"]]
    return (label[first + p["i"]] * len(labs) + label[first + p["j"]]) * len(lens) + length_id


def _histogram_gram(ga: CSR, gb: CSR, pa: dict, pb: dict, lens: Any, params: SPKernelParams,
                    symmetric: bool) -> tuple[Any, Any, Any, bool]:
    """Delta kernels: per-graph (label, label, length) counts; each tile of rows is one GEMM."""
    labs = alphabet(cp, ga.node_labels, gb.node_labels) if params.node_kernel.delta else None
    ka = _keys(ga, pa, labs, lens)
    kb = ka if symmetric else _keys(gb, pb, labs, lens)
    (ca, cb), n_features = compact(cp, ka, kb)
    xa = histograms(cp, pa["graph"], ca, ga.n_graphs, n_features)
    xb = xa if symmetric else histograms(cp, pb["graph"], cb, gb.n_graphs, n_features)

    def fill(r0: int, r1: int, out: Any) -> None:
        cp.matmul(xa[r0:r1], xb.T, out=out)

    return fill, (xa * xa).sum(1), (xb * xb).sum(1), False, None


def sorted_lists(p: dict, lens: Any, by_destination: bool = False) -> dict[str, Any]:
    """Path lists grouped by graph, sorted by length id, then source and destination.

    ``by_destination`` sorts by destination before source instead (graph b's lists for the
    matrix form, where W's sums run over the sources of one destination).
    """
    lid = cp.searchsorted(lens, p["dist"]).astype(cp.int64)
    first, second = (p["j"], p["i"]) if by_destination else (p["i"], p["j"])
    order = cp.lexsort(cp.stack([second, first, lid, p["graph"]]))
    counts = cp.bincount(p["graph"], minlength=p["n_graphs"])
    ptr = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(counts)])
    return {"ptr": ptr, "src": p["i"][order].astype(cp.int32), "dst": p["j"][order].astype(cp.int32),
            "len": lid[order].astype(cp.int32), "graph": p["graph"][order]}


_FORMS = {"auto": 0, "walk": 1, "matrix": 2}


class Walk:
    """The FCSP launch for one (a, b) pairing of inputs: ``walk(rows, cols)`` queues the
    values of those graph pairs (CuPy arrays of graph indices) and returns them, asynchronously."""

    def __init__(self, ga: CSR, la: dict, gb: CSR, lb: dict, lens: Any, params: SPKernelParams):
        lab_a, att_a, n_attr = node_inputs(cp, ga, params)
        lab_b, att_b, _ = node_inputs(cp, gb, params)
        nk, lk = params.node_kernel, params.length_kernel
        table, n_lens, gamma = cp.zeros(1), 0, 0.0
        if not lk.delta:
            gamma = lk.gaussian.gamma
            if len(lens) <= TABLE_LIMIT:
                table, n_lens = cp.exp(-gamma * (lens[:, None] - lens[None, :]) ** 2), len(lens)
        matrix = matrix_form_possible(len(lens), params.fcsp_form)
        n_cnt = len(lens) if matrix else 0
        form = _FORMS[params.fcsp_form] if matrix else _FORMS["walk"]
        bt = _by_destination(lb, gb, lens) if matrix else lb
        b_sq, b_lid = _dense_lengths(gb, bt) if matrix and not lk.delta else (cp.zeros(gb.n_graphs + 1, cp.int64),
                                                                           cp.zeros(1, cp.int32))
        cnt_a = _counts(la, ga.n_graphs, n_cnt)
        cnt_b = cnt_a if lb is la else _counts(lb, gb.n_graphs, n_cnt)
        self.args = (la["ptr"], la["src"], la["dst"], la["len"], lb["ptr"], lb["src"], lb["dst"], lb["len"],
                     bt["src"], bt["dst"], bt["len"], b_sq, b_lid,
                     cnt_a, cnt_b, cp.int32(n_cnt),
                     cp.int32(form),
                     ga.graph_ptr, gb.graph_ptr, lab_a, lab_b, att_a, att_b, cp.int32(n_attr),
                     cp.int32(nk.delta), cp.float64(nk.gaussian.gamma if nk.gaussian else 0.0),
                     table, cp.int32(n_lens), cp.int32(lk.delta), lens, cp.float64(gamma))
        na, nb = int(cp.diff(ga.graph_ptr).max()), int(cp.diff(gb.graph_ptr).max())
        cells = na * (nb | 1)  # V, rows padded to an odd stride
        m_cells = 0 if lk.delta else nb * (nb | 1)  # M_d of the Gaussian matrix form
        self.scratch_bytes = 8 * cells + ((8 * (cells + m_cells) + 4 * (na + nb + 2) + 7) // 8 * 8 if matrix else 0)

    def __call__(self, rows: Any, cols: Any) -> Any:
        out = cp.empty(len(rows), cp.float64)
        if len(rows) == 0:
            return out
        fn = _MODULE.get_function("fcsp")
        blocks = grid(len(rows), 1, per_sm=8)
        limit = gpu_attribute("MaxSharedMemoryPerBlockOptin") - 1024
        use_shared = self.scratch_bytes <= limit
        if use_shared:
            fn.max_dynamic_shared_size_bytes = max(self.scratch_bytes, 8)
        stride = self.scratch_bytes // 8
        scratch = cp.empty(1 if use_shared else blocks[0] * stride, cp.float64)
        fn(blocks, (_THREADS,), (rows, cols, cp.int64(len(rows)), *self.args, cp.int32(use_shared),
                               cp.int64(stride), scratch, out),
           shared_mem=self.scratch_bytes if use_shared else 0)
        return out


def _by_destination(lists: dict, g: CSR, lens: Any) -> dict[str, Any]:
    """The same paths sorted by (graph, length, destination, source)."""
    p = {"graph": lists["graph"], "i": lists["src"], "j": lists["dst"], "dist": lens[lists["len"]],
         "n_graphs": g.n_graphs}
    return sorted_lists(p, lens, by_destination=True)


def _counts(lists: dict, n_graphs: int, n_cnt: int) -> Any:
    """Paths per graph and length id (``n_graphs × n_cnt`` int32), for the per-pair choice of form."""
    if n_cnt == 0:
        return cp.zeros(1, cp.int32)
    flat = cp.bincount(lists["graph"] * n_cnt + lists["len"], minlength=n_graphs * n_cnt)
    return flat.astype(cp.int32)


def _dense_lengths(g: CSR, lists: dict) -> tuple[Any, Any]:
    """Length id of every vertex pair of every graph (``n × n`` blocks, -1 where no path)."""
    sizes = cp.diff(g.graph_ptr)
    sq = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(sizes * sizes)])
    lid = cp.full(int(sq[-1]), -1, cp.int32)
    n = sizes[lists["graph"]]
    lid[sq[lists["graph"]] + lists["src"].astype(cp.int64) * n + lists["dst"]] = lists["len"]
    return sq, lid


def _fcsp_gram(ga: CSR, gb: CSR, pa: dict, pb: dict, lens: Any, params: SPKernelParams,
               symmetric: bool) -> tuple[Any, Any, Any, bool]:
    """General kernels: each tile of rows is one FCSP launch over its graph pairs."""
    la = sorted_lists(pa, lens)
    lb = la if symmetric else sorted_lists(pb, lens)
    walk = Walk(ga, la, gb, lb, lens, params)
    na, nb = ga.n_graphs, gb.n_graphs

    def fill(r0: int, r1: int, out: Any) -> None:
        rows, cols = _tile_pairs(r0, r1, nb, symmetric)  # only the upper triangle when symmetric
        out[rows - r0, cols] = walk(rows, cols)

    da = db = None
    if params.normalize:
        ida, idb = cp.arange(na, dtype=cp.int64), cp.arange(nb, dtype=cp.int64)
        da = walk(ida, ida) if symmetric else Walk(ga, la, ga, la, lens, params)(ida, ida)
        db = da if symmetric else Walk(gb, lb, gb, lb, lens, params)(idb, idb)
    return fill, da, db, symmetric, _row_work(la, lb, symmetric)


def _row_work(la: dict, lb: dict, symmetric: bool) -> Any:
    """Path pairs of each row of the Gram matrix (host): |P_a(r)| · Σ_c |P_b(c)| over its columns."""
    pa, pb = (cp.asnumpy(cp.diff(x["ptr"])).astype(np.float64) for x in (la, lb))
    if symmetric:
        return pa * np.cumsum(pb[::-1])[::-1]  # columns c >= r
    return pa * pb.sum()


def _tile_pairs(r0: int, r1: int, nb: int, symmetric: bool) -> tuple[Any, Any]:
    rows = cp.repeat(cp.arange(r0, r1, dtype=cp.int64), nb)
    cols = cp.tile(cp.arange(nb, dtype=cp.int64), r1 - r0)
    if symmetric:
        keep = cols >= rows
        rows, cols = rows[keep], cols[keep]
    return rows, cols
