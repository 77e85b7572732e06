"""Slow, obvious reference for the shortest-path kernel: networkx distances and four nested loops."""
from __future__ import annotations

import math

import numpy as np


def distances(n, edges, weights=None, directed=False):
    """All-pairs shortest-path lengths with scipy (hop counts when unweighted)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import shortest_path

    if not edges:
        d = np.full((n, n), np.inf)
        np.fill_diagonal(d, 0.0)
        return d
    u, v = zip(*edges)
    w = np.ones(len(edges)) if weights is None else np.asarray(weights, float)
    a = sp.coo_matrix((w, (u, v)), shape=(n, n)).tocsr()
    return shortest_path(a, directed=directed, unweighted=weights is None)


def node_k(i, m, la, lb, xa, xb, spec):
    value = 1.0
    if spec.get("delta"):
        value *= 1.0 if la[i] == lb[m] else 0.0
    if spec.get("gamma") is not None:
        value *= math.exp(-spec["gamma"] * float(np.sum((np.asarray(xa[i]) - np.asarray(xb[m])) ** 2)))
    return value


def length_k(d1, d2, gamma):
    return (1.0 if d1 == d2 else 0.0) if gamma is None else math.exp(-gamma * (d1 - d2) ** 2)


def kernel(ga, gb, node_spec, length_gamma=None):
    """k(G_a, G_b): four loops over ordered vertex pairs with finite distance."""
    (da, la, xa), (db, lb, xb) = ga, gb
    total = 0.0
    na, nb = len(da), len(db)
    for i in range(na):
        for j in range(na):
            if i == j or not np.isfinite(da[i, j]):
                continue
            for m in range(nb):
                for n in range(nb):
                    if m == n or not np.isfinite(db[m, n]):
                        continue
                    total += (node_k(i, m, la, lb, xa, xb, node_spec) * length_k(da[i, j], db[m, n], length_gamma)
                              * node_k(j, n, la, lb, xa, xb, node_spec))
    return total
