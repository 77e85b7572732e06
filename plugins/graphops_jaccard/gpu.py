"""GPU backend of ``jaccard``: load-balanced CUDA kernels (kernels/jaccard.cu) through CuPy.

Three launches per chunk of pairs: ``jaccard_thread`` scores every pair whose shorter
list has at most ``THREAD_MAX`` entries and appends the others to a warp list or a
block list on the device; ``jaccard_warp`` and ``jaccard_block`` drain those lists.
Nothing comes back to the host in between, so the launches queue back to back. Pairs go
in chunks of about equal work (``graphops.base.work.chunks``), so Ctrl-C stops a long call
within about a second.
"""
from __future__ import annotations

from typing import Any

import cupy as cp

from graphops.plugin import CSR, PairIndex, chunks, grid, load_module, wait_idle

from .common import THREAD_MAX, WARP_MAX, Adjacency, adjacency, result
from .params import JaccardParams

_MODULE = load_module(__package__, "jaccard")
_THREADS = 256


def run(csr: CSR, pairs: PairIndex, params: JaccardParams) -> dict[str, Any]:
    adj = adjacency(csr, params.symmetrize, params.use_weight, row_sums)
    return result(pairs, coefficients(adj, pairs.first, pairs.second))


# Pairs in the first chunk, before any timing: a small graph is one chunk of three launches
# (an H100 scores 70 M to 4 G pairs/s, so this is 4 ms to 0.25 s). Chunks are cut by count:
# pairs come in edge order, so hub pairs spread over all chunks.
FIRST_CHUNK_PAIRS = 1 << 24


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
    mode = 2 if shared else int(weighted)
    w = adj.weights if weighted else cp.zeros(1, cp.float64)
    wdeg = adj.wdeg if weighted else w
    lists = cp.empty(n, cp.int64)
    counts = cp.zeros(2, cp.uint64)
    common = (adj.indptr, adj.indices, w, wdeg, first, second)
    _MODULE.get_function("jaccard_thread")(
        grid(n, _THREADS), (_THREADS,),
        (*common, cp.int64(n), cp.int64(cpu_key), cp.int64(cpu_cut), cp.int64(THREAD_MAX), cp.int64(WARP_MAX),
         cp.int32(mode), out, lists, counts))
    _MODULE.get_function("jaccard_warp")(grid(32 * n, _THREADS, per_sm=8), (_THREADS,),
                                         (*common, cp.int32(mode), out, lists, counts))
    _MODULE.get_function("jaccard_block")(grid(_THREADS * n, _THREADS, per_sm=4), (_THREADS,),
                                          (*common, cp.int32(mode), out, lists, counts, cp.int64(n)))


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
