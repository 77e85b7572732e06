"""CPU backend of ``degree``: a Numba kernel over chunks of vertices."""
from __future__ import annotations

import numpy as np

from graphops.plugin import chunks, njit, prange


def run(csr, params):
    """Arrays in (NumPy), a dict of columns out; graphops maps ``vertex`` back to original ids."""
    out = np.empty(csr.n_vertices, np.float64 if params.weighted else np.int64)
    weights = csr.weights if csr.weights is not None else np.zeros(1)
    for lo, hi in chunks(csr.n_vertices, what="degree", cost=csr.indptr + np.arange(csr.n_vertices + 1)):
        _degree(csr.indptr, weights, params.weighted, lo, hi, out)
    return {"vertex": np.arange(csr.n_vertices), "degree": out}


@njit(parallel=True)
def _degree(indptr, weights, weighted, lo, hi, out):
    for v in prange(lo, hi):
        if weighted:
            s = 0.0
            for j in range(indptr[v], indptr[v + 1]):
                s += weights[j]
            out[v] = s
        else:
            out[v] = indptr[v + 1] - indptr[v]
