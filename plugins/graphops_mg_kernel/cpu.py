"""CPU backend of ``mg_kernel``: graph pairs in parallel (Numba ``prange``), each solved by
conjugate gradients with an on-the-fly product-graph mat-vec over the two graphs' arc lists
(the edge-kernel values of the pair's arc pairs are computed once per pair)."""
from __future__ import annotations

import numpy as np

from graphops import Result
from graphops.work import chunks

from .codegen import cpu_module
from .common import (NotConvergedError, Prepared, feature_columns, gram_pairs, pair_name,
                     start_probabilities)
from .params import MGKernelParams

__all__ = ["run"]


def _arrays(prep: Prepared, params: MGKernelParams) -> tuple:
    nf = feature_columns(prep.node_values, params.node_kernel.features, prep.n_nodes)
    ef = feature_columns(prep.edge_values, params.edge_kernel.features, prep.n_edges)
    return (prep.node_ptr, prep.arc_ptr, prep.arc_src, prep.arc_dst, prep.arc_w, prep.arc_edge, nf, ef,
            prep.degree, start_probabilities(prep, params.p))


def run(graphs: Prepared, other: Prepared | None, params: MGKernelParams) -> Result:
    """``K[a, b]`` of ``graphs`` against ``other`` (or against itself), float64; details give
    the CG iterations per pair (mean and most)."""
    module = cpu_module(params.node_kernel, params.edge_kernel)
    hyper = [np.array([h.value for h in k.hyperparameters] or [0.0])
             for k in (params.node_kernel, params.edge_kernel)]
    a = _arrays(graphs, params)
    b = a if other is None else _arrays(other, params)
    second = graphs if other is None else other
    pairs = gram_pairs(len(graphs), None if other is None else len(other))
    values, its = _solve(module, graphs, second, a, b, pairs, hyper, params)
    K = np.empty((len(graphs), len(second)))
    K[pairs[:, 0], pairs[:, 1]] = values
    if other is None:
        K[pairs[:, 1], pairs[:, 0]] = values
    if params.normalize:
        if other is None:
            da = db = np.diag(K).copy()
        else:  # the diagonals of both sets, solved on their own
            da = _solve(module, graphs, graphs, a, a, _diagonal(len(graphs)), hyper, params)[0]
            db = _solve(module, other, other, b, b, _diagonal(len(other)), hyper, params)[0]
        K = K / np.sqrt(np.outer(da, db))
    details = {"iterations_mean": float(its.mean()), "iterations_max": int(its.max()), "pairs": len(pairs),
               "note": f"CG {its.mean():.2f} its/pair (max {its.max()}); float64"}
    return Result(K, details)


def _diagonal(n: int) -> np.ndarray:
    return np.repeat(np.arange(n, dtype=np.int64), 2).reshape(n, 2)


def _solve(module, ga: Prepared, gb: Prepared, a: tuple, b: tuple, pairs: np.ndarray, hyper: list,
           params: MGKernelParams) -> tuple[np.ndarray, np.ndarray]:
    sizes = np.diff(ga.node_ptr)[pairs[:, 0]] * np.diff(gb.node_ptr)[pairs[:, 1]]
    arcs = np.diff(ga.arc_ptr)[pairs[:, 0]] * np.diff(gb.arc_ptr)[pairs[:, 1]]
    cost = np.concatenate([[0], np.cumsum(sizes * 20.0 + arcs * 20.0 + 1000.0)])
    values = np.empty(len(pairs))
    its = np.empty(len(pairs), np.int64)
    for lo, hi in chunks(len(pairs), what="mg_kernel pairs", cost=cost, progress=params.progress):
        module.solve_pairs(pairs[lo:hi], *a, *b, *hyper, params.q, params.tolerance(), params.max_iter or 0,
                           params.lmin, values[lo:hi], its[lo:hi])
        bad = np.flatnonzero(its[lo:hi] < 0)
        if len(bad):
            i, j = (int(v) for v in pairs[lo + bad[0]])
            limit = params.max_iter or "the number of unknowns + 100"
            raise NotConvergedError(
                f"mg_kernel: {pair_name(ga, gb, i, j)} did not converge to tol={params.tolerance():g} within {limit} "
                f"iterations ({len(bad)} such pair(s) in this chunk); raise max_iter or tol, or use a larger q")
    return values, its
