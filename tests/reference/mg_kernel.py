"""The marginalized graph kernel by a dense float64 solve, in GraphDot's convention (the slow,
obvious reference the mg_kernel backends are checked against; tiny graphs only)."""
from __future__ import annotations

import numpy as np


def _graph(gs, i, node_features, edge_features):
    """Adjacency, degrees and feature records of graph ``i`` of a GraphSet (undirected edges once)."""
    n0, n1 = int(gs.node_ptr[i]), int(gs.node_ptr[i + 1])
    e0, e1 = int(gs.edge_ptr[i]), int(gs.edge_ptr[i + 1])
    n = n1 - n0
    src, dst = gs.src[e0:e1] - n0, gs.dst[e0:e1] - n0
    w = np.ones(e1 - e0) if gs.weights is None else np.asarray(gs.weights[e0:e1], float)
    A = np.zeros((n, n))
    edge_of = {}
    for k, (a, b) in enumerate(zip(src.tolist(), dst.tolist())):
        A[a, b] = w[k]
        edge_of[(a, b)] = k
        if not gs.directed:
            A[b, a] = w[k]
            edge_of[(b, a)] = k
    d = A.sum(axis=1)
    d[d == 0] = 1.0  # GraphDot: a node of degree 0 gets d = 1
    nodes = {f: _values(v[n0:n1]) for f, v in node_features.items()}
    edges = {f: _values(v[e0:e1]) for f, v in edge_features.items()}
    return A, d, nodes, edges, edge_of


def _values(column):
    """A feature's values: numbers, or for a sequence feature (padded rows: length, values) the
    sequences themselves."""
    column = np.asarray(column, float)
    if column.ndim == 2:
        return [row[1:1 + int(row[0])] for row in column]
    return column


def mg_kernel_pair(g1, g2, node_kernel, edge_kernel, q, nodal=False):
    """K(G, G') with p = 1 for every node: solve (D/V - A_x * E_x) x = D 1 and sum x (or, with
    ``nodal``, x as an n1 x n2 matrix)."""
    A1, d1, nf1, ef1, idx1 = g1
    A2, d2, nf2, ef2, idx2 = g2
    n1, n2 = len(d1), len(d2)
    dd = np.kron(d1 / (1 - q), d2 / (1 - q))
    V = np.array([node_kernel({f: v[i] for f, v in nf1.items()}, {f: v[j] for f, v in nf2.items()})
                  for i in range(n1) for j in range(n2)], float)
    M = np.diag(dd / V) - product_adjacency(g1, g2, edge_kernel)
    x = np.linalg.solve(M, dd)
    return x.reshape(n1, n2) if nodal else float(x.sum())


def product_adjacency(g1, g2, edge_kernel):
    """A_× ∘ E_×: entry (a n2 + c, b n2 + e) = A1[a, b] A2[c, e] κ_e(edge ab, edge ce)."""
    A1, _, _, ef1, idx1 = g1
    A2, _, _, ef2, idx2 = g2
    n1, n2 = len(A1), len(A2)
    M = np.zeros((n1 * n2, n1 * n2))
    for (a, b), k1 in idx1.items():
        for (c, e), k2 in idx2.items():
            ke = edge_kernel({f: v[k1] for f, v in ef1.items()}, {f: v[k2] for f, v in ef2.items()})
            M[a * n2 + c, b * n2 + e] += A1[a, b] * A2[c, e] * ke
    return M


def mg_kernel_matrix(gs, node_kernel, edge_kernel, q, node_features, edge_features, rows=None):
    """The Gram matrix over graphs ``rows`` (default all) of a GraphSet."""
    rows = range(len(gs)) if rows is None else rows
    graphs = [_graph(gs, i, node_features, edge_features) for i in rows]
    K = np.empty((len(graphs), len(graphs)))
    for i, a in enumerate(graphs):
        for j, b in enumerate(graphs[: i + 1]):
            K[i, j] = K[j, i] = mg_kernel_pair(a, b, node_kernel, edge_kernel, q)
    return K
