"""Slow, obvious reference for ``describe``: loops over the edge list, scipy for components."""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components


def gini(degrees) -> float:
    """Gini index by its definition (mean absolute difference) for small n, Lorenz sum otherwise."""
    x = np.asarray(degrees, dtype=np.float64)
    n = len(x)
    if n == 0:
        return math.nan
    if x.sum() == 0:
        return 0.0
    if n <= 2000:
        return float(np.abs(x[:, None] - x[None, :]).sum() / (2.0 * n * n * x.mean()))
    x = np.sort(x)
    coef = 2.0 * np.arange(1, n + 1) - n - 1
    return float((coef * x).sum() / (n * x.sum()))


def describe(src, dst, n: int, directed: bool) -> dict:
    """Statistics of one graph given as 0-based edge arrays on vertices 0..n-1."""
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    deg = np.zeros(n, np.int64)
    for u, v in zip(src.tolist(), dst.tolist()):
        deg[u] += 1
        deg[v] += 1
    pairs = [(u, v) if directed else (min(u, v), max(u, v)) for u, v in zip(src.tolist(), dst.tolist())]
    adj = sp.coo_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    comps = connected_components(adj, directed=directed, connection="weak")[0] if n else 0
    empty = n == 0
    return {
        "n_vertices": n, "n_edges": len(src), "self_loops": int(np.sum(src == dst)),
        "multi_edges": len(pairs) - len(set(pairs)),
        "degree_min": math.nan if empty else float(deg.min()),
        "degree_mean": math.nan if empty else float(deg.sum()) / n,
        "degree_max": math.nan if empty else float(deg.max()),
        "degree_gini": gini(deg), "n_components": int(comps),
    }
