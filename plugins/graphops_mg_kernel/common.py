"""What the backends share: a GraphSet prepared as per-graph arc lists with degrees and every
feature as a float64 column, the feature columns a kernel reads, start probabilities, the
pairs to solve, and the error for a pair that does not converge."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphops.plugin import Device, GraphopsError, start_values

__all__ = ["Prepared", "prepare_cpu", "align16", "feature_columns", "row_width", "with_layout", "layout", "layout_key", "start_probabilities", "gram_pairs",
           "square_matrix", "finish_gradient", "start_gradient", "nodewise_matrix", "hyper_values", "diagonal_pairs", "not_converged",
           "stats_check", "NotConvergedError", "KeptSchedules"]


class NotConvergedError(GraphopsError, ArithmeticError):
    """A graph pair whose linear system did not converge within the iteration limit."""


class KeptSchedules:
    """Launch schedules kept by name (a row tile) for the next call, holding at most ``limit``
    pairs in all: the oldest go first. A call's row tiles are cut by measured time, so a later
    call may cut them elsewhere; the bound keeps such calls in a loop from piling up device memory."""

    def __init__(self, limit: int):
        self.limit = limit
        self._kept: dict[Any, tuple[int, Any]] = {}
        self.pairs = 0

    def __contains__(self, name: Any) -> bool:
        return name in self._kept

    def __getitem__(self, name: Any) -> Any:
        return self._kept[name][1]

    def __len__(self) -> int:
        return len(self._kept)

    def keep(self, name: Any, pairs: int, schedule: Any) -> bool:
        """Keep ``schedule`` (of ``pairs`` pairs) under ``name``; False when it alone exceeds the bound."""
        if pairs > self.limit:
            return False
        if name in self._kept:
            self.pairs -= self._kept.pop(name)[0]
        while self._kept and self.pairs + pairs > self.limit:
            self.pairs -= self._kept.pop(next(iter(self._kept)))[0]
        self._kept[name] = (pairs, schedule)
        self.pairs += pairs
        return True


@dataclass(frozen=True)
class Prepared:
    """A GraphSet as the solvers read it (host arrays).

    Graph ``g`` has nodes ``node_ptr[g]:node_ptr[g+1]`` and arcs ``arc_ptr[g]:arc_ptr[g+1]``:
    each undirected edge as two arcs (a self-loop as one), ``arc_src``/``arc_dst`` local node
    indices, ``arc_w`` the weight, ``arc_edge`` the edge's row in the edge features.
    ``degree``: weighted degree (self-loops once; 1 for a node without edges). ``n_edges``:
    rows of the edge features.
    ``node_values``/``edge_values``: every feature by name, float64. ``on_gpu``: where the
    GraphSet lived (a GPU backend returns CuPy then). ``cache``: what backends derive from it."""

    name: str
    node_ptr: np.ndarray
    arc_ptr: np.ndarray
    arc_src: np.ndarray
    arc_dst: np.ndarray
    arc_w: np.ndarray
    arc_edge: np.ndarray
    degree: np.ndarray
    node_values: dict[str, np.ndarray]
    edge_values: dict[str, np.ndarray]
    n_edges: int
    on_gpu: bool = False
    cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def n_nodes(self) -> int:
        return int(self.node_ptr[-1])

    def __len__(self) -> int:
        return len(self.node_ptr) - 1

    def cached(self, key: Any, make: Any) -> Any:
        """``make()``, made once per set and kept in ``cache`` under ``key`` (what a backend
        derives from the set: distinct edge values, factors, tiles, plans)."""
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]


def align16(b: Any) -> Any:
    """``b`` bytes rounded up to a multiple of 16 (how mg_kernel.cu packs shared memory)."""
    return (b + 15) // 16 * 16


def prepare_cpu(gs: Any) -> Prepared:
    on_gpu = gs.device is Device.GPU
    gs = gs.to(Device.CPU)
    node_ptr = np.asarray(gs.node_ptr, np.int64)
    edge_ptr = np.asarray(gs.edge_ptr, np.int64)
    src, dst = np.asarray(gs.src, np.int64), np.asarray(gs.dst, np.int64)
    w = np.ones(len(src)) if gs.weights is None else np.asarray(gs.weights, np.float64)
    graph_of_edge = np.repeat(np.arange(len(gs)), np.diff(edge_ptr))
    loop = src == dst
    # arcs: every edge u -> v, and v -> u unless it is a self-loop; grouped by graph
    a_src = np.concatenate([src, dst[~loop]])
    a_dst = np.concatenate([dst, src[~loop]])
    a_edge = np.concatenate([np.arange(len(src)), np.flatnonzero(~loop)])
    order = np.argsort(graph_of_edge[a_edge], kind="stable")
    a_src, a_dst, a_edge = a_src[order], a_dst[order], a_edge[order]
    counts = np.bincount(graph_of_edge[a_edge], minlength=len(gs))
    arc_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    base = node_ptr[graph_of_edge[a_edge]]
    degree = np.bincount(a_src, weights=w[a_edge], minlength=int(node_ptr[-1]))
    degree[degree == 0] = 1.0
    return Prepared(gs.name, node_ptr, arc_ptr, a_src - base, a_dst - base, w[a_edge], a_edge, degree,
                    {k: np.asarray(v, np.float64) for k, v in gs.node_feature_table().items()},  # sequences: 2-D
                    {k: np.asarray(v, np.float64) for k, v in gs.edge_feature_table().items()}, len(src), on_gpu)


def feature_columns(values: dict[str, np.ndarray], names: tuple[str, ...], rows: int,
                    widths: dict[str, int] | None = None) -> np.ndarray:
    """The named features as one C-ordered float64 matrix (rows x columns; at least one column):
    a scalar feature one column, a sequence feature ``widths[name]`` columns (its length, then
    its values padded with zeros). With no rows (a set without edges) a feature need not exist:
    nothing reads it."""
    widths = widths or {}
    total = row_width(names, widths)
    if not names or rows == 0:
        return np.zeros((rows, total))
    parts = []
    for n in names:
        v = values[n]
        if n in widths:
            block = np.zeros((rows, widths[n]))
            block[:, :v.shape[1]] = v
            parts.append(block)
        else:
            parts.append(v.reshape(rows, 1))
    return np.ascontiguousarray(np.concatenate(parts, axis=1))


def row_width(names: tuple[str, ...], widths: dict[str, int] | None) -> int:
    """Columns of a feature row (at least 1)."""
    return max(sum((widths or {}).get(n, 1) for n in names), 1)


def with_layout(params: Any, a: Prepared, b: Prepared | None = None) -> Any:
    """``params`` knowing the width of every sequence feature its kernels read: the widest of
    the two sets (both sides of a pair share one row layout). See :func:`layout`."""
    sets = [a] if b is None else [a, b]
    widths = []
    for kernel, table in ((params.node_kernel, "node_values"), (params.edge_kernel, "edge_values")):
        widths.append({f: max([getattr(s, table)[f].shape[1] for s in sets if f in getattr(s, table)] or [1])
                       for f in kernel.sequence_features})
    if not any(widths):
        return params
    out = params.model_copy()
    out._layout = tuple(widths)
    return out


def layout(params: Any) -> tuple[dict[str, int], dict[str, int]]:
    """(node, edge) sequence feature widths of :func:`with_layout` (empty: scalar features only)."""
    return getattr(params, "_layout", None) or ({}, {})


def layout_key(params: Any) -> tuple:
    return tuple(tuple(sorted(w.items())) for w in layout(params))


def start_probabilities(prep: Prepared, p: Any) -> np.ndarray:
    """Every node's start probability (any form of ``p``: :func:`graphops.plugin.start_values`)."""
    return start_values(p, prep.node_values, prep.n_nodes)


def start_gradient(prep: Prepared, p: Any) -> np.ndarray:
    """d(start probability)/d(hyperparameter of ``p``): nodes x hyperparameters (at least one
    column, zeros when ``p`` has none)."""
    if not getattr(p, "hyperparameters", None):  # nothing to derive: no second evaluation of p
        return np.zeros((prep.n_nodes, 1))
    return np.ascontiguousarray(start_values(p, prep.node_values, prep.n_nodes, gradient=True)[1])


def gram_pairs(n: int, m: int | None) -> np.ndarray:
    """Graph pairs (row, column) to solve: the upper triangle of a square Gram matrix, or all."""
    if m is None:
        i, j = np.triu_indices(n)
    else:
        i, j = np.divmod(np.arange(n * m, dtype=np.int64), m)
    return np.stack([i, j], axis=1).astype(np.int64)


def pair_name(a: Prepared, b: Prepared, i: int, j: int) -> str:
    return f"graph {i} of {a.name!r} and graph {j} of {b.name!r}"


def not_converged(a: Prepared, b: Prepared, i: int, j: int, tol: float, max_iter: int | None, count: str,
                  float32: bool = False) -> NotConvergedError:
    """The error for pair (i, j) (one of ``count`` such pairs) that did not reach ``tol``; with
    negative edge weights it states when the pair's system is sure to converge."""
    limit = max_iter or "the number of unknowns + 100"
    signed = [p.name for p in ((a,) if a is b else (a, b)) if len(p.arc_w) and bool((p.arc_w < 0).any())]
    why = ""
    if signed:
        why = (f"; GraphSet {signed[0]!r} has negative edge weights, so the pair's system (D/V - A x A' o E, "
               f"symmetric) need not be positive definite: conjugate gradients converge for certain when every "
               f"node's weighted degree d_i (0 counted as 1) satisfies |d_i| >= sum_j |w_ij| (always so for weights "
               f">= 0), and otherwise only where the system happens to allow it; this one does not (the kernel "
               f"is not defined by a converging walk series here)")
    return NotConvergedError(
        f"mg_kernel: {pair_name(a, b, i, j)} did not converge to tol={tol:g} within {limit} iterations "
        f"({count}){why}; raise max_iter or tol, or use a larger q{', or precision=float64' if float32 else ''}")


def stats_check(stats: Any, a: Prepared, b: Prepared, tol: float, params: Any, float32: bool,
                col0: int = 0) -> tuple[int, int]:
    """The GPU solvers' statistics (total iterations, most, pairs not converged, (i << 32 | j) + 1 of
    one of them): raise for a pair that did not converge (graph j - ``col0`` of ``b``), else (total, most)."""
    total, most, bad, which = (int(v) for v in stats)
    if bad:
        raise not_converged(a, b, (which - 1) >> 32, ((which - 1) & 0xFFFFFFFF) - col0, tol, params.max_iter,
                            f"{bad} such pair(s)", float32)
    return total, most


def square_matrix(values: np.ndarray, pairs: np.ndarray, n: int, m: int, mirror: bool) -> np.ndarray:
    """The n x m matrix (with the trailing axes of ``values``) from the values of ``pairs``."""
    out = np.empty((n, m) + values.shape[1:])
    out[pairs[:, 0], pairs[:, 1]] = values
    if mirror:
        out[pairs[:, 1], pairs[:, 0]] = values
    return out


def hyper_values(params: Any) -> tuple[np.ndarray, np.ndarray]:
    """The node and the edge kernel's hyperparameter values, as the solvers read them (an array
    of at least one entry each)."""
    return tuple(np.array([h.value for h in k.hyperparameters] or [0.0])
                 for k in (params.node_kernel, params.edge_kernel))


def diagonal_pairs(n: int) -> np.ndarray:
    """The pairs (g, g) of a set of ``n`` graphs."""
    return np.repeat(np.arange(n, dtype=np.int64), 2).reshape(n, 2)


def finish_gradient(K: np.ndarray, dK: np.ndarray, params: Any, square: bool, diagonals_of: Any) -> tuple:
    """(K, dK) as asked: normalized with the diagonals and their raw gradients (from K and dK
    when square, else ``diagonals_of()`` = (da, ga, db, gb)), then dK restricted to the free
    hyperparameters and scaled to their logarithms."""
    if params.normalize:  # d(K / sqrt(Kaa Kbb)) = dK / s - K (dKaa / Kaa + dKbb / Kbb) / 2
        if square:
            da = db = np.diag(K).copy()
            ga = gb = np.einsum("iih->ih", dK).copy()
        else:
            da, ga, db, gb = diagonals_of()
        scale = np.sqrt(np.outer(da, db))
        K = K / scale
        dK = dK / scale[:, :, None] - 0.5 * K[:, :, None] * (ga[:, None, :] / da[:, None, None]
                                                              + gb[None, :, :] / db[None, :, None])
    free, values = params.free()
    return K, dK[:, :, free] * np.asarray(values)


def nodewise_matrix(flat: np.ndarray, offsets: np.ndarray, pairs: np.ndarray, ga: Prepared, gb: Prepared,
                    square: bool, diagonals: tuple | None = None, perms: list | None = None,
                    which: np.ndarray | None = None) -> np.ndarray:
    """The all-nodes matrix from each pair's n1 x n2 block ``flat[offsets[t]:offsets[t + 1]]``:
    rows and columns taken through ``perms[which[t]]`` when given (``which`` None: the first):
    each node's index in the order of the solver that wrote the pair, as (graph 1's, graph 2's),
    or None for the graphs' own order. Blocks are divided by ``sqrt(da db)`` when ``diagonals`` =
    (da, db) are given, and mirrored below the diagonal when square."""
    na, nb = np.diff(ga.node_ptr), np.diff(gb.node_ptr)
    R = np.empty((ga.n_nodes, gb.n_nodes))
    for t, (a, b) in enumerate(pairs.tolist()):
        r0, r1, c0, c1 = ga.node_ptr[a], ga.node_ptr[a + 1], gb.node_ptr[b], gb.node_ptr[b + 1]
        block = flat[offsets[t]:offsets[t + 1]].reshape(na[a], nb[b])
        if perms is not None:
            order = perms[0 if which is None else which[t]]
            if order is not None:
                block = block[np.ix_(order[0][r0:r1], order[1][c0:c1])]
        if diagonals is not None:
            block = block / np.sqrt(diagonals[0][a] * diagonals[1][b])
        R[r0:r1, c0:c1] = block
        if square and a != b:
            R[c0:c1, r0:r1] = block.T
    return R
