"""GPU backend of ``sp_kernel``: CUDA kernels (kernels/sp_kernel.cu) through CuPy, cuBLAS for X·Xᵀ.

One launch computes the shortest paths of every graph (a block per graph); the histogram
path then builds the feature matrix with a few array operations and one GEMM; the FCSP
path runs a block per graph pair over tiles of the Gram matrix, so device memory holds one
tile of results at a time.

Decomposition of FCSP: pairs go to blocks (a grid-stride loop, so one launch covers a whole
tile of the Gram matrix, not a launch per pair), and inside a block the threads split graph
a's shortest paths while all of them stream graph b's list in the same order, which makes the
loads of b's path arrays warp-uniform broadcasts and keeps V (n_a × n_b) in shared memory.
Splitting a single pair over several blocks (a 2-D decomposition) pays only for graphs with
many thousands of paths, which the TU sets do not have; the pair count is what fills the GPU.
"""
from __future__ import annotations

from importlib import resources
from typing import Any

import cupy as cp

from graphops.csr import CSR

from .common import TABLE_LIMIT, alphabet, lengths, tiles, compact, histograms, negative_cycle_error, node_inputs, normalize
from .params import SPKernelParams

_MODULE = cp.RawModule(code=resources.files(__package__).joinpath("kernels/sp_kernel.cu").read_text(),
                       options=("--std=c++17", "--fmad=false"))  # match the CPU's rounding
_THREADS = 128


def run(graphs: CSR, train: CSR | None, params: SPKernelParams) -> Any:
    """Gram matrix ``K[a, b]`` of ``graphs`` against ``train`` (or against itself), float64 CuPy."""
    symmetric = train is None
    other = graphs if symmetric else train
    pa = _paths(graphs)
    pb = pa if symmetric else _paths(other)
    weighted = graphs.weights is not None or other.weights is not None
    lens = lengths(cp, pa["dist"], pb["dist"], weighted=weighted)
    gram = _histogram_gram if params.use_histogram else _fcsp_gram
    K, da, db = gram(graphs, other, pa, pb, lens, params, symmetric)
    return normalize(cp, K, da, db) if params.normalize else K


def _grid(work: int, per_sm: int = 16) -> tuple[int]:
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    return (max(1, min(work, sms * per_sm)),)


def _all_pairs(csr: CSR) -> tuple[Any, Any]:
    graph_ptr = csr.graph_ptr
    sizes = cp.diff(graph_ptr)
    sq_ptr = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(sizes * sizes)])
    n_graphs = len(sizes)
    dist = cp.empty(int(sq_ptr[-1]), cp.float64)
    args = (csr.indptr, csr.indices)
    if csr.weights is None:
        _MODULE.get_function("bfs_all")(_grid(n_graphs), (_THREADS,),
                                        (*args, graph_ptr, sq_ptr, cp.int64(n_graphs), dist))
        return dist, sq_ptr
    negative = cp.zeros(n_graphs, cp.int32)
    _MODULE.get_function("floyd_warshall")(_grid(n_graphs), (_THREADS,),
                                           (*args, csr.weights, graph_ptr, sq_ptr, cp.int64(n_graphs),
                                            dist, negative))
    if bool(negative.any()):
        raise negative_cycle_error(negative)
    return dist, sq_ptr


def _paths(csr: CSR) -> dict[str, Any]:
    """Ordered pairs i != j with finite distance: graph, local i and j, length (grouped by graph)."""
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
                    symmetric: bool) -> tuple[Any, Any, Any]:
    labs = alphabet(cp, ga.node_labels, gb.node_labels) if params.node_kernel.delta else None
    ka = _keys(ga, pa, labs, lens)
    kb = ka if symmetric else _keys(gb, pb, labs, lens)
    (ca, cb), n_features = compact(cp, ka, kb)
    xa = histograms(cp, pa["graph"], ca, ga.n_graphs, n_features)
    xb = xa if symmetric else histograms(cp, pb["graph"], cb, gb.n_graphs, n_features)
    return xa @ xb.T, (xa * xa).sum(1), (xb * xb).sum(1)


def _sorted_lists(p: dict, lens: Any) -> dict[str, Any]:
    """Path lists grouped by graph and sorted by length id inside each graph."""
    lid = cp.searchsorted(lens, p["dist"]).astype(cp.int64)
    order = cp.argsort(p["graph"] * len(lens) + lid)
    counts = cp.bincount(p["graph"], minlength=p["n_graphs"])
    ptr = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(counts)])
    return {"ptr": ptr, "src": p["i"][order].astype(cp.int32), "dst": p["j"][order].astype(cp.int32),
            "len": lid[order].astype(cp.int32)}


class _Walk:
    """The FCSP launch for one (a, b) pairing of inputs; call it with lists of graph pairs."""

    def __init__(self, ga: CSR, la: dict, gb: CSR, lb: dict, lens: Any, params: SPKernelParams):
        lab_a, att_a, n_attr = node_inputs(cp, ga, params)
        lab_b, att_b, _ = node_inputs(cp, gb, params)
        nk, lk = params.node_kernel, params.length_kernel
        table, n_lens, gamma = cp.zeros(1), 0, 0.0
        if not lk.delta:
            gamma = lk.gaussian.gamma
            if len(lens) <= TABLE_LIMIT:
                table, n_lens = cp.exp(-gamma * (lens[:, None] - lens[None, :]) ** 2), len(lens)
        self.graph_ptrs = (ga.graph_ptr, gb.graph_ptr)
        self.args = (la["ptr"], la["src"], la["dst"], la["len"], lb["ptr"], lb["src"], lb["dst"], lb["len"],
                     ga.graph_ptr, gb.graph_ptr, lab_a, lab_b, att_a, att_b, cp.int32(n_attr),
                     cp.int32(nk.delta), cp.float64(nk.gaussian.gamma if nk.gaussian else 0.0),
                     table, cp.int32(n_lens), cp.int32(lk.delta), lens, cp.float64(gamma))
        self.cells = int(cp.diff(ga.graph_ptr).max()) * int(cp.diff(gb.graph_ptr).max())

    def __call__(self, rows: Any, cols: Any) -> Any:
        out = cp.empty(len(rows), cp.float64)
        if len(rows) == 0:
            return out
        fn = _MODULE.get_function("fcsp")
        grid = _grid(len(rows), per_sm=8)
        limit = cp.cuda.Device().attributes["MaxSharedMemoryPerBlockOptin"] - 1024
        use_shared = 8 * self.cells <= limit
        if use_shared:
            fn.max_dynamic_shared_size_bytes = max(8 * self.cells, 1)
        scratch = cp.empty(1 if use_shared else grid[0] * self.cells, cp.float64)
        fn(grid, (_THREADS,), (rows, cols, cp.int64(len(rows)), *self.args, cp.int32(use_shared),
                               cp.int64(self.cells), scratch, out),
           shared_mem=8 * self.cells if use_shared else 0)
        return out


def _fcsp_gram(ga: CSR, gb: CSR, pa: dict, pb: dict, lens: Any, params: SPKernelParams,
               symmetric: bool) -> tuple[Any, Any, Any]:
    la = _sorted_lists(pa, lens)
    lb = la if symmetric else _sorted_lists(pb, lens)
    walk = _Walk(ga, la, gb, lb, lens, params)
    na, nb = ga.n_graphs, gb.n_graphs
    K = cp.empty((na, nb), cp.float64)
    bounds = list(range(0, na, params.tile)) + [na]
    for r0, r1 in tiles(bounds, params.progress, f"sp_kernel FCSP on the GPU, {na} x {nb} Gram"):
        rows, cols = _tile_pairs(r0, r1, nb, symmetric)  # one tile of Gram rows on the device at a time
        values = walk(rows, cols)
        K[rows, cols] = values
        if symmetric:
            K[cols, rows] = values
        if params.progress:
            cp.cuda.Device().synchronize()  # the bar then tracks finished tiles
    if symmetric:
        d = cp.diag(K).copy()
        return K, d, d
    if not params.normalize:
        return K, None, None
    ida, idb = cp.arange(na, dtype=cp.int64), cp.arange(nb, dtype=cp.int64)
    return (K, _Walk(ga, la, ga, la, lens, params)(ida, ida), _Walk(gb, lb, gb, lb, lens, params)(idb, idb))


def _tile_pairs(r0: int, r1: int, nb: int, symmetric: bool) -> tuple[Any, Any]:
    rows = cp.repeat(cp.arange(r0, r1, dtype=cp.int64), nb)
    cols = cp.tile(cp.arange(nb, dtype=cp.int64), r1 - r0)
    if symmetric:
        keep = cols >= rows
        rows, cols = rows[keep], cols[keep]
    return rows, cols
