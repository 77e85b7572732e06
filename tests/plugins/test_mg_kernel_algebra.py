"""mg_kernel with the rest of GraphDot's algebra, on every backend: sequence features read by
Convolution and DotProduct, the quasi-kernel Product(), start probabilities with hyperparameters,
signed and zero edge weights, node-wise derivatives; each against the dense float64 reference or finite differences, and the
errors that name a wrong feature kind or a system that does not converge."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import graphops as go
from graphops import InputError
from graphops.kernels import (Constant, Convolution, DotProduct, KroneckerDelta, Product, SquareExponential,
                              TensorProduct, from_spec, probability as mp)
from tests.plugins.test_mg_kernel import BACKENDS, rtol, run
from tests.reference.mg_kernel import mg_kernel_matrix, mg_kernel_pair, _graph


def sequence_set(seed, n_graphs=5):
    """Graphs whose nodes hold ring sizes (variable length, never empty), a 3-vector and a label,
    and whose edges hold a spectrum (variable length, maybe empty) and an order."""
    rng = np.random.default_rng(seed)
    graphs = []
    for k in range(n_graphs):
        n = 2 + k % 4
        G = nx.Graph()
        for v in range(n):
            G.add_node(v, rings=tuple(int(r) for r in rng.integers(3, 7, int(rng.integers(1, 4)))),
                       vec=tuple(float(x) for x in rng.uniform(0, 1, 3)), label=int(rng.integers(0, 2)))
        for u in range(n):
            for v in range(u + 1, n):
                if rng.random() < 0.6:
                    G.add_edge(u, v, spectrum=tuple(float(x) for x in rng.normal(size=int(rng.integers(0, 3)))),
                               order=int(rng.integers(1, 3)))
        if G.number_of_edges() == 0:
            G.add_edge(0, 1, spectrum=(0.5,), order=1)
        graphs.append(G)
    return go.GraphSet.from_networkx(graphs)


SEQUENCE_CASES = [
    (TensorProduct(rings=Convolution(KroneckerDelta(0.3))), TensorProduct(spectrum=Convolution(SquareExponential(1.0)))),
    (TensorProduct(rings=Convolution(KroneckerDelta(0.5)).normalized, vec=DotProduct().normalized + 0.1, label=KroneckerDelta(0.4)),
     TensorProduct(spectrum=Convolution(SquareExponential(0.7), mean=False).normalized, order=KroneckerDelta(0.5))),
]


@pytest.mark.parametrize("case", range(len(SEQUENCE_CASES)))
@pytest.mark.parametrize("backend", BACKENDS)
def test_sequence_features_match_the_dense_solve(backend, case):
    gs = sequence_set(case)
    node_kernel, edge_kernel = SEQUENCE_CASES[case]
    want = mg_kernel_matrix(gs, node_kernel, edge_kernel, 0.1, gs.node_feature_table(), gs.edge_feature_table())
    got = run(backend, gs, node_kernel=node_kernel, edge_kernel=edge_kernel, q=0.1)
    np.testing.assert_allclose(got, want, rtol=rtol(backend), atol=0)
    # one set against another: the two sides pad their sequences to one width
    got = run(backend, gs[:2], gs[2:], node_kernel=node_kernel, edge_kernel=edge_kernel, q=0.1)
    np.testing.assert_allclose(got, want[:2, 2:], rtol=rtol(backend), atol=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sequence_kernel_gradient_matches_finite_differences(backend):
    gs = sequence_set(7, 4)
    node_kernel, edge_kernel = SEQUENCE_CASES[0]
    K, dK = run_pair(backend, gs, node_kernel, edge_kernel, eval_gradient=True)
    for h, (kernel, role) in enumerate([(node_kernel, "node_kernel"), (edge_kernel, "edge_kernel")]):
        value = kernel.hyperparameters[0].value
        e = 1e-6
        plus = {role: kernel.with_values([value + e])}
        minus = {role: kernel.with_values([value - e])}
        base = dict(node_kernel=node_kernel, edge_kernel=edge_kernel, q=0.1)  # differences in float64, on the cpu
        fd = (run("cpu", gs, **{**base, **plus}) - run("cpu", gs, **{**base, **minus})) / (2 * e)
        np.testing.assert_allclose(dK[:, :, 1 + h], fd * value, rtol=1e-4 if backend != "gpu32" else 2e-2, atol=1e-7)


def run_pair(backend, gs, node_kernel, edge_kernel, **kw):
    from tests.plugins.test_mg_kernel import VARIANTS

    K, dK = go.run("mg_kernel", gs, node_kernel=node_kernel, edge_kernel=edge_kernel, q=0.1, **VARIANTS[backend][0],
                   **kw)
    return np.asarray(K), np.asarray(dK)


def test_sequence_feature_errors_name_the_feature():
    gs = sequence_set(1)
    with pytest.raises(InputError, match="'label'.*holds one number"):
        go.run("mg_kernel", gs, backend="cpu", node_kernel=TensorProduct(label=Convolution(KroneckerDelta(0.5))),
               edge_kernel=Constant(1.0))
    with pytest.raises(InputError, match="'rings'.*only Convolution or DotProduct"):
        go.run("mg_kernel", gs, backend="cpu", node_kernel=KroneckerDelta(0.5, on="rings"), edge_kernel=Constant(1.0))
    with pytest.raises(InputError, match="empty sequences"):
        go.run("mg_kernel", gs, backend="cpu", node_kernel=Constant(1.0),
               edge_kernel=Constant(1.0) * 0 + 1) if False else None
        # a node kernel over a feature with empty sequences: made by the edge spectrum's shape on nodes
        G = nx.Graph()
        G.add_node(0, rings=())
        G.add_node(1, rings=(3,))
        G.add_edge(0, 1)
        go.run("mg_kernel", go.GraphSet.from_networkx([G]), backend="cpu",
               node_kernel=TensorProduct(rings=Convolution(KroneckerDelta(0.5))), edge_kernel=Constant(1.0))
    G = nx.Graph()
    G.add_node(0, vec=(1.0, 2.0))
    G.add_node(1, vec=(1.0,))
    G.add_edge(0, 1)
    with pytest.raises(InputError, match="vectors of one length"):
        go.run("mg_kernel", go.GraphSet.from_networkx([G]), backend="cpu",
               node_kernel=TensorProduct(vec=DotProduct().normalized) + 0.1, edge_kernel=Constant(1.0))


def test_sequence_yaml_forms():
    k = from_spec({"tensor_product": {"rings": {"convolution": {"kernel": {"kronecker_delta": {"h": 0.3}},
                                                                 "mean": False}},
                                      "vec": {"normalized": {"dot_product": {}}}}})
    assert k == TensorProduct(rings=Convolution(KroneckerDelta(0.3), mean=False), vec=DotProduct().normalized)
    with pytest.raises(InputError, match="convolution"):
        from_spec({"convolution": {"kernl": {"constant": 1}}})
    with pytest.raises(InputError, match="dot_product"):
        from_spec({"dot_product": {"of": "x"}})


def labeled_set(seed, n_graphs=4, signed=False):
    rng = np.random.default_rng(seed)
    graphs = []
    for k in range(n_graphs):
        G = nx.gnm_random_graph(4 + k % 3, 5 + k % 4, seed=seed * 10 + k)
        for v in G.nodes:
            G.nodes[v]["label"] = int(rng.integers(0, 3))
            G.nodes[v]["mass"] = float(rng.uniform(0.5, 2.0))
        for e in G.edges:
            G.edges[e]["label"] = int(rng.integers(0, 2))
            G.edges[e]["w"] = float(rng.normal()) if signed else float(rng.uniform(0.5, 2))
        graphs.append(G)
    return go.GraphSet.from_networkx(graphs, weight="w")


STARTS = [mp.Uniform(2.0), mp.Assign("label", {0: 1.0, 1: 0.5}, default=0.25),
          mp.Uniform(1.5) * mp.Assign("label", {0: 1.0, 1: 0.7, 2: 0.3}) + mp.Feature("mass")]
KERNELS = dict(node_kernel=KroneckerDelta(0.5, on="label"), edge_kernel=KroneckerDelta(0.3, on="label"), q=0.1)


@pytest.mark.parametrize("start", range(len(STARTS)))
@pytest.mark.parametrize("backend", BACKENDS)
def test_start_probabilities_and_their_derivatives(backend, start):
    gs = labeled_set(3)
    p = STARTS[start]
    # values: the reference with p = 1, weighted node by node (K = Σ p_i p'_k x_ik)
    table = gs.node_feature_table()
    st = p(table)
    n = len(gs)
    want = np.empty((n, n))
    graphs = [_graph(gs, i, table, gs.edge_feature_table()) for i in range(n)]
    for i in range(n):
        for j in range(n):
            X = mg_kernel_pair(graphs[i], graphs[j], KERNELS["node_kernel"], KERNELS["edge_kernel"], 0.1, nodal=True)
            a = st[int(gs.node_ptr[i]):int(gs.node_ptr[i + 1])]
            b = st[int(gs.node_ptr[j]):int(gs.node_ptr[j + 1])]
            want[i, j] = a @ X @ b
    got = run(backend, gs, p=p, **KERNELS)
    np.testing.assert_allclose(got, want, rtol=rtol(backend), atol=0)
    K, dK = run_pair(backend, gs, KERNELS["node_kernel"], KERNELS["edge_kernel"], p=p, eval_gradient=True)
    values = [h.value for h in p.hyperparameters]
    for h in range(len(values)):
        e = 1e-6 * values[h]
        up, down = list(values), list(values)
        up[h] += e
        down[h] -= e
        fd = (run("cpu", gs, p=p.with_values(up), **KERNELS) - run("cpu", gs, p=p.with_values(down), **KERNELS)) / (2 * e)
        np.testing.assert_allclose(dK[:, :, dK.shape[2] - len(values) + h], fd * values[h],
                                   rtol=1e-5 if backend != "gpu32" else 1e-3, atol=1e-9)


def test_start_probability_yaml_and_errors():
    assert mp.from_spec({"uniform": {"p": 2.0}}) == mp.Uniform(2.0)
    assert mp.from_spec({"assign": {"on": "label", "values": {0: 1.0}, "default": 0.5}}) == \
        mp.Assign("label", {0: 1.0}, 0.5)
    assert repr(mp.from_spec({"product": [{"uniform": 1.0}, {"feature": "mass"}]})) == "(Uniform(1.0) * Feature('mass'))"
    with pytest.raises(InputError, match="unknown start probability 'uniformm'.*uniform"):
        mp.from_spec({"uniformm": 1.0})
    gs = labeled_set(3)
    with pytest.raises(InputError, match="does not list"):
        go.run("mg_kernel", gs, backend="cpu", p=mp.Assign("label", {0: 1.0}), **KERNELS)
    with pytest.raises(InputError, match="not all > 0"):
        go.run("mg_kernel", gs, backend="cpu", p=mp.Adhoc(lambda nodes: np.zeros(len(nodes["label"]))), **KERNELS)
    out = go.run("mg_kernel", gs, backend="cpu", p={"uniform": {"p": 2.0}}, **KERNELS)
    np.testing.assert_allclose(out, go.run("mg_kernel", gs, backend="cpu", p=2.0, **KERNELS), rtol=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
def test_signed_weights_match_the_dense_solve(backend):
    gs = labeled_set(5, 5, signed=True)
    want = mg_kernel_matrix(gs, KERNELS["node_kernel"], KERNELS["edge_kernel"], 0.3, gs.node_feature_table(),
                            gs.edge_feature_table())
    got = run(backend, gs, node_kernel=KERNELS["node_kernel"], edge_kernel=KERNELS["edge_kernel"], q=0.3)
    np.testing.assert_allclose(got, want, rtol=rtol(backend, 1e-7 if backend != "gpu32" else 1e-3), atol=1e-9)


def test_a_signed_system_that_does_not_converge_says_why():
    gs = labeled_set(5, 5, signed=True)
    with pytest.raises(go.NotConvergedError if hasattr(go, "NotConvergedError") else ArithmeticError,
                       match="negative edge weights.*sum_j \\|w_ij\\|"):
        go.run("mg_kernel", gs, backend="cpu", max_iter=1, **{**KERNELS, "q": 0.3})


@pytest.mark.parametrize("lmin", [0, 1])
@pytest.mark.parametrize("backend", BACKENDS)
def test_nodewise_derivatives_match_finite_differences(backend, lmin):
    gs = labeled_set(9, 3)
    p = mp.Uniform(1.5)
    kw = dict(KERNELS, p=p, lmin=lmin, nodewise=True)
    R, dR = run_pair(backend, gs, KERNELS["node_kernel"], KERNELS["edge_kernel"], p=p, lmin=lmin, nodewise=True,
                     eval_gradient=True)
    want = run("cpu", gs, **kw)  # float32: x - V (lmin = 1) loses digits, so the tolerance is of the largest entry
    np.testing.assert_allclose(R, want, rtol=rtol(backend, 1e-9), atol=1e-12 if backend != "gpu32" else
                               1e-5 * np.abs(want).max())
    base = {"q": 0.1, "node_kernel": KERNELS["node_kernel"], "edge_kernel": KERNELS["edge_kernel"], "p": p}
    moves = [("q", lambda v: v), ("node_kernel", lambda v: KERNELS["node_kernel"].with_values([v])),
             ("edge_kernel", lambda v: KERNELS["edge_kernel"].with_values([v])), ("p", lambda v: p.with_values([v]))]
    current = [0.1, 0.5, 0.3, 1.5]
    for h, ((name, make), value) in enumerate(zip(moves, current)):
        e = 1e-6 * value
        up = run("cpu", gs, lmin=lmin, nodewise=True, **{**base, name: make(value + e)})
        down = run("cpu", gs, lmin=lmin, nodewise=True, **{**base, name: make(value - e)})
        np.testing.assert_allclose(dR[:, :, h], (up - down) / (2 * e) * value,
                                   rtol=1e-5 if backend != "gpu32" else 1e-2, atol=1e-8 if backend != "gpu32" else 1e-5)


def quasi_set(seed, n_graphs=5, most=1.0, least=0.25):
    """Labeled graphs whose edges hold a weight-like feature ``w`` in [least, most] and whose nodes hold
    ``m`` in [0.5, 1]: GraphDot's quasi-kernel Product() reads them."""
    rng = np.random.default_rng(seed)
    graphs = []
    for k in range(n_graphs):
        G = nx.gnm_random_graph(3 + k % 4, 3 + k % 5, seed=seed * 10 + k)
        for v in G.nodes:
            G.nodes[v]["label"], G.nodes[v]["m"] = int(rng.integers(0, 3)), float(rng.uniform(0.5, 1.0))
        for e in G.edges:
            G.edges[e]["label"], G.edges[e]["w"] = int(rng.integers(0, 2)), float(rng.uniform(least, most))
        graphs.append(G)
    return go.GraphSet.from_networkx(graphs)


QUASI_CASES = [  # Python, and the same in YAML
    ((KroneckerDelta(0.5, on="label"), TensorProduct(w=Product(), label=KroneckerDelta(0.3))),
     ({"kronecker_delta": {"h": 0.5, "on": "label"}},
      {"tensor_product": {"w": {"product": {}}, "label": {"kronecker_delta": 0.3}}})),
    ((TensorProduct(m=Product(), label=KroneckerDelta(0.5)), Product(on="w")),
     ({"tensor_product": {"m": {"product": None}, "label": {"kronecker_delta": 0.5}}}, {"product": {"on": "w"}})),
]


@pytest.mark.parametrize("case", range(len(QUASI_CASES)))
@pytest.mark.parametrize("backend", BACKENDS)
def test_quasi_product_matches_the_dense_solve(backend, case):
    """GraphDot's Product() (x * y of a feature, no hyperparameters) in a node or edge kernel, from
    Python and from YAML, in the generated Numba and CUDA solvers, with the other kernels' derivatives."""
    gs = quasi_set(case)
    (nk, ek), (nk_yaml, ek_yaml) = QUASI_CASES[case]
    want = mg_kernel_matrix(gs, nk, ek, 0.1, gs.node_feature_table(), gs.edge_feature_table())
    np.testing.assert_allclose(run(backend, gs, node_kernel=nk, edge_kernel=ek, q=0.1), want, rtol=rtol(backend))
    np.testing.assert_allclose(run(backend, gs, node_kernel=nk_yaml, edge_kernel=ek_yaml, q=0.1), want,
                               rtol=rtol(backend))
    K, dK = run_pair(backend, gs, nk, ek, eval_gradient=True)
    assert dK.shape == K.shape + (1 + len(nk.hyperparameters) + len(ek.hyperparameters),)  # none of Product()
    np.testing.assert_allclose(K, want, rtol=rtol(backend, 1e-8))
    kd = nk if case == 0 else nk.parts[1]
    e = 1e-6
    moved = [run("cpu", gs, q=0.1, edge_kernel=ek, node_kernel=nk.with_values([h])
                 if case == 0 else TensorProduct(m=Product(), label=KroneckerDelta(h)))
             for h in (kd.hyperparameters[0].value + e, kd.hyperparameters[0].value - e)]
    np.testing.assert_allclose(dK[:, :, 1], (moved[0] - moved[1]) / (2 * e) * kd.hyperparameters[0].value,
                               rtol=1e-4 if backend != "gpu32" else 1e-2, atol=1e-7)


def test_quasi_product_range_is_checked_on_the_graphs():
    """Product()'s values are the features': a kernel using it is checked against those a call's graphs hold."""
    ek = TensorProduct(w=Product(), label=KroneckerDelta(0.3))
    nk = KroneckerDelta(0.5, on="label")
    paths = []
    for w in (1.0, 2.0):
        G = nx.path_graph(3)
        nx.set_node_attributes(G, 0, "label")
        nx.set_edge_attributes(G, w, "w")
        nx.set_edge_attributes(G, 1, "label")
        paths.append(G)
    with pytest.raises(InputError) as err:
        go.run("mg_kernel", go.GraphSet.from_networkx(paths[:1]), go.GraphSet.from_networkx(paths[1:]),
               backend="cpu", node_kernel=nk, edge_kernel=ek)
    assert str(err.value) == ("mg_kernel: edge_kernel: TensorProduct(w=Product(), label=KroneckerDelta(0.3)) can "
                              "reach 4 on these graphs (w in [1, 2]), above 1; an edge kernel must stay in [0, 1] (use "
                              ".normalized, or smaller constants)")
    with pytest.raises(InputError, match=r"can be -0\.\d+ on these graphs \(w in \[-0\.\d+, 0\.\d+\]\); an edge "
                                         r"kernel must stay in \[0, 1\]"):
        go.run("mg_kernel", quasi_set(1, least=-0.5), backend="cpu", node_kernel=nk, edge_kernel=ek)
    G = nx.Graph()
    G.add_nodes_from([(0, {"w": 0.0}), (1, {"w": 1.0})])
    G.add_edge(0, 1)
    with pytest.raises(InputError, match=r"node_kernel: Product\(on='w'\) can be 0 on these graphs \(w in \[0, 1\]\); "
                                         r"a node kernel must stay in \(0, 1\]"):
        go.run("mg_kernel", go.GraphSet.from_networkx([G]), backend="cpu", node_kernel=Product(on="w"),
               edge_kernel=Constant(1.0))
    # the cross call checks both sets' values together; one that fits runs
    go.run("mg_kernel", quasi_set(2), quasi_set(3), backend="cpu", node_kernel=nk, edge_kernel=ek)
