"""GPU backend of ``jaccard``: load-balanced CUDA kernels (kernels/jaccard.cu) through CuPy.

Three launches whatever the graph: ``jaccard_thread`` scores every pair whose shorter
list has at most ``THREAD_MAX`` entries and appends the others to a warp list or a
block list on the device; ``jaccard_warp`` and ``jaccard_block`` drain those lists.
Nothing comes back to the host in between, so the launches queue back to back.
"""
from __future__ import annotations

from importlib import resources
from typing import Any

import cupy as cp

from graphops.csr import CSR
from graphops.device import Device, gpu_attribute

from .common import THREAD_MAX, WARP_MAX, Adjacency, adjacency, result
from .params import JaccardParams

_MODULE = cp.RawModule(code=resources.files(__package__).joinpath("kernels/jaccard.cu").read_text(),
                       options=("--std=c++17",))
_THREADS = 256


def _grid(work: int) -> tuple[int]:
    return (max(1, min((work + _THREADS - 1) // _THREADS, gpu_attribute("MultiProcessorCount") * 32)),)


def run(csr: CSR, pairs_csr: Any, params: JaccardParams) -> dict[str, Any]:
    adj = adjacency(csr, params.symmetrize, params.use_weight)
    first, second = params.pairs_on(Device.GPU)
    out = cp.empty(len(first), cp.float64)
    launch(adj, first, second, out)
    return result(params, out)


def launch(adj: Adjacency, first: Any, second: Any, out: Any, cpu_key: int = -1, cpu_cut: int = 0) -> None:
    """Queue the kernels that write ``out[i]`` for every pair not in the CPU's share: those
    whose key d_u + d_v is below ``cpu_key``, or equal to it at a position below ``cpu_cut``."""
    n = len(first)
    if n == 0:
        return
    weighted = adj.weights is not None
    w = adj.weights if weighted else cp.zeros(1, cp.float64)
    wdeg = adj.wdeg if weighted else w
    lists = cp.empty(n, cp.int64)
    counts = cp.zeros(2, cp.uint64)
    common = (adj.indptr, adj.indices, w, wdeg, first, second)
    _MODULE.get_function("jaccard_thread")(
        _grid(n), (_THREADS,),
        (*common, cp.int64(n), cp.int64(cpu_key), cp.int64(cpu_cut), cp.int64(THREAD_MAX), cp.int64(WARP_MAX),
         cp.int32(weighted), out, lists, counts))
    sms = gpu_attribute("MultiProcessorCount")
    _MODULE.get_function("jaccard_warp")((sms * 8,), (_THREADS,),
                                         (*common, cp.int32(weighted), out, lists, counts))
    _MODULE.get_function("jaccard_block")((sms * 4,), (_THREADS,),
                                          (*common, cp.int32(weighted), out, lists, counts, cp.int64(n)))


def pair_keys(adj: Adjacency, first: Any, second: Any) -> Any:
    """d_u + d_v per pair (int64), the work key of the hybrid split."""
    n = len(first)
    keys = cp.empty(n, cp.int64)
    if n:
        _MODULE.get_function("pair_keys")(_grid(n), (_THREADS,),
                                          (adj.indptr, first, second, cp.int64(n), keys))
    return keys


def row_sums(indptr: Any, w: Any) -> Any:
    n = len(indptr) - 1
    out = cp.empty(n, cp.float64)
    if n:
        _MODULE.get_function("row_sums")(_grid(n), (_THREADS,), (indptr, w, cp.int64(n), out))
    return out
