"""GPU backend of ``describe``: CUDA kernels (kernels/describe.cu) launched through CuPy.

Three memory-bound passes over the CSR (tens of milliseconds even for a billion entries on
an H100), so they are not cut into chunks: a Ctrl-C waits for them at most that long.
"""
from __future__ import annotations

from typing import Any

import cupy as cp

from graphops.plugin import CSR, THREADS, grid, load_module

from .common import finish, summarize
from .params import DescribeParams

_MODULE = load_module(__package__, "describe")


def run(csr: CSR, params: DescribeParams) -> dict[str, Any]:
    """Per-graph statistics of a (batched) CSR on the GPU."""
    assert csr.indptr.dtype == cp.int64 and csr.indices.dtype == cp.int32
    assert csr.indptr.flags.c_contiguous and csr.indices.flags.c_contiguous
    n, entries = csr.n_vertices, len(csr.indices)
    self_at = cp.zeros(n, cp.int64)
    multi_at = cp.zeros(n, cp.int64)
    indeg = cp.zeros(n if csr.directed else 1, cp.int64)
    args = (csr.indptr, csr.indices, cp.int64(n), cp.int64(entries))
    if entries:
        _MODULE.get_function("entry_stats")(grid(entries), (THREADS,),
                                            (*args, cp.int32(csr.directed), self_at, multi_at, indeg))
    rowlen = cp.diff(csr.indptr)
    deg = rowlen + (indeg if csr.directed else self_at)
    return finish(cp, csr, summarize(cp, csr, deg, self_at, multi_at, _roots(csr, args)))


def _roots(csr: CSR, args: tuple) -> Any:
    n, entries = csr.n_vertices, len(csr.indices)
    parent = cp.arange(n, dtype=cp.int32)
    if entries:
        _MODULE.get_function("cc_link")(grid(entries), (THREADS,), (*args, parent))
    roots = cp.empty(n, cp.uint8)
    if n:
        _MODULE.get_function("cc_roots")(grid(n), (THREADS,), (parent, cp.int64(n), roots))
    return roots
