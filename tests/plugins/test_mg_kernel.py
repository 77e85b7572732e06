"""mg_kernel: every backend against the dense float64 solve of GraphDot's convention (tiny
random graphs with several features, weights, one-node graphs, graphs without edges,
disconnected graphs), the published MUTAG values, and the errors."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import graphops as go
from graphops import InputError
from graphops.kernels import Constant, KroneckerDelta, SquareExponential, TensorProduct
from tests.reference.marginalized import mg_kernel_matrix

BACKENDS = ["cpu"]


def random_set(seed, n_graphs=6, weighted=False):
    """Small undirected graphs with an element label, a charge and a bond order; includes a
    one-node graph, a graph without edges and a disconnected one."""
    rng = np.random.default_rng(seed)
    graphs = []
    for k in range(n_graphs):
        n = [1, 3, 4, 5, 6, 7][k % 6]
        G = nx.Graph()
        for v in range(n):
            G.add_node(v, element=int(rng.integers(0, 3)), charge=float(rng.normal()))
        if k % 6 == 2:
            pass  # no edges
        else:
            for u in range(n):
                for v in range(u + 1, n):
                    if rng.random() < 0.5 and not (k % 6 == 3 and (u < 2) != (v < 2)):
                        G.add_edge(u, v, order=int(rng.integers(1, 3)), w=float(rng.uniform(0.5, 2.0)))
            if k % 6 == 4 and n > 1:
                G.add_edge(0, 0, order=1, w=1.0)  # a self-loop
        graphs.append(G)
    return go.GraphSet.from_networkx(graphs, node_features=["element", "charge"], edge_features=["order"],
                                     weight="w" if weighted else None)


def dense(gs, node_kernel, edge_kernel, q):
    return mg_kernel_matrix(gs, node_kernel, edge_kernel, q, gs.node_feature_table(), gs.edge_feature_table())


def _length0(gs, node_kernel):
    """Σ p p' V over node pairs: the walks of length 0."""
    table = gs.node_feature_table()
    n = len(gs)
    out = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            a = range(int(gs.node_ptr[i]), int(gs.node_ptr[i + 1]))
            b = range(int(gs.node_ptr[j]), int(gs.node_ptr[j + 1]))
            out[i, j] = sum(node_kernel({f: v[x] for f, v in table.items()}, {f: v[y] for f, v in table.items()})
                            for x in a for y in b)
    return out


KERNEL_CASES = [
    (KroneckerDelta(0.5, on="element"), KroneckerDelta(0.5, on="order")),
    (TensorProduct(element=KroneckerDelta(0.3), charge=SquareExponential(1.5)), Constant(0.8)),
    ((KroneckerDelta(0.2, on="element") + Constant(0.5)).normalized, KroneckerDelta(0.1, on="order")),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("kernels", KERNEL_CASES, ids=["delta", "tensor", "normalized-sum"])
def test_matches_the_dense_solve(backend, kernels, weighted):
    gs = random_set(1, weighted=weighted)
    node_kernel, edge_kernel = kernels
    K = go.run("mg_kernel", gs, backend=backend, node_kernel=node_kernel, edge_kernel=edge_kernel, q=0.1)
    np.testing.assert_allclose(K, dense(gs, node_kernel, edge_kernel, 0.1), rtol=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lmin_start_probabilities_and_normalization(backend):
    gs = random_set(2)
    nk, ek = KroneckerDelta(0.5, on="element"), KroneckerDelta(0.5, on="order")
    ref = dense(gs, nk, ek, 0.2)
    K1 = go.run("mg_kernel", gs, backend=backend, node_kernel=nk, edge_kernel=ek, q=0.2, lmin=1)
    np.testing.assert_allclose(K1, ref - _length0(gs, nk), rtol=1e-9, atol=1e-9)
    K3 = go.run("mg_kernel", gs, backend=backend, node_kernel=nk, edge_kernel=ek, q=0.2, p=3.0)
    np.testing.assert_allclose(K3, 9 * ref, rtol=1e-9)
    Kn = go.run("mg_kernel", gs, backend=backend, node_kernel=nk, edge_kernel=ek, q=0.2, normalize=True)
    d = np.sqrt(np.diag(ref))
    np.testing.assert_allclose(Kn, ref / np.outer(d, d), rtol=1e-9)
    np.testing.assert_allclose(np.diag(Kn), 1.0, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_train_and_test_sets(backend):
    gs = random_set(3, n_graphs=7)
    nk, ek = KroneckerDelta(0.5, on="element"), KroneckerDelta(0.5, on="order")
    full = go.run("mg_kernel", gs, backend=backend, node_kernel=nk, edge_kernel=ek, q=0.1)
    Kt = go.run("mg_kernel", gs[[5, 6]], gs[[0, 1, 2]], backend=backend, node_kernel=nk, edge_kernel=ek, q=0.1)
    np.testing.assert_allclose(Kt, full[np.ix_([5, 6], [0, 1, 2])], rtol=1e-12)
    Kn = go.run("mg_kernel", gs[[5, 6]], gs[[0, 1, 2]], backend=backend, node_kernel=nk, edge_kernel=ek, q=0.1,
                normalize=True)
    d = np.sqrt(np.diag(full))
    np.testing.assert_allclose(Kn, (full / np.outer(d, d))[np.ix_([5, 6], [0, 1, 2])], rtol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_published_mutag_values(backend, shared_data):
    gs = go.read_tu(shared_data / "tu" / "MUTAG")[[0, 1, 2]]
    kd = KroneckerDelta(0.5, on="label")
    K = go.run("mg_kernel", gs, backend=backend, node_kernel=kd, edge_kernel=kd, q=0.05)
    ref = mg_kernel_matrix(gs, kd, kd, 0.05, {"label": gs.node_labels}, {"label": gs.edge_labels})
    np.testing.assert_allclose(K, ref, rtol=1e-9)
    np.testing.assert_allclose([K[0, 0], K[0, 1], K[1, 2]], [1618.9180, 844.6664, 490.9621], atol=5e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_small_stopping_probability_converges(backend):
    gs = random_set(4)
    nk, ek = KroneckerDelta(0.5, on="element"), KroneckerDelta(0.5, on="order")
    K = go.run("mg_kernel", gs, backend=backend, node_kernel=nk, edge_kernel=ek, q=5e-4)
    np.testing.assert_allclose(K, dense(gs, nk, ek, 5e-4), rtol=1e-8)


def test_non_convergence_names_the_pair():
    gs = random_set(5)
    with pytest.raises(go.GraphopsError, match=r"graph \d+ of .* and graph \d+ of .* did not converge"):
        go.run("mg_kernel", gs, backend="cpu", node_kernel=KroneckerDelta(0.5, on="element"),
               edge_kernel=KroneckerDelta(0.5, on="order"), q=0.01, max_iter=1, tol=1e-14)


@pytest.mark.parametrize("params,message", [
    ({"q": 0}, "q"),
    ({"q": 1.0}, "q"),
    ({"node_kernel": KroneckerDelta(0.0, on="element")}, "can be 0; a node kernel must stay in (0, 1]"),
    ({"edge_kernel": KroneckerDelta(0.5, on="order") + Constant(0.9)}, "can reach 1.9, above 1; an edge kernel must stay in [0, 1]"),
    ({"node_kernel": {"kronecker_delta": {"h": 2}}}, "node_kernel.kronecker_delta: KroneckerDelta: h=2.0"),
    ({"node_kernel": KroneckerDelta(0.5)}, "names no feature"),
    ({"node_kernel": KroneckerDelta(0.5, on="mass")}, "reads the node feature(s) 'mass'"),
    ({"p": "mass"}, "p='mass' names no node feature"),
    ({"p": -1}, "must be positive"),
])
def test_bad_parameters_are_named(params, message):
    gs = random_set(6)
    base = {"node_kernel": KroneckerDelta(0.5, on="element"), "edge_kernel": KroneckerDelta(0.5, on="order")}
    with pytest.raises((InputError, ValueError)) as err:
        go.run("mg_kernel", gs, backend="cpu", **{**base, **params})
    assert message in str(err.value)


def test_a_set_without_edges_needs_no_edge_features():
    """Only walks of length 0 (the system is diagonal, x = V): K = Σ p p' V, whatever feature
    the edge kernel names."""
    G = nx.Graph()
    G.add_node(0, element=1)
    G.add_node(1, element=2)
    gs = go.GraphSet.from_networkx([G, G], node_features=["element"])
    nk = KroneckerDelta(0.5, on="element")
    K = go.run("mg_kernel", gs, backend="cpu", node_kernel=nk, edge_kernel=KroneckerDelta(0.5, on="order"), q=0.1)
    np.testing.assert_allclose(K, _length0(gs, nk), rtol=1e-12)


def test_yaml_kernels():
    gs = random_set(7)
    K = go.run("mg_kernel", gs, backend="cpu", node_kernel={"kronecker_delta": {"h": 0.5, "on": "element"}},
               edge_kernel={"tensor_product": {"order": {"kronecker_delta": {"h": 0.5}}}}, q=0.1)
    ref = dense(gs, KroneckerDelta(0.5, on="element"), KroneckerDelta(0.5, on="order"), 0.1)
    np.testing.assert_allclose(K, ref, rtol=1e-9)
