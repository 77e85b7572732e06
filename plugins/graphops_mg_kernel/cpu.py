"""CPU backend of ``mg_kernel``: graph pairs in parallel (Numba ``prange``), each solved by
conjugate gradients with an on-the-fly product-graph mat-vec over the two graphs' arc lists
(the edge-kernel values of the pair's arc pairs are computed once per pair). Each pair is solved
with the graph of the smaller content key as graph 1 (orient.py), so K(G, G') is the same number
alone, in a row, in a Gram, on the diagonal and in a cross matrix."""
from __future__ import annotations

from functools import partial

import numpy as np

from graphops.plugin import Result, chunks, normalize

from .codegen import cpu_module
from .common import (Prepared, diagonal_pairs, feature_columns, finish_gradient, gram_pairs, hyper_values, layout,
                     nodewise_matrix, not_converged, square_matrix, start_gradient, start_probabilities, with_layout)
from .orient import content_keys, turned
from .params import MGKernelParams

__all__ = ["run"]


def _arrays(prep: Prepared, params: MGKernelParams) -> tuple:
    nw, ew = layout(params)
    nf = feature_columns(prep.node_values, params.node_kernel.features, prep.n_nodes, nw)
    ef = feature_columns(prep.edge_values, params.edge_kernel.features, prep.n_edges, ew)
    return (prep.node_ptr, prep.arc_ptr, prep.arc_src, prep.arc_dst, prep.arc_w, prep.arc_edge, nf, ef,
            prep.degree, start_probabilities(prep, params.p), start_gradient(prep, params.p))


def run(graphs: Prepared, other: Prepared | None, params: MGKernelParams) -> Result:
    """``K[a, b]`` of ``graphs`` against ``other`` (or against itself), float64, or what the
    mode asks (``diagonal``, ``nodewise``, ``eval_gradient``); details give the CG iterations
    per pair (mean and most)."""
    params = with_layout(params, graphs, other)
    module = cpu_module(params.node_kernel, params.edge_kernel, *layout(params))
    a = _arrays(graphs, params)
    b = a if other is None else _arrays(other, params)
    second = graphs if other is None else other
    square = other is None
    solve = partial(_canonical, partial(_solve, module, hyper=hyper_values(params), params=params), params)

    def diagonals(gradient: bool = False) -> tuple:
        """K[g, g] of both sets, solved on their own (and their raw gradients)."""
        da = solve(graphs, graphs, a, a, diagonal_pairs(len(graphs)), gradient=gradient)
        db = solve(second, second, b, b, diagonal_pairs(len(second)), gradient=gradient)
        return (*da[::2], *db[::2]) if gradient else (da[0], db[0])

    if params.diagonal:
        values, its = solve(graphs, graphs, a, a, diagonal_pairs(len(graphs)))
        return Result(np.ones(len(graphs)) if params.normalize else values, _details(its))
    pairs = gram_pairs(len(graphs), None if square else len(other))
    if params.nodewise:
        return _nodewise(solve, graphs, second, a, b, pairs, square, params, diagonals)
    grads = params.eval_gradient
    values, its, *g = solve(graphs, second, a, b, pairs, gradient=grads)
    K = square_matrix(values, pairs, len(graphs), len(second), square)
    if grads:
        dK = square_matrix(g[0], pairs, len(graphs), len(second), square)
        return Result(finish_gradient(K, dK, params, square, lambda: diagonals(gradient=True)), _details(its))
    if params.normalize:
        da, db = (np.diag(K).copy(),) * 2 if square else diagonals()
        K = normalize(np, K, da, db)
    return Result(K, _details(its))


def _details(its: np.ndarray) -> dict:
    return {"iterations_mean": float(its.mean()), "iterations_max": int(its.max()), "pairs": len(its),
            "note": f"CG {its.mean():.2f} its/pair (max {its.max()}); float64"}


def _nodewise(solve, graphs: Prepared, second: Prepared, a: tuple, b: tuple, pairs: np.ndarray, square: bool,
              params: MGKernelParams, diagonals) -> Result:
    """Every pair's n1 x n2 block of node-wise values, placed in the all-nodes matrix."""
    na, nb = np.diff(graphs.node_ptr), np.diff(second.node_ptr)
    offsets = np.concatenate([[0], np.cumsum(na[pairs[:, 0]] * nb[pairs[:, 1]])])
    flat = np.empty(int(offsets[-1]))
    if params.eval_gradient:  # node-wise values and their derivatives (not normalized: params say so)
        ngrad = np.empty((len(flat), len(params.hyperparameters())))
        values, its = solve(graphs, second, a, b, pairs, nodal=(flat, offsets[:-1], ngrad))
        R = nodewise_matrix(flat, offsets, pairs, graphs, second, square)
        free, scale_by = params.free()
        dR = np.stack([nodewise_matrix(np.ascontiguousarray(ngrad[:, h]), offsets, pairs, graphs, second, square)
                       for h in free], axis=-1) if free else np.zeros(R.shape + (0,))
        return Result((R, dR * np.asarray(scale_by)), _details(its))
    values, its = solve(graphs, second, a, b, pairs, nodal=(flat, offsets[:-1]))
    scale = None
    if params.normalize:
        scale = (np.diag(square_matrix(values, pairs, len(graphs), len(second), True)),) * 2 if square else diagonals()
    return Result(nodewise_matrix(flat, offsets, pairs, graphs, second, square, scale), _details(its))


def _canonical(solve, params: MGKernelParams, ga: Prepared, gb: Prepared, a: tuple, b: tuple, pairs: np.ndarray,
               nodal: tuple | None = None, **kw) -> tuple:
    """``solve`` of ``pairs``, each with the graph of the smaller content key as graph 1 (node-wise
    blocks: as asked, their layout follows the orientation)."""
    if nodal is not None or not len(pairs):
        return solve(ga, gb, a, b, pairs, nodal=nodal, **kw)
    flip = turned(content_keys(ga, params)[pairs[:, 0]], content_keys(gb, params)[pairs[:, 1]])
    if not flip.any():
        return solve(ga, gb, a, b, pairs, **kw)
    straight = solve(ga, gb, a, b, pairs[~flip], **kw)
    swapped = solve(gb, ga, b, a, np.ascontiguousarray(pairs[flip][:, ::-1]), **kw)
    merged = []
    for x, y in zip(straight, swapped):
        out = np.empty((len(pairs),) + x.shape[1:], x.dtype)
        out[~flip], out[flip] = x, y
        merged.append(out)
    return tuple(merged)


def _solve(module, ga: Prepared, gb: Prepared, a: tuple, b: tuple, pairs: np.ndarray, hyper: list,
           params: MGKernelParams, gradient: bool = False, nodal: tuple | None = None) -> tuple:
    """(K, iterations) of ``pairs``, and their raw gradients (pairs x hyperparameters) when asked."""
    counts = (len(params.node_kernel.hyperparameters), len(params.edge_kernel.hyperparameters))
    sizes = np.diff(ga.node_ptr)[pairs[:, 0]] * np.diff(gb.node_ptr)[pairs[:, 1]]
    arcs = np.diff(ga.arc_ptr)[pairs[:, 0]] * np.diff(gb.arc_ptr)[pairs[:, 1]]
    cost = np.concatenate([[0], np.cumsum((sizes * 20.0 + arcs * 20.0) * (2 if gradient else 1) + 1000.0)])
    values = np.empty(len(pairs))
    its = np.empty(len(pairs), np.int64)
    grad = np.zeros((len(pairs), len(params.hyperparameters()))) if gradient else np.empty((0, 0))
    flat, offsets, *ng = nodal if nodal is not None else (np.empty(0), np.empty(0, np.int64))
    ngrad = ng[0] if ng else np.empty((0, 0))
    for lo, hi in chunks(len(pairs), what="mg_kernel pairs", cost=cost, progress=params.progress):
        module.solve_pairs(pairs[lo:hi], *a, *b, *hyper, *counts, params.q, params.tolerance(), params.max_iter or 0,
                           params.lmin, values[lo:hi], its[lo:hi], grad[lo:hi], flat, offsets[lo:hi], ngrad)
        bad = np.flatnonzero(its[lo:hi] < 0)
        if len(bad):
            i, j = (int(v) for v in pairs[lo + bad[0]])
            raise not_converged(ga, gb, i, j, params.tolerance(), params.max_iter,
                                f"{len(bad)} such pair(s) in this chunk")
    return (values, its, grad) if gradient else (values, its)
