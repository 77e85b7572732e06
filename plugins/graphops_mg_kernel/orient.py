"""Which way round a pair is solved, so that K(G, G') is one number however it is asked.

A pair's two orientations, (G, G') and (G', G), solve the same system with its unknowns in
another order, so their rounding differs (in float32 by up to the solver's tolerance). A
square Gram solves each pair once and mirrors it; a cross call, a row or a pair alone would
solve it as asked. Both backends therefore solve a pair with the graph of the smaller
*content key* as graph 1 (the GPU first applies its own pair-only rules: gpu.py), where the key
hashes what the solver reads of a graph: its nodes, the node features the node kernel reads, its
start probabilities, its arcs with their weights and the edge features the edge kernel reads.
The key depends on the graph alone, not on its place or on the other graphs of a call.

A cross call on the GPU runs as part of a square one over both sets :func:`joined`, so that
either graph of a pair can be the first (the solver reads graph 1 and graph 2 from their own
layouts).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .common import Prepared, start_probabilities

__all__ = ["content_keys", "turned", "joined"]

_U = np.uint64


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer over uint64 arrays (wrapping arithmetic)."""
    x = x + _U(0x9E3779B97F4A7C15)
    x = (x ^ (x >> _U(30))) * _U(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> _U(27))) * _U(0x94D049BB133111EB)
    return x ^ (x >> _U(31))


def _hashed(values: np.ndarray, field: int, position: np.ndarray) -> np.ndarray:
    """One uint64 per value, mixing its bits with the field it belongs to and its place in its graph."""
    bits = np.ascontiguousarray(values, dtype=np.float64).view(_U)
    where = _mix(position.astype(_U) * _U(64) + _U(field))
    return _mix(bits ^ where)


def _per_graph(h: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """Sums (mod 2**64) of ``h`` over each graph's range ``ptr[g]:ptr[g + 1]``."""
    total = np.zeros(len(h) + 1, _U)
    np.cumsum(h, out=total[1:])
    return total[ptr[1:]] - total[ptr[:-1]]


def _node_columns(prep: Prepared, params: Any) -> list[np.ndarray]:
    """What the solver reads at each node: degree, start probability, the node kernel's features
    (a sequence feature as its length and its values, never its padding)."""
    cols = [prep.degree, start_probabilities(prep, params.p)]
    for f in params.node_kernel.features:
        v = prep.node_values[f]
        cols += [v] if v.ndim == 1 else [np.where(np.arange(v.shape[1]) <= v[:, :1], v, 0.0)[:, c]
                                        for c in range(v.shape[1])]
    return cols


def _arc_columns(prep: Prepared, params: Any) -> list[np.ndarray]:
    """What the solver reads at each arc: its ends, weight and the edge kernel's features."""
    cols = [prep.arc_src.astype(np.float64), prep.arc_dst.astype(np.float64), prep.arc_w]
    for f in params.edge_kernel.features:
        v = prep.edge_values[f][prep.arc_edge] if prep.n_edges else np.zeros((0,))
        cols += [v] if v.ndim == 1 else [np.where(np.arange(v.shape[1]) <= v[:, :1], v, 0.0)[:, c]
                                        for c in range(v.shape[1])]
    return cols


def content_keys(prep: Prepared, params: Any) -> np.ndarray:
    """Each graph's content key (uint64): equal for graphs the solver reads alike, whatever set
    they are in (kept with the set per kernels and start probabilities)."""
    names = (params.node_kernel.features, params.edge_kernel.features, repr(params.p))
    return prep.cached(("content keys", names), lambda: _keys(prep, params))


def _keys(prep: Prepared, params: Any) -> np.ndarray:
    n = np.diff(prep.node_ptr)
    node_pos = np.arange(prep.n_nodes) - np.repeat(prep.node_ptr[:-1], n)
    arc_pos = np.arange(len(prep.arc_src)) - np.repeat(prep.arc_ptr[:-1], np.diff(prep.arc_ptr))
    nodes = sum((_per_graph(_hashed(c, k, node_pos), prep.node_ptr)
                 for k, c in enumerate(_node_columns(prep, params))), np.zeros(len(n), _U))
    arcs = sum((_per_graph(_hashed(c, 32 + k, arc_pos), prep.arc_ptr)
                for k, c in enumerate(_arc_columns(prep, params))), np.zeros(len(n), _U))
    return _mix(_mix(nodes ^ _mix(n.astype(_U))) + arcs)


def turned(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Whether each pair, with content keys ``first`` (graph 1 as asked) and ``second``, is solved
    the other way round: graph 1 is the graph of the smaller key (equal keys: as asked)."""
    return second < first


def joined(a: Prepared, b: Prepared) -> Prepared:
    """``a``'s graphs then ``b``'s as one prepared set (features both hold; an edge feature of
    only one where the other has no edges, which reads none)."""
    def cat(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if x.ndim == 2 and x.shape[1] != y.shape[1]:  # sequences: padded to the wider
            width = max(x.shape[1], y.shape[1])
            x, y = (np.pad(v, ((0, 0), (0, width - v.shape[1]))) for v in (x, y))
        return np.concatenate([x, y])

    def features(p: dict, q: dict, rows_p: int, rows_q: int) -> dict:
        out = {}
        for f in dict.fromkeys([*p, *q]):
            if f in p and f in q:
                out[f] = cat(p[f], q[f])
            elif (rows_q == 0 and f in p) or (rows_p == 0 and f in q):
                v = p.get(f, q.get(f))
                out[f] = v if f in p else np.concatenate([np.zeros((0,) + v.shape[1:]), v])
        return out

    return Prepared(f"{a.name} + {b.name}", np.concatenate([a.node_ptr, b.node_ptr[1:] + a.n_nodes]),
                    np.concatenate([a.arc_ptr, b.arc_ptr[1:] + a.arc_ptr[-1]]), cat(a.arc_src, b.arc_src),
                    cat(a.arc_dst, b.arc_dst), cat(a.arc_w, b.arc_w), cat(a.arc_edge, b.arc_edge + a.n_edges),
                    cat(a.degree, b.degree), features(a.node_values, b.node_values, a.n_nodes, b.n_nodes),
                    features(a.edge_values, b.edge_values, a.n_edges, b.n_edges), a.n_edges + b.n_edges,
                    a.on_gpu)
