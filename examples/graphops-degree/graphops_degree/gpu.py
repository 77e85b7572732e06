"""GPU backend of ``degree``: kernels/degree.cu through CuPy (imported only when chosen)."""
from __future__ import annotations

import cupy as cp

from graphops.plugin import THREADS, grid, load_module

_MODULE = load_module(__package__, "degree")


def run(csr, params):
    """Arrays in (CuPy), a dict of columns out, same signature as the CPU backend."""
    assert csr.indptr.dtype == cp.int64 and csr.indptr.flags.c_contiguous
    n = csr.n_vertices
    if params.weighted:
        out = cp.empty(n, cp.float64)
        fn, args = _MODULE.get_function("weighted_degree"), (csr.indptr, csr.weights, cp.int64(n), out)
    else:
        out = cp.empty(n, cp.int64)
        fn, args = _MODULE.get_function("degree"), (csr.indptr, cp.int64(n), out)
    if n:
        fn(grid(n), (THREADS,), args)
    return {"vertex": cp.arange(n), "degree": out}
