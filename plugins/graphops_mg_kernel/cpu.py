"""CPU backend of ``mg_kernel``: graph pairs in parallel (Numba ``prange``), each solved by
conjugate gradients with an on-the-fly product-graph mat-vec over the two graphs' arc lists
(the edge-kernel values of the pair's arc pairs are computed once per pair)."""
from __future__ import annotations

from functools import partial

import numpy as np

from graphops import Result
from graphops.work import chunks

from .codegen import cpu_module
from .common import (Prepared, feature_columns, finish_gradient, gram_pairs, not_converged, square_matrix,
                     start_probabilities)
from .params import MGKernelParams

__all__ = ["run"]


def _arrays(prep: Prepared, params: MGKernelParams) -> tuple:
    nf = feature_columns(prep.node_values, params.node_kernel.features, prep.n_nodes)
    ef = feature_columns(prep.edge_values, params.edge_kernel.features, prep.n_edges)
    return (prep.node_ptr, prep.arc_ptr, prep.arc_src, prep.arc_dst, prep.arc_w, prep.arc_edge, nf, ef,
            prep.degree, start_probabilities(prep, params.p))


def run(graphs: Prepared, other: Prepared | None, params: MGKernelParams) -> Result:
    """``K[a, b]`` of ``graphs`` against ``other`` (or against itself), float64, or what the
    mode asks (``diagonal``, ``nodewise``, ``eval_gradient``); details give the CG iterations
    per pair (mean and most)."""
    module = cpu_module(params.node_kernel, params.edge_kernel)
    hyper = [np.array([h.value for h in k.hyperparameters] or [0.0])
             for k in (params.node_kernel, params.edge_kernel)]
    a = _arrays(graphs, params)
    b = a if other is None else _arrays(other, params)
    second = graphs if other is None else other
    solve = partial(_solve, module, hyper=hyper, params=params)
    if params.diagonal:
        values, its = solve(graphs, graphs, a, a, _diagonal(len(graphs)))
        return Result(np.ones(len(graphs)) if params.normalize else values, _details(its))
    pairs = gram_pairs(len(graphs), None if other is None else len(other))
    if params.nodewise:
        return _nodewise(solve, graphs, second, a, b, pairs, other is None, params)
    grads = params.eval_gradient
    values, its, *g = solve(graphs, second, a, b, pairs, gradient=grads)
    K = square_matrix(values, pairs, len(graphs), len(second), other is None)
    if grads:
        dK = square_matrix(g[0], pairs, len(graphs), len(second), other is None)
        diagonals = None
        if params.normalize and other is None:
            diagonals = (np.diag(K).copy(), np.einsum("iih->ih", dK).copy()) * 2
        elif params.normalize:  # the diagonals of both sets, solved on their own
            diagonals = (*solve(graphs, graphs, a, a, _diagonal(len(graphs)), gradient=True)[::2],
                         *solve(other, other, b, b, _diagonal(len(other)), gradient=True)[::2])
        return Result(finish_gradient(K, dK, params, diagonals), _details(its))
    if params.normalize:
        if other is None:
            da = db = np.diag(K).copy()
        else:
            da = solve(graphs, graphs, a, a, _diagonal(len(graphs)))[0]
            db = solve(other, other, b, b, _diagonal(len(other)))[0]
        K = K / np.sqrt(np.outer(da, db))
    return Result(K, _details(its))


def _details(its: np.ndarray) -> dict:
    return {"iterations_mean": float(its.mean()), "iterations_max": int(its.max()), "pairs": len(its),
            "note": f"CG {its.mean():.2f} its/pair (max {its.max()}); float64"}


def _nodewise(solve, graphs: Prepared, second: Prepared, a: tuple, b: tuple, pairs: np.ndarray, square: bool,
              params: MGKernelParams) -> Result:
    """Every pair's n1 x n2 block of node-wise values, placed in the all-nodes matrix."""
    na, nb = np.diff(graphs.node_ptr), np.diff(second.node_ptr)
    sizes = na[pairs[:, 0]] * nb[pairs[:, 1]]
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    flat = np.empty(int(offsets[-1]))
    values, its = solve(graphs, second, a, b, pairs, nodal=(flat, offsets[:-1]))
    if params.normalize:
        diag = square_matrix(values, pairs, len(graphs), len(second), square)
        da = np.diag(diag) if square else solve(graphs, graphs, a, a, _diagonal(len(graphs)))[0]
        db = da if square else solve(second, second, b, b, _diagonal(len(second)))[0]
    R = np.empty((graphs.n_nodes, second.n_nodes))
    for t, (i, j) in enumerate(pairs):
        block = flat[offsets[t]:offsets[t + 1]].reshape(na[i], nb[j])
        if params.normalize:
            block = block / np.sqrt(da[i] * db[j])
        r0, c0 = graphs.node_ptr[i], second.node_ptr[j]
        R[r0:r0 + na[i], c0:c0 + nb[j]] = block
        if square and i != j:
            R[c0:c0 + nb[j], r0:r0 + na[i]] = block.T
    return Result(R, _details(its))


def _diagonal(n: int) -> np.ndarray:
    return np.repeat(np.arange(n, dtype=np.int64), 2).reshape(n, 2)


def _solve(module, ga: Prepared, gb: Prepared, a: tuple, b: tuple, pairs: np.ndarray, hyper: list,
           params: MGKernelParams, gradient: bool = False, nodal: tuple | None = None) -> tuple:
    """(K, iterations) of ``pairs``, and their raw gradients (pairs x hyperparameters) when asked."""
    sizes = np.diff(ga.node_ptr)[pairs[:, 0]] * np.diff(gb.node_ptr)[pairs[:, 1]]
    arcs = np.diff(ga.arc_ptr)[pairs[:, 0]] * np.diff(gb.arc_ptr)[pairs[:, 1]]
    cost = np.concatenate([[0], np.cumsum((sizes * 20.0 + arcs * 20.0) * (2 if gradient else 1) + 1000.0)])
    values = np.empty(len(pairs))
    its = np.empty(len(pairs), np.int64)
    n_hyper = 1 + sum(len(k.hyperparameters) for k in (params.node_kernel, params.edge_kernel))
    grad = np.zeros((len(pairs), n_hyper)) if gradient else np.empty((0, 0))
    flat, offsets = nodal if nodal is not None else (np.empty(0), np.empty(0, np.int64))
    for lo, hi in chunks(len(pairs), what="mg_kernel pairs", cost=cost, progress=params.progress):
        module.solve_pairs(pairs[lo:hi], *a, *b, *hyper, params.q, params.tolerance(), params.max_iter or 0,
                           params.lmin, values[lo:hi], its[lo:hi], grad[lo:hi], flat, offsets[lo:hi])
        bad = np.flatnonzero(its[lo:hi] < 0)
        if len(bad):
            i, j = (int(v) for v in pairs[lo + bad[0]])
            raise not_converged(ga, gb, i, j, params.tolerance(), params.max_iter,
                                f"{len(bad)} such pair(s) in this chunk")
    return (values, its, grad) if gradient else (values, its)
