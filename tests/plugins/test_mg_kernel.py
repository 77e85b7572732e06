"""mg_kernel: every backend against the dense float64 solve of GraphDot's convention (tiny
random graphs with several features, weights, one-node graphs, graphs without edges,
disconnected graphs), the published MUTAG values, and the errors."""
from __future__ import annotations

import warnings

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphops as go
from graphops import InputError
from graphops.host.registry import get_registry
from graphops.kernels import Constant, KroneckerDelta, RationalQuadratic, SquareExponential, TensorProduct
from tests.reference.mg_kernel import mg_kernel_matrix

# backend variants: (run options, relative tolerance against the float64 dense solve)
VARIANTS = {
    "cpu": ({"backend": "cpu"}, 1e-9),
    "gpu64": ({"backend": "gpu", "precision": "float64"}, 1e-9),
    "gpu32": ({"backend": "gpu", "precision": "float32"}, 1e-5),
}
BACKENDS = ["cpu", pytest.param("gpu64", marks=pytest.mark.gpu), pytest.param("gpu32", marks=pytest.mark.gpu)]


def run(variant, *inputs, **params):
    options, _ = VARIANTS[variant]
    return np.asarray(go.run("mg_kernel", *inputs, **options, **params))


def rtol(variant, at_least=0.0):
    return max(VARIANTS[variant][1], at_least)


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
    # GraphDot composes freely: composites inside a feature, powers, rational quadratics
    (TensorProduct(element=KroneckerDelta(0.3) ** 2, charge=SquareExponential(1.0) + Constant(0.01)),
     TensorProduct(order=KroneckerDelta(0.5) * Constant(0.9))),
    (TensorProduct(element=KroneckerDelta(0.5), charge=RationalQuadratic(0.8, 2.0)), KroneckerDelta(0.5, on="order") ** 0.5),
]
KERNEL_IDS = ["delta", "tensor", "normalized-sum", "composite-features", "rational-power"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("kernels", KERNEL_CASES, ids=KERNEL_IDS)
def test_matches_the_dense_solve(backend, kernels, weighted):
    gs = random_set(1, weighted=weighted)
    node_kernel, edge_kernel = kernels
    K = run(backend, gs, node_kernel=node_kernel, edge_kernel=edge_kernel, q=0.1)
    np.testing.assert_allclose(K, dense(gs, node_kernel, edge_kernel, 0.1), rtol=rtol(backend))


@pytest.mark.parametrize("backend", BACKENDS)
def test_lmin_start_probabilities_and_normalization(backend):
    gs = random_set(2)
    nk, ek = KroneckerDelta(0.5, on="element"), KroneckerDelta(0.5, on="order")
    ref = dense(gs, nk, ek, 0.2)
    K1 = run(backend, gs, node_kernel=nk, edge_kernel=ek, q=0.2, lmin=1)
    np.testing.assert_allclose(K1, ref - _length0(gs, nk), rtol=rtol(backend), atol=rtol(backend) * ref.max())
    K3 = run(backend, gs, node_kernel=nk, edge_kernel=ek, q=0.2, p=3.0)
    np.testing.assert_allclose(K3, 9 * ref, rtol=rtol(backend))
    Kn = run(backend, gs, node_kernel=nk, edge_kernel=ek, q=0.2, normalize=True)
    d = np.sqrt(np.diag(ref))
    np.testing.assert_allclose(Kn, ref / np.outer(d, d), rtol=rtol(backend))
    np.testing.assert_allclose(np.diag(Kn), 1.0, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_train_and_test_sets(backend):
    gs = random_set(3, n_graphs=7)
    nk, ek = KroneckerDelta(0.5, on="element"), KroneckerDelta(0.5, on="order")
    full = run(backend, gs, node_kernel=nk, edge_kernel=ek, q=0.1)
    Kt = run(backend, gs[[5, 6]], gs[[0, 1, 2]], node_kernel=nk, edge_kernel=ek, q=0.1)
    np.testing.assert_allclose(Kt, full[np.ix_([5, 6], [0, 1, 2])], rtol=rtol(backend, 1e-12))
    Kn = run(backend, gs[[5, 6]], gs[[0, 1, 2]], node_kernel=nk, edge_kernel=ek, q=0.1,
                normalize=True)
    d = np.sqrt(np.diag(full))
    np.testing.assert_allclose(Kn, (full / np.outer(d, d))[np.ix_([5, 6], [0, 1, 2])], rtol=rtol(backend, 1e-10))


@pytest.mark.parametrize("backend", BACKENDS)
def test_published_mutag_values(backend, shared_data):
    gs = go.read_tu(shared_data / "tu" / "MUTAG")[[0, 1, 2]]
    kd = KroneckerDelta(0.5, on="label")
    K = run(backend, gs, node_kernel=kd, edge_kernel=kd, q=0.05)
    ref = mg_kernel_matrix(gs, kd, kd, 0.05, {"label": gs.node_labels}, {"label": gs.edge_labels})
    np.testing.assert_allclose(K, ref, rtol=rtol(backend))
    np.testing.assert_allclose([K[0, 0], K[0, 1], K[1, 2]], [1618.9180, 844.6664, 490.9621],
                               atol=5e-5 if rtol(backend) < 1e-6 else 0, rtol=rtol(backend))


@pytest.mark.parametrize("backend", BACKENDS)
def test_small_stopping_probability_converges(backend):
    gs = random_set(4)
    nk, ek = KroneckerDelta(0.5, on="element"), KroneckerDelta(0.5, on="order")
    K = run(backend, gs, node_kernel=nk, edge_kernel=ek, q=5e-4)  # float32 asked: solved in float64 (below)
    np.testing.assert_allclose(K, dense(gs, nk, ek, 5e-4), rtol=rtol(backend, 1e-8))


@pytest.mark.parametrize("variant", ["cpu", pytest.param("gpu32", marks=pytest.mark.gpu),
                                     pytest.param("gpu-default", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("q", [5e-4, 1e-3, 1e-2])
def test_small_q_in_float32_meets_the_closed_form(variant, q):
    """Unlabeled graphs without isolated nodes (a self-loop too) under constant kernels: every x is
    c / (c - 1), c = 1 / (1 - q)^2, so K = n1 n2 / (1 - (1 - q)^2) exactly. float32 (asked by name, or
    the default) is held to 1e-5 of it: below gpu.FLOAT32_MIN_Q, where float32 cannot reach that, the
    call is solved in float64 and its details say so."""
    loop = nx.path_graph(3)
    loop.add_edge(1, 1)
    graphs = [nx.path_graph(2), nx.cycle_graph(5), nx.star_graph(6), nx.complete_graph(4), nx.grid_2d_graph(3, 4),
              nx.balanced_tree(2, 3), nx.cycle_graph(31), loop]
    gs = go.GraphSet.from_networkx(graphs)
    options = {"cpu": {"backend": "cpu"}, "gpu32": {"backend": "gpu", "precision": "float32"},
               "gpu-default": {"backend": "gpu"}}[variant]
    out = go.execute_call("mg_kernel", gs, node_kernel=Constant(1.0), edge_kernel=Constant(1.0), q=q, **options)
    n = np.array([len(G) for G in graphs], float)
    np.testing.assert_allclose(np.asarray(out.result), np.outer(n, n) / (1 - (1 - q) ** 2), rtol=1e-5, atol=0)
    if variant != "cpu":
        from graphops_mg_kernel.gpu import FLOAT32_MIN_Q

        switched = q < FLOAT32_MIN_Q
        assert out.details["precision"] == ("float64" if switched else "float32")
        said = f"q={q:g} is below {FLOAT32_MIN_Q:g}, where float32 cannot reach 1e-5 relative"
        assert (said in out.details["note"]) == switched, out.details["note"]


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
    ({"p": "mass"}, "p='mass' is not 'uniform' and names no node feature"),
    ({"p": -1}, "must be positive"),
    ({"q_bounds": (0.9, 0.1)}, "q_bounds=[0.9, 0.1] has low 0.9 above high 0.1; give them in order, "
                               "q_bounds=[0.1, 0.9], or q_bounds='fixed'"),
    ({"q_bounds": (0.1, 0.04)}, "has low 0.1 above high 0.04"),
    ({"q_bounds": (0.1, 0.9)}, "q_bounds=[0.1, 0.9] must satisfy 0 < low <= q=0.05 <= high < 1"),
    ({"tol": 1e-300}, "tol: Input should be greater than or equal to"),  # (the solver divided by 0 inside)
    ({"tol": 1e-17}, "tol: Input should be greater than or equal to"),
])
def test_bad_parameters_are_named(params, message):
    gs = random_set(6)
    base = {"node_kernel": KroneckerDelta(0.5, on="element"), "edge_kernel": KroneckerDelta(0.5, on="order")}
    with pytest.raises((InputError, ValueError)) as err:
        go.run("mg_kernel", gs, backend="cpu", **{**base, **params})
    assert message in str(err.value)


def test_graphs_without_nodes_and_mixed_label_types_are_refused():
    G = nx.path_graph(3)
    nx.set_node_attributes(G, 1, "element")
    nx.set_edge_attributes(G, 1, "order")
    gs = go.GraphSet.from_networkx([G, nx.Graph(), G], node_features=["element"], edge_features=["order"])
    nk, ek = KroneckerDelta(0.5, on="element"), KroneckerDelta(0.5, on="order")
    with pytest.raises(InputError, match="graph 1 of GraphSet 'graphset' has no nodes"):
        run("cpu", gs, node_kernel=nk, edge_kernel=ek)
    H = nx.path_graph(2)
    nx.set_node_attributes(H, "C", "element")
    with pytest.raises(InputError, match="mixes value types"):
        go.GraphSet.from_networkx([G, H], node_features=["element"])


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


# --- the GPU solver's layout and paths ------------------------------------------------------


def _tiles(gs, reorder):
    from graphops_mg_kernel.common import prepare_cpu
    from graphops_mg_kernel.tiles import octiles

    prep = prepare_cpu(gs)
    return prep, octiles(prep, ("element",), ("order",), "uniform", np.float64, reorder)


@pytest.mark.parametrize("reorder", ["none", "rcm"])
def test_octiles_hold_each_graph(reorder):
    """Rebuild every graph's weighted adjacency and edge features from its tiles and compare
    with the arcs, through the node permutation."""
    gs = random_set(8, n_graphs=12, weighted=True)
    prep, o = _tiles(gs, reorder)
    for g in range(len(gs)):
        n, (_, t0, r0, v0) = int(o.n[g]), o.info[g]
        perm = o.perm[prep.node_ptr[g]:prep.node_ptr[g + 1]]
        assert sorted(perm) == list(range(n))
        want_w, want_f = np.zeros((n, n)), np.zeros((n, n))
        a0, a1 = prep.arc_ptr[g], prep.arc_ptr[g + 1]
        order = gs.edge_features["order"]
        for s, d, w, e in zip(prep.arc_src[a0:a1], prep.arc_dst[a0:a1], prep.arc_w[a0:a1], prep.arc_edge[a0:a1]):
            want_w[perm[s], perm[d]] = w
            want_f[perm[s], perm[d]] = order[e]
        got_w, got_f = np.zeros((n, n)), np.zeros((n, n))
        nt = int(o.nt[g])
        trp = o.trp[r0:r0 + nt + 1]
        for I in range(nt):
            for t in range(t0 + trp[I], t0 + trp[I + 1]):
                J = int(o.tcol[t])
                for bit in range(64):
                    if int(o.mask[t]) >> bit & 1:
                        i, j = 8 * I + bit // 8, 8 * J + bit % 8
                        got_w[i, j] = o.w[t * 64 + bit]
                        got_f[i, j] = o.ef[t * 64 + bit]
                    else:
                        assert o.w[t * 64 + bit] == 0
        np.testing.assert_array_equal(got_w, want_w)
        np.testing.assert_array_equal(got_f, want_f)
        nodes = np.arange(prep.node_ptr[g], prep.node_ptr[g + 1])
        np.testing.assert_array_equal(o.deg[v0 + perm], prep.degree[nodes])
        np.testing.assert_array_equal(o.nf[v0 + perm], gs.node_features["element"][nodes])


def test_rcm_packs_a_shuffled_path_into_fewer_tiles():
    rng = np.random.default_rng(0)
    n = 64
    labels = rng.permutation(n)
    G = nx.Graph()
    G.add_nodes_from(range(n), element=0)
    G.add_edges_from((int(labels[k]), int(labels[k + 1])) for k in range(n - 1))
    nx.set_edge_attributes(G, 1, "order")
    gs = go.GraphSet.from_networkx([G], node_features=["element"], edge_features=["order"])
    plain, rcm = _tiles(gs, "none")[1], _tiles(gs, "rcm")[1]
    assert rcm.tiles.sum() <= 3 * 8 - 2 < plain.tiles.sum()  # a path in order is tridiagonal: 22 tiles


GPU_PATHS = [dict(matvec=m, primitive=p, staging=s, teams=t, reorder=r)
             for m, p, s, t, r in [("factored", "sparse", "shared", "auto", "rcm"),
                                   ("factored", "sparse", "shared", "block", "none"),
                                   ("tiles", "sparse", "shared", "auto", "rcm"),
                                   ("tiles", "dense", "shared", "auto", "none"),
                                   ("tiles", "sparse", "global", "auto", "none"),
                                   ("tiles", "dense", "global", "block", "rcm"),
                                   ("tiles", "sparse", "shared", "block", "none")]]


@pytest.mark.gpu
@pytest.mark.parametrize("path", GPU_PATHS, ids=lambda p: "-".join(p.values()))
def test_gpu_paths_match_the_dense_solve(path):
    gs = random_set(9, n_graphs=12, weighted=True)
    nk, ek = TensorProduct(element=KroneckerDelta(0.3), charge=SquareExponential(1.5)), KroneckerDelta(0.4, on="order")
    K = run("gpu64", gs, node_kernel=nk, edge_kernel=ek, q=0.1, **path)
    np.testing.assert_allclose(K, dense(gs, nk, ek, 0.1), rtol=1e-9)


@pytest.mark.gpu
def test_gpu_continuous_edge_kernel_uses_tiles():
    graphs = [_big_random(n, s) for s, n in enumerate([4, 9, 17, 30])]
    for G in graphs:
        nx.set_edge_attributes(G, {e: 0.1 * k for k, e in enumerate(G.edges)}, "length")
    gs = go.GraphSet.from_networkx(graphs, node_features=["element"], edge_features=["length"])
    nk, ek = KroneckerDelta(0.5, on="element"), SquareExponential(2.0, on="length")
    out = go.execute_call("mg_kernel", gs, backend="gpu", precision="float64", node_kernel=nk, edge_kernel=ek, q=0.1)
    assert out.details["matvec"] == "tiles"
    np.testing.assert_allclose(out.result, run("cpu", gs, node_kernel=nk, edge_kernel=ek, q=0.1), rtol=1e-9)
    with pytest.raises(InputError, match="matvec='factored' needs an edge kernel with few distinct values"):
        run("gpu64", gs, node_kernel=nk, edge_kernel=ek, matvec="factored")


def _big_random(n, seed, p=None):
    G = nx.gnp_random_graph(n, p or 3.0 / n, seed=seed)
    rng = np.random.default_rng(seed)
    nx.set_node_attributes(G, {v: int(rng.integers(0, 3)) for v in G}, "element")
    nx.set_edge_attributes(G, {e: int(rng.integers(1, 3)) for e in G.edges}, "order")
    return G


@pytest.mark.gpu
def test_gpu_large_and_small_graphs_in_one_launch():
    """Graphs of 150 and 300 nodes are too large for shared memory: they take the global-memory
    path, beside small pairs staged in shared memory."""
    graphs = [_big_random(n, s) for s, n in enumerate([5, 150, 12, 300, 40])]
    gs = go.GraphSet.from_networkx(graphs, node_features=["element"], edge_features=["order"])
    nk, ek = KroneckerDelta(0.5, on="element"), KroneckerDelta(0.5, on="order")
    cpu = run("cpu", gs, node_kernel=nk, edge_kernel=ek, q=0.1)
    for variant in ("gpu64", "gpu32"):
        np.testing.assert_allclose(run(variant, gs, node_kernel=nk, edge_kernel=ek, q=0.1), cpu, rtol=rtol(variant))


def launched_kernels(monkeypatch) -> set:
    """The names of the kernels the GPU plans look up from now on (a set filled as they do)."""
    import graphops_mg_kernel.gpu as mg

    launched = set()
    launch_class = mg._Plan._launch_class

    def spy(self, spec, team_bytes, **kwargs):
        out = launch_class(self, spec, team_bytes, **kwargs)
        launched.add(out.name)
        return out

    monkeypatch.setattr(mg._Plan, "_launch_class", spy)
    return launched


@pytest.mark.gpu
def test_gpu_nodewise_blocks_of_large_graphs_are_in_node_order(monkeypatch):
    """In a factored plan, pairs too large for shared memory take the global-memory path, which
    solves in the tile layout's node order (reverse Cuthill-McKee): their node-wise blocks, like
    the others, come back in the graphs' own order."""
    graphs = [_big_random(n, s) for s, n in enumerate([12, 150, 40, 140])]
    gs = go.GraphSet.from_networkx(graphs, node_features=["element"], edge_features=["order"])
    nk, ek = KroneckerDelta(0.5, on="element"), KroneckerDelta(0.5, on="order")
    launched = launched_kernels(monkeypatch)
    R = run("gpu64", gs, node_kernel=nk, edge_kernel=ek, q=0.1, nodewise=True)
    assert any(n.startswith("mgk_global") for n in launched) and any(n.startswith("mgk_c_") for n in launched)
    want = run("cpu", gs, node_kernel=nk, edge_kernel=ek, q=0.1, nodewise=True)
    np.testing.assert_allclose(R, want, rtol=rtol("gpu64"))


@pytest.mark.gpu
@pytest.mark.parametrize("variant", ["gpu32", "gpu64"])
def test_gpu_square_gram_solves_pairs_with_the_smaller_graph_as_rows(variant, monkeypatch):
    """Cycles of 7 to 31 nodes under a constant edge kernel (one term, 2 arcs a node) take the column
    solver's owner path in one column chunk either way round: a square Gram solves each pair with
    the graph of fewer nodes as graph 1, whose rows carry a warp's work. Start probabilities by node
    and lmin = 1 check the solver's K without x at every entry; node-wise values keep x there."""
    import graphops_mg_kernel.gpu as mg
    from graphops.kernels import probability as mp

    rng = np.random.default_rng(7)
    graphs = [nx.cycle_graph(n) for n in (30, 7, 18, 25, 12, 31, 18)]
    for G in graphs:
        nx.set_node_attributes(G, {v: int(rng.integers(0, 3)) for v in G}, "element")
        nx.set_edge_attributes(G, {e: float(rng.uniform(0.5, 1.5)) for e in G.edges}, "w")
    gs = go.GraphSet.from_networkx(graphs, node_features=["element"], weight="w")
    sizes = np.diff(gs.node_ptr)
    solved = []
    schedule = mg._Plan.schedule

    def spy(self, *args, **kwargs):
        out = schedule(self, *args, **kwargs)
        pairs = out[0].get()
        turned = pairs[:, 0] < 0
        solved.append((np.where(turned, pairs[:, 1], pairs[:, 0]), np.where(turned, ~pairs[:, 0], pairs[:, 1])))
        return out

    monkeypatch.setattr(mg._Plan, "schedule", spy)
    kw = dict(node_kernel=KroneckerDelta(0.5, on="element"), edge_kernel=Constant(0.8), q=0.1,
              p=mp.Assign("element", {0: 1.0, 1: 0.5}, default=0.25))
    K = run(variant, gs, **kw)
    rows, cols = (np.concatenate(v) for v in zip(*solved))
    assert len(rows) == len(graphs) * (len(graphs) + 1) // 2 and (rows != cols).any()
    assert (sizes[rows] <= sizes[cols]).all() and (rows > cols).any() and (rows < cols).any()
    np.testing.assert_allclose(K, run("cpu", gs, **kw), rtol=rtol(variant))
    Kl = run(variant, gs, lmin=1, **kw)
    np.testing.assert_allclose(Kl, run("cpu", gs, lmin=1, **kw), rtol=rtol(variant), atol=rtol(variant) * np.abs(K).max())
    R = run(variant, gs, nodewise=True, **kw)
    np.testing.assert_allclose(R, run("cpu", gs, nodewise=True, **kw), rtol=rtol(variant),
                               atol=rtol(variant) * np.abs(R).max())


@pytest.mark.gpu
@pytest.mark.parametrize("edges", ["labels", "weights"])
@pytest.mark.parametrize("variant", ["gpu32", "gpu64"])
def test_gpu_every_column_shape_takes_pairs_and_matches_the_cpu(variant, edges, monkeypatch):
    """Graphs of 3 to 150 nodes against each other (a cross Gram, so either graph of a pair may be
    the larger): every team shape of the column solver in this precision gets pairs, the factored
    solver and the global-memory path those beyond its largest, and all values match the CPU's.
    With edge labels the edge kernel has three terms; with weighted edges and a constant edge
    kernel, one: the column solver's owner path takes the pairs whose second graph has at most
    four arcs a node, the others the two-step mat-vec."""
    import graphops_mg_kernel.gpu as mg

    sizes = [3, 6, 12, 20, 25, 40, 50, 90, 100, 150]
    graphs = [_big_random(n, s) for s, n in enumerate(sizes)]
    for s, G in enumerate([nx.circulant_graph(45, [1, 7]), nx.circulant_graph(60, [1])]):  # 33-64 nodes, <= 4 arcs
        rng = np.random.default_rng(s)
        nx.set_node_attributes(G, {v: int(rng.integers(0, 3)) for v in G}, "element")
        nx.set_edge_attributes(G, {e: int(rng.integers(1, 3)) for e in G.edges}, "order")
        graphs.append(G)
    nk, ek = KroneckerDelta(0.5, on="element"), KroneckerDelta(0.5, on="order")
    options = {"node_features": ["element"], "edge_features": ["order"]}
    if edges == "weights":
        rng = np.random.default_rng(5)
        for G in graphs:
            nx.set_edge_attributes(G, {e: float(rng.uniform(0.5, 1.5)) for e in G.edges}, "w")
        most = {len(G): max(d for _, d in G.degree) for G in graphs}
        assert most[12] <= 4 and most[45] <= 4 and most[60] <= 4 and most[50] > 4
        ek, options = Constant(0.8), {"node_features": ["element"], "weight": "w"}
    a, b = (go.GraphSet.from_networkx(graphs, **options) for _ in "ab")
    launched = launched_kernels(monkeypatch)
    out = go.execute_call("mg_kernel", a, b, **VARIANTS[variant][0], node_kernel=nk, edge_kernel=ek, q=0.1)
    assert out.details["terms"] == (1 if edges == "weights" else 3)
    real = np.float32 if variant == "gpu32" else np.float64
    shapes = {f"mgk_c_w{w}_k{k}_i{c}" for w, k, c, _ in mg.COLUMNS[real]}
    twins = {f"mgk_co_w{w}_k{k}_i{c}" for w, k, c, _ in mg.COLUMNS[real]}
    others = {name[:6] for name in launched - shapes - twins}
    assert shapes | twins <= launched and others == {"mgk_f_", "mgk_gl"}, sorted(launched)
    np.testing.assert_allclose(np.asarray(out.result), run("cpu", a, b, node_kernel=nk, edge_kernel=ek, q=0.1),
                               rtol=rtol(variant))
    if edges == "weights":  # a square Gram: pairs that take the owner path only the other way are turned
        turned = []
        schedule = mg._Plan.schedule

        def spy(self, *args, **kwargs):
            out = schedule(self, *args, **kwargs)
            turned.append(int((out[0][:, 0] < 0).sum()))
            return out

        monkeypatch.setattr(mg._Plan, "schedule", spy)
        K = run(variant, a, node_kernel=nk, edge_kernel=ek, q=0.1)
        assert sum(turned) > 0
        np.testing.assert_allclose(K, run("cpu", a, node_kernel=nk, edge_kernel=ek, q=0.1), rtol=rtol(variant))


def _labelled(G, seed):
    G = nx.convert_node_labels_to_integers(G)
    rng = np.random.default_rng(seed)
    nx.set_node_attributes(G, {v: int(rng.integers(0, 3)) for v in G}, "element")
    nx.set_edge_attributes(G, {e: int(rng.integers(1, 3)) for e in G.edges}, "order")
    return G


def _class_counts(monkeypatch) -> dict:
    """Pairs each GPU class (by kernel name) gets from the plans' schedules from now on."""
    import graphops_mg_kernel.gpu as mg

    counts: dict = {}
    schedule = mg._Plan.schedule

    def spy(self, *args, **kwargs):
        out = schedule(self, *args, **kwargs)
        for c, n in enumerate(np.diff(out[1].get())):
            if n:
                counts[self.launches[c].name] = counts.get(self.launches[c].name, 0) + int(n)
        return out

    monkeypatch.setattr(mg._Plan, "schedule", spy)
    return counts


@pytest.mark.gpu
@pytest.mark.parametrize("edges", ["labels", "constant"])
@pytest.mark.parametrize("variant", ["gpu32", "gpu64"])
def test_gpu_pairs_solve_on_one_colour(variant, edges, monkeypatch):
    """A pair whose first graph has each colour of its independent split in half its team's rows
    goes to the column class's twin (mgk_co_*), which solves on colour 0 alone: bipartite graphs
    (paths, even cycles, grids, trees, a disconnected forest with an isolated node) and others
    (odd cycles, a lollipop, a complete graph, random graphs with self-loops), and graphs whose
    colours do not fit (a star), against each other in a square Gram. The twins get pairs and
    every value matches the CPU's (with edge labels three terms: V and two barriers a mat-vec;
    with a constant edge kernel one term: the owner path)."""
    graphs = [nx.path_graph(7), nx.cycle_graph(10), nx.grid_2d_graph(4, 5), nx.balanced_tree(2, 4),
              nx.disjoint_union(nx.path_graph(5), nx.empty_graph(2)), nx.cycle_graph(9), nx.star_graph(12),
              nx.cycle_graph(30), nx.grid_2d_graph(6, 9), nx.lollipop_graph(4, 6), nx.path_graph(2),
              nx.complete_graph(5)]
    for seed in range(6):
        G = nx.gnp_random_graph(8 + 5 * seed, 0.25, seed=seed)
        G.add_edges_from([(0, 0), (3, 3)])
        graphs.append(G)
    graphs = [_labelled(G, s) for s, G in enumerate(graphs)]
    nk = KroneckerDelta(0.5, on="element")
    ek = KroneckerDelta(0.5, on="order") if edges == "labels" else Constant(0.8)
    gs = go.GraphSet.from_networkx(graphs, node_features=["element"], edge_features=["order"])
    counts = _class_counts(monkeypatch)
    got = run(variant, gs, node_kernel=nk, edge_kernel=ek, q=0.1)
    twins = {name: n for name, n in counts.items() if name.startswith("mgk_co_")}
    assert sum(twins.values()) >= 40, counts
    np.testing.assert_allclose(got, run("cpu", gs, node_kernel=nk, edge_kernel=ek, q=0.1), rtol=rtol(variant))


@pytest.mark.gpu
@pytest.mark.parametrize("variant", ["gpu32", "gpu64"])
def test_gpu_float32_solves_small_q_without_the_twins(variant, monkeypatch):
    """Below gpu.TWIN_MIN_Q32 float32 keeps every pair on the plain column solve, float64 still
    takes the twins, and the values match the CPU's either way (the float32 cross-similarity that
    needs it: tests/peer/test_graphdot_kernel.py, unlabeled at q = 0.01)."""
    from graphops_mg_kernel.gpu import TWIN_MIN_Q32

    graphs = [nx.path_graph(5), nx.cycle_graph(6), nx.star_graph(2), nx.cycle_graph(3), nx.balanced_tree(2, 2),
              nx.grid_2d_graph(2, 3), nx.cycle_graph(7)]
    gs = go.GraphSet.from_networkx(graphs)
    q = TWIN_MIN_Q32 / 3
    counts = _class_counts(monkeypatch)
    one = {"node_kernel": Constant(1.0), "edge_kernel": Constant(1.0), "q": q}
    R = run(variant, gs, **one)
    twins = sum(n for name, n in counts.items() if name.startswith("mgk_co_"))
    assert (twins == 0) if variant == "gpu32" else (twins > 0), counts
    np.testing.assert_allclose(R, run("cpu", gs, **one), rtol=rtol(variant))


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["MUTAG", "PTC_MR"])
def test_gpu_agrees_with_cpu_on_tu_sets(name, shared_data):
    gs = go.read_tu(shared_data / "tu" / name)
    kd = KroneckerDelta(0.5, on="label")
    cpu = run("cpu", gs, node_kernel=kd, edge_kernel=kd, q=0.05)
    for variant in ("gpu32", "gpu64"):
        K = run(variant, gs, node_kernel=kd, edge_kernel=kd, q=0.05)
        np.testing.assert_allclose(K, cpu, rtol=rtol(variant))
    Kt = run("gpu32", gs[:20], gs[20:50], node_kernel=kd, edge_kernel=kd, q=0.05, normalize=True)
    d = np.sqrt(np.diag(cpu))
    np.testing.assert_allclose(Kt, (cpu / np.outer(d, d))[:20, 20:50], rtol=1e-5)


@pytest.mark.gpu
def test_gpu_errors():
    gs = random_set(5)
    nk, ek = KroneckerDelta(0.5, on="element"), KroneckerDelta(0.5, on="order")
    with pytest.raises(go.GraphopsError, match=r"graph \d+ of .* and graph \d+ of .* did not converge"):
        run("gpu64", gs, node_kernel=nk, edge_kernel=ek, q=0.01, max_iter=1, tol=1e-14)
    G = nx.MultiGraph()
    G.add_nodes_from(range(3), element=0)
    G.add_edges_from([(0, 1), (0, 1), (1, 2)], order=1)
    multi = go.GraphSet.from_networkx([G], node_features=["element"], edge_features=["order"])
    with pytest.raises(InputError, match="parallel edges between its nodes 0 and 1.*cpu backend"):
        run("gpu32", multi, node_kernel=nk, edge_kernel=ek, matvec="tiles")
    # the factored mat-vec takes parallel edges as they are
    np.testing.assert_allclose(run("gpu64", multi, node_kernel=nk, edge_kernel=ek, matvec="factored"),
                               run("cpu", multi, node_kernel=nk, edge_kernel=ek), rtol=1e-9)


@pytest.mark.gpu
def test_gpu_graphs_give_a_cupy_matrix():
    import cupy as cp

    gs = random_set(10).to("gpu")
    nk, ek = KroneckerDelta(0.5, on="element"), KroneckerDelta(0.5, on="order")
    K = go.run("mg_kernel", gs, backend="gpu", node_kernel=nk, edge_kernel=ek, q=0.1)
    assert isinstance(K, cp.ndarray)
    np.testing.assert_allclose(K.get(), run("cpu", gs.to("cpu"), node_kernel=nk, edge_kernel=ek, q=0.1), rtol=1e-5)


@pytest.mark.parametrize("kernels", KERNEL_CASES + [
    (KroneckerDelta(0.5, on="element"), TensorProduct(order=KroneckerDelta(0.3), kind=KroneckerDelta(0.6))),
    (KroneckerDelta(0.5, on="element"), KroneckerDelta(0.5, on="order") * Constant(0.5) + Constant(0.25))],
    ids=[*KERNEL_IDS, "two-labels", "sum"])
def test_factored_edge_kernel_rebuilds_the_product_adjacency(kernels):
    """Σ_t F_t ⊗ G_t from the per-term CSRs equals A_× ∘ E_× for every pair, across two sets."""
    from graphops_mg_kernel.common import prepare_cpu
    from graphops_mg_kernel.lowrank import side, terms
    from tests.reference.mg_kernel import _graph, product_adjacency

    node_kernel, edge_kernel = kernels
    a = random_set(11, n_graphs=7, weighted=True)
    b = random_set(12, n_graphs=6)
    rng = np.random.default_rng(0)
    for gs in (a, b):  # a second edge label
        gs.edge_features["kind"] = rng.integers(0, 3, gs.n_edges)
    pa, pb = prepare_cpu(a), prepare_cpu(b)
    t = terms(edge_kernel, pa, pb)
    assert t is not None and t.count <= 1 + 6
    names = edge_kernel.features
    fa = side(pa, t, True, node_kernel.features, names, "uniform", np.float64)
    fb = side(pb, t, False, node_kernel.features, names, "uniform", np.float64)

    for i in range(len(a)):
        g1 = _graph(a, i, a.node_feature_table(), a.edge_feature_table())
        for j in range(len(b)):
            g2 = _graph(b, j, b.node_feature_table(), b.edge_feature_table())
            got = sum(np.kron(F, G) for F, G in zip(_dense_terms(fa, i), _dense_terms(fb, j)))
            np.testing.assert_allclose(got, product_adjacency(g1, g2, edge_kernel), rtol=1e-12, atol=1e-12)
    for f in (fa, fb):  # the column solver pads rows to these: the most arcs of a row over all terms, and at a node
        for g in range(len(f.n)):
            counts = np.array([[np.count_nonzero(row) for row in F] for F in _dense_terms(f, g)])
            assert f.most[g].tolist() == [counts.sum(axis=0).max(), counts.max()]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 12), st.integers(0, 2 ** 16), st.floats(0.0, 0.9), st.booleans()),
                min_size=1, max_size=6))
def test_coloured_side_is_the_plain_one_renumbered(specs):
    """independent_split's colour 1 is independent (no arc between two of its nodes, no
    self-loop) and maximal (every other node without a self-loop has a neighbour in it), the
    larger side of each of networkx's bipartite components. side(colour=True), the column solver's first
    side, numbers colour 0 first, counts it in ``half`` and permutes rows, arcs and node values
    alike: its term matrices are the plain ones permuted, with colour 1's block empty (and colour
    0's too for a bipartite graph)."""
    from graphops_mg_kernel.common import prepare_cpu
    from graphops_mg_kernel.lowrank import independent_split, side, terms

    graphs = []
    for n, seed, prob, loop in specs:
        rng = np.random.default_rng(seed)
        G = nx.gnp_random_graph(n, prob, seed=seed)
        if loop:
            v = int(rng.integers(n))
            G.add_edge(v, v)
        nx.set_node_attributes(G, {v: int(rng.integers(0, 3)) for v in G}, "element")
        nx.set_edge_attributes(G, {e: int(rng.integers(1, 3)) for e in G.edges}, "order")
        graphs.append(G)
    gs = go.GraphSet.from_networkx(graphs, node_features=["element"], edge_features=["order"])
    prep = prepare_cpu(gs)
    split = independent_split(prep)
    ek = KroneckerDelta(0.5, on="order")
    t = terms(ek, prep, prep)
    plain = side(prep, t, True, ("element",), ek.features, "uniform", np.float64)
    coloured = side(prep, t, True, ("element",), ek.features, "uniform", np.float64, colour=True)
    for g, G in enumerate(graphs):
        first, n = int(prep.node_ptr[g]), G.number_of_nodes()
        one, bipartite = split[first:first + n], nx.is_bipartite(G)
        for part in nx.connected_components(G):
            H = G.subgraph(part)
            if nx.is_bipartite(H):
                sides = np.bincount(list(nx.bipartite.color(H).values()), minlength=2)
                assert one[list(part)].sum() == sides.max()
        assert not any(one[u] and one[v] for u, v in G.edges)
        assert all(one[v] or G.has_edge(v, v) or any(one[w] for w in G[v]) for v in G)
        order = np.argsort(one, kind="stable")
        h = int(coloured.half[g])
        assert h == n - int(one.sum())
        for F0, F1 in zip(_dense_terms(plain, g), _dense_terms(coloured, g)):
            np.testing.assert_array_equal(F1, F0[np.ix_(order, order)])
            assert not F1[h:, h:].any()
            if bipartite:
                assert not F1[:h, :h].any()
        for name in ("deg", "st"):
            np.testing.assert_array_equal(getattr(coloured, name)[first:first + n],
                                          getattr(plain, name)[first:first + n][order])


def test_independent_split_leaves_large_graphs_whole():
    """Graphs of more nodes than ``most`` (no column team holds them) stay colour 0 and are not
    counted as split (``half`` 0); the others are split as usual."""
    from graphops_mg_kernel.common import prepare_cpu
    from graphops_mg_kernel.lowrank import independent_split

    graphs = [nx.path_graph(6), nx.cycle_graph(9), nx.path_graph(4)]
    for G in graphs:
        nx.set_node_attributes(G, 0, "element")
    prep = prepare_cpu(go.GraphSet.from_networkx(graphs, node_features=["element"]))
    split = independent_split(prep, most=6)
    assert split[:6].tolist() == [0, 1, 0, 1, 0, 1] or split[:6].tolist() == [1, 0, 1, 0, 1, 0]
    assert not split[6:15].any() and split[15:].sum() == 2


def _dense_terms(f, g):
    """Graph g's term matrices F_t of a lowrank.Side, dense."""
    n, r0, z0 = int(f.info[g, 0]), int(f.info[g, 1]), int(f.info[g, 2])
    out = []
    for r in range(f.n_terms):
        rp = f.rptr[r0 + r * (n + 1): r0 + (r + 1) * (n + 1)]
        F = np.zeros((n, n))
        for i in range(n):
            for e in range(rp[i], rp[i + 1]):
                F[i, f.col[z0 + e]] += f.val[z0 + e]
        out.append(F)
    return out


@pytest.mark.parametrize("columns", [1, 2, 3])
def test_unique_rows_are_numpys(columns):
    """The edge values' distinct rows and inverse are NumPy's ``unique(axis=0)``, only faster."""
    from graphops_mg_kernel.lowrank import unique_rows

    rng = np.random.default_rng(columns)
    values = rng.integers(0, 3, (500, columns)).astype(np.float64) - 1.0
    values[::7, 0] = 0.5
    values[::11] = np.nan  # NaN rows stay distinct, as in NumPy
    for v in (values, values[:1], values[:0], np.zeros((40, columns))):
        rows, inverse = unique_rows(v)
        want_rows, want_inverse = np.unique(v, axis=0, return_inverse=True)
        np.testing.assert_array_equal(rows, want_rows)
        np.testing.assert_array_equal(rows[inverse], v)
        plain = ~np.isnan(v).any(axis=1)  # which NaN row is which is NumPy's sort's affair
        np.testing.assert_array_equal(inverse[plain], want_inverse.reshape(-1)[plain])


def test_continuous_edge_features_have_no_short_form():
    from graphops_mg_kernel.common import prepare_cpu
    from graphops_mg_kernel.lowrank import terms

    graphs = [_big_random(60, s) for s in range(4)]
    for G in graphs:
        nx.set_edge_attributes(G, {e: float(np.random.default_rng(len(e)).normal()) + k * 1e-3
                                   for k, e in enumerate(G.edges)}, "length")
    gs = go.GraphSet.from_networkx(graphs, node_features=["element"], edge_features=["length"])
    p = prepare_cpu(gs)
    assert terms(SquareExponential(1.0, on="length"), p, p) is None


# --- modes: diagonal, node-wise, gradients ---------------------------------------------------

MODE_BACKENDS = ["cpu", pytest.param("gpu64", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("backend", MODE_BACKENDS)
def test_diagonal(backend):
    gs = random_set(13, n_graphs=8, weighted=True)
    nk, ek = KroneckerDelta(0.5, on="element"), KroneckerDelta(0.5, on="order")
    d = run(backend, gs, node_kernel=nk, edge_kernel=ek, q=0.1, diagonal=True)
    np.testing.assert_allclose(d, np.diag(dense(gs, nk, ek, 0.1)), rtol=1e-9)
    np.testing.assert_array_equal(run(backend, gs, node_kernel=nk, edge_kernel=ek, diagonal=True, normalize=True), 1.0)


@pytest.mark.parametrize("backend", MODE_BACKENDS)
def test_nodewise_blocks_are_the_dense_solution(backend):
    from tests.reference.mg_kernel import _graph, mg_kernel_pair

    gs = random_set(14, n_graphs=6, weighted=True)
    nk, ek = KroneckerDelta(0.5, on="element"), KroneckerDelta(0.5, on="order")
    table, etable = gs.node_feature_table(), gs.edge_feature_table()
    graphs = [_graph(gs, i, table, etable) for i in range(len(gs))]
    ptr = np.asarray(gs.node_ptr)
    R = run(backend, gs, node_kernel=nk, edge_kernel=ek, q=0.1, nodewise=True)
    assert R.shape == (ptr[-1], ptr[-1])
    for i in range(len(gs)):
        for j in range(len(gs)):
            block = R[ptr[i]:ptr[i + 1], ptr[j]:ptr[j + 1]]
            np.testing.assert_allclose(block, mg_kernel_pair(graphs[i], graphs[j], nk, ek, 0.1, nodal=True),
                                       rtol=1e-9, atol=1e-12)
    # one graph against another: n1 x n2; normalized blocks sum to normalized K
    R12 = run(backend, gs[[4]], gs[[5]], node_kernel=nk, edge_kernel=ek, q=0.1, nodewise=True, normalize=True)
    K = dense(gs, nk, ek, 0.1)
    assert R12.shape == (ptr[5] - ptr[4], ptr[6] - ptr[5])
    np.testing.assert_allclose(R12.sum(), K[4, 5] / np.sqrt(K[4, 4] * K[5, 5]), rtol=1e-9)


GRADIENT_CASES = [
    (KroneckerDelta(0.5, on="element"), KroneckerDelta(0.4, on="order"), {}),
    (TensorProduct(element=KroneckerDelta(0.3), charge=SquareExponential(1.5)), KroneckerDelta(0.6, on="order"),
     {"lmin": 1}),
    (KroneckerDelta(0.5, on="element", h_bounds="fixed"), KroneckerDelta(0.4, on="order"),
     {"normalize": True, "q_bounds": "fixed"}),
    (TensorProduct(element=KroneckerDelta(0.4) ** Constant(1.5), charge=RationalQuadratic(1.0, 1.5) + Constant(0.01)),
     TensorProduct(order=KroneckerDelta(0.6) * Constant(0.9)), {}),
]
GRADIENT_IDS = ["delta", "tensor-lmin", "normalized-fixed", "composite"]


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=GRADIENT_IDS)
@pytest.mark.parametrize("split", [False, True], ids=["square", "train-test"])
def test_gradient_matches_finite_differences(case, split):
    """dK by the log of every free hyperparameter against central differences of K."""
    nk, ek, extra = case
    gs = random_set(15, n_graphs=6, weighted=True)
    inputs = (gs[[0, 1, 2]], gs[[3, 4, 5]]) if split else (gs,)
    base = dict(node_kernel=nk, edge_kernel=ek, q=0.15, tol=1e-13, **extra)
    K, dK = go.run("mg_kernel", *inputs, backend="cpu", eval_gradient=True, **base)
    np.testing.assert_allclose(K, go.run("mg_kernel", *inputs, backend="cpu", **base), rtol=1e-12)
    params = get_registry().algorithm("mg_kernel").params(**base)
    free, values = params.free()
    names = [params.hyperparameters()[k][0] for k in free]
    assert dK.shape == K.shape + (len(free),)
    for h, (name, value) in enumerate(zip(names, values)):
        step = 1e-5
        moved = []
        for sign in (1, -1):
            v = value * np.exp(sign * step)
            if name == "q":
                kw = {**base, "q": v, "q_bounds": (1e-4, 0.9)}
            else:
                role, hname = name.split(".")
                kernel = base[role]
                hyper = [x.value for x in kernel.hyperparameters]
                hyper[kernel.hyperparameter_names.index(hname)] = v
                kw = {**base, role: kernel.with_values(hyper)}
            moved.append(go.run("mg_kernel", *inputs, backend="cpu", **kw))
        fd = (moved[0] - moved[1]) / (2 * step)
        np.testing.assert_allclose(dK[:, :, h], fd, rtol=2e-6, atol=1e-7 * np.abs(K).max(), err_msg=name)


@pytest.mark.gpu
@pytest.mark.parametrize("case", GRADIENT_CASES, ids=GRADIENT_IDS)
@pytest.mark.parametrize("split", [False, True], ids=["square", "train-test"])
def test_gpu_gradient_matches_cpu(case, split):
    nk, ek, extra = case
    gs = random_set(15, n_graphs=6, weighted=True)
    inputs = (gs[[0, 1, 2]], gs[[3, 4, 5]]) if split else (gs,)
    base = dict(node_kernel=nk, edge_kernel=ek, q=0.15, eval_gradient=True, **extra)
    K, dK = go.run("mg_kernel", *inputs, backend="cpu", **base)
    for precision, rtol in (("float64", 1e-8), ("float32", 1e-4)):
        Kg, dKg = go.run("mg_kernel", *inputs, backend="gpu", precision=precision, **base)
        np.testing.assert_allclose(Kg, K, rtol=rtol, atol=rtol * np.abs(K).max())  # lmin=1: some K are 0
        np.testing.assert_allclose(dKg, dK, rtol=rtol, atol=rtol * np.abs(dK).max())


def test_modes_are_one_at_a_time():
    gs = random_set(16)
    with pytest.raises(ValueError, match="diagonal and eval_gradient cannot be asked together"):
        run("cpu", gs, node_kernel=KroneckerDelta(0.5, on="element"), edge_kernel=KroneckerDelta(0.5, on="order"),
            diagonal=True, eval_gradient=True)
    with pytest.raises(ValueError, match="normalize=True is not offered with it"):
        run("cpu", gs, node_kernel=KroneckerDelta(0.5, on="element"), edge_kernel=KroneckerDelta(0.5, on="order"),
            nodewise=True, eval_gradient=True, normalize=True)
    with pytest.raises(ValueError, match="diagonal=True gives K"):
        run("cpu", gs, gs, node_kernel=KroneckerDelta(0.5, on="element"),
            edge_kernel=KroneckerDelta(0.5, on="order"), diagonal=True)


# --- the scikit-learn estimator -----------------------------------------------------------------


def _estimator(**kw):
    from graphops.kernels import MarginalizedGraphKernel

    return MarginalizedGraphKernel(KroneckerDelta(0.5, on="element"),
                                   TensorProduct(order=KroneckerDelta(0.4, h_bounds="fixed")), q=0.1,
                                   backend="cpu", **kw)


def test_estimator_hyperparameters_and_gradient():
    gs = random_set(17, n_graphs=6, weighted=True)
    k = _estimator(tol=1e-13)
    assert [h.name for h in k.hyperparameters][:2] == ["q", "node_kernel__h"]
    assert [h.fixed for h in k.hyperparameters] == [False, False, True]
    np.testing.assert_allclose(k.theta, np.log([0.1, 0.5]))
    np.testing.assert_allclose(k.bounds, np.log([[1e-4, 1 - 1e-4], [1e-3, 1.0]]))
    moved = k.clone_with_theta(np.log([0.2, 0.3]))
    assert moved.q == pytest.approx(0.2) and moved.node_kernel.hyperparameters[0].value == pytest.approx(0.3)
    assert k.q == 0.1  # the original is unchanged
    K, dK = k(gs, eval_gradient=True)
    np.testing.assert_allclose(K, k(gs), rtol=1e-12)
    np.testing.assert_allclose(k.diag(gs), np.diag(K), rtol=1e-12)
    for h in range(k.n_dims):
        step = np.zeros(k.n_dims)
        step[h] = 1e-5
        fd = (k.clone_with_theta(k.theta + step)(gs) - k.clone_with_theta(k.theta - step)(gs)) / 2e-5
        np.testing.assert_allclose(dK[:, :, h], fd, rtol=2e-6, atol=1e-7 * K.max())
    # fit / transform: test rows against the fitted graphs
    k.fit(gs[[0, 1, 2]])
    np.testing.assert_allclose(k.transform(gs[[3, 4]]), K[np.ix_([3, 4], [0, 1, 2])], rtol=1e-12)


@pytest.mark.parametrize("read", ["bounds", "theta", "hyperparameters"])
def test_estimator_refuses_inverted_q_bounds_where_they_are_read(read):
    """The constructor stores q_bounds as given (scikit-learn's contract); reading them checks them."""
    k = _estimator(q_bounds=(0.9, 0.1))
    with pytest.raises(InputError) as err:
        getattr(k, read)
    assert str(err.value) == ("MarginalizedGraphKernel: q_bounds=[0.9, 0.1] has low 0.9 above high 0.1; give them "
                              "in order, q_bounds=[0.1, 0.9], or q_bounds='fixed'")
    with pytest.raises(InputError, match=r"q_bounds=\[0.2, 0.5\] must satisfy 0 < low <= q=0.1 <= high < 1"):
        getattr(_estimator(q_bounds=(0.2, 0.5)), read)


def test_inverted_q_bounds_in_yaml_name_the_step(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("version: 1\nname: t\ngraphs:\n  m: {dataset: MUTAG}\nsteps:\n  - id: s\n    algorithm: mg_kernel\n"
                    "    inputs: {graphs: m}\n    params: {q_bounds: [0.9, 0.1]}\n")
    with pytest.raises(go.ConfigError) as err:
        go.load_pipeline(path)
    assert "==> At steps[0] (id='s', algorithm='mg_kernel')\n==> At key: params.q_bounds" in str(err.value)
    assert ("q_bounds=[0.9, 0.1] has low 0.9 above high 0.1; give them in order, q_bounds=[0.1, 0.9], or "
            "q_bounds='fixed'") in str(err.value)


@pytest.mark.parametrize("normalize", [False, True])
def test_estimator_gradient_of_a_cross_matrix(normalize):
    """``k(X, Y, eval_gradient=True)`` is (K, dK) of the cross matrix: graphops.run's, and dK the
    central differences of K by theta."""
    gs = random_set(18, n_graphs=6, weighted=True)
    X, Y = gs[[0, 1, 2, 3]], gs[[4, 5, 1]]
    k = _estimator(tol=1e-13, normalize=normalize)
    K, dK = k(X, Y, eval_gradient=True)
    assert K.shape == (4, 3) and dK.shape == (4, 3, k.n_dims)
    K0, dK0 = go.run("mg_kernel", X, Y, backend="cpu", eval_gradient=True, **k._call_params())
    np.testing.assert_array_equal(K, K0)
    np.testing.assert_array_equal(dK, dK0)
    np.testing.assert_allclose(K, k(X, Y), rtol=1e-12)
    for h in range(k.n_dims):
        step = np.zeros(k.n_dims)
        step[h] = 1e-5
        fd = (k.clone_with_theta(k.theta + step)(X, Y) - k.clone_with_theta(k.theta - step)(X, Y)) / 2e-5
        np.testing.assert_allclose(dK[:, :, h], fd, rtol=2e-6, atol=1e-7 * K.max())


def test_estimator_fits_a_gaussian_process():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.base import clone
    from sklearn.gaussian_process import GaussianProcessRegressor

    rng = np.random.default_rng(0)
    graphs = []
    for k in range(16):
        G = nx.gnp_random_graph(int(rng.integers(3, 8)), 0.5, seed=k)
        nx.set_node_attributes(G, {v: int(rng.integers(0, 2)) for v in G}, "element")
        nx.set_edge_attributes(G, 1, "order")
        graphs.append(G)
    y = np.array([G.number_of_edges() for G in graphs], float)
    kernel = _estimator(normalize=True)
    assert clone(kernel).get_params()["q"] == kernel.q
    X = np.empty(len(graphs), dtype=object)
    X[:] = graphs  # scikit-learn's way of holding objects
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # an optimum at a bound
        gpr = GaussianProcessRegressor(kernel=kernel, alpha=1e-2, normalize_y=True).fit(X, y)
    assert gpr.kernel_.theta.shape == (2,)
    assert np.isfinite(gpr.log_marginal_likelihood_value_)
    assert np.all(np.isfinite(gpr.predict(X[:3]))), sklearn.__version__


def test_gradient_step_writes_npz(tmp_path):
    """A pipeline step with eval_gradient writes K and dK to one .npz; .npy is refused with the fix."""
    text = """
version: 1
graphs:
  mutag: {dataset: MUTAG}
steps:
  - id: grad
    algorithm: mg_kernel
    inputs: {graphs: mutag}
    params: {node_kernel: {kronecker_delta: {h: 0.5, on: label}}, edge_kernel: {constant: {c: 1.0}}, q: 0.1,
             eval_gradient: true}
    output: OUT
"""
    ok = tmp_path / "ok.yaml"
    ok.write_text(text.replace("OUT", "grad.npz"))
    go.run_pipeline(ok, out=tmp_path)
    with np.load(tmp_path / "grad.npz") as z:
        K, dK = z["arr_0"], z["arr_1"]
    assert K.shape == (188, 188) and dK.shape == (188, 188, 3)  # by log q, log h (node), log c (edge)
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("OUT", "grad.npy"))
    with pytest.raises(go.GraphopsError, match=r"mg_kernel returns several arrays with these parameters; write it "
                                               r"to a file ending in .npz \(got 'grad.npy'\)"):
        go.run_pipeline(bad, out=tmp_path)  # refused by validation, before any computing


def test_gpu_statistics_check():
    """The GPU solvers' statistics array: (total, most) back, or the error naming one bad pair."""
    from graphops_mg_kernel.common import NotConvergedError, prepare_cpu, stats_check

    p = prepare_cpu(random_set(18))
    params = get_registry().algorithm("mg_kernel").params(node_kernel=KroneckerDelta(0.5, on="element"),
                                                           edge_kernel=KroneckerDelta(0.5, on="order"))
    assert stats_check(np.array([120, 31, 0, 0], np.uint64), p, p, 1e-6, params, True) == (120, 31)
    bad = np.array([120, 31, 2, (3 << 32 | 5) + 1], np.uint64)
    with pytest.raises(NotConvergedError, match=r"graph 3 of .* and graph 5 of .* did not converge to tol=1e-06 .*"
                                                r"\(2 such pair\(s\)\).*precision=float64"):
        stats_check(bad, p, p, 1e-6, params, True)


def test_nodewise_matrix_reads_blocks_through_the_solver_order():
    """The GPU solvers write each block in their own node order (the tile layout's renumbers
    the nodes; in a factored plan, pairs on the global-memory path take it while the others keep
    the graphs' order); placed through the permutations, pair by pair, the matrix is the same as
    from blocks in node order."""
    from graphops_mg_kernel.common import gram_pairs, nodewise_matrix, prepare_cpu
    from graphops_mg_kernel.tiles import rcm

    p = prepare_cpu(random_set(19, n_graphs=5))
    n = np.diff(p.node_ptr)
    pairs = gram_pairs(len(n), None)
    offsets = np.concatenate([[0], np.cumsum(n[pairs[:, 0]] * n[pairs[:, 1]])])
    rng = np.random.default_rng(1)
    plain = rng.random(int(offsets[-1]))
    perm = rcm(p)  # new local index of every node
    assert (perm != np.concatenate([np.arange(k) for k in n])).any()
    which = rng.integers(0, 2, len(pairs))
    assert 0 < which.sum() < len(pairs)
    permuted, mixed = np.empty_like(plain), np.empty_like(plain)
    for t, (a, b) in enumerate(pairs):
        block = plain[offsets[t]:offsets[t + 1]].reshape(n[a], n[b])
        pa, pb = perm[p.node_ptr[a]:p.node_ptr[a + 1]], perm[p.node_ptr[b]:p.node_ptr[b + 1]]
        moved = np.empty_like(block)
        moved[np.ix_(pa, pb)] = block
        permuted[offsets[t]:offsets[t + 1]] = moved.reshape(-1)
        mixed[offsets[t]:offsets[t + 1]] = (moved if which[t] else block).reshape(-1)
    want = nodewise_matrix(plain, offsets, pairs, p, p, True)
    np.testing.assert_array_equal(nodewise_matrix(permuted, offsets, pairs, p, p, True, perms=[(perm, perm)]), want)
    got = nodewise_matrix(mixed, offsets, pairs, p, p, True, perms=[None, (perm, perm)], which=which)
    np.testing.assert_array_equal(got, want)
    d = np.arange(1.0, len(n) + 1)
    scaled = nodewise_matrix(plain, offsets, pairs, p, p, True, diagonals=(d, d))
    ptr = p.node_ptr
    np.testing.assert_allclose(scaled[ptr[1]:ptr[2], ptr[3]:ptr[4]], want[ptr[1]:ptr[2], ptr[3]:ptr[4]] / np.sqrt(2 * 4))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 12)), max_size=30))
def test_kept_schedules_stay_within_their_bound_and_drop_the_oldest(ops):
    """The GPU plan's kept launch schedules (row tiles cut by measured time differ from call to
    call): never more pairs than the bound, the newest kept, the oldest dropped first."""
    from graphops_mg_kernel.common import KeptSchedules

    kept, model = KeptSchedules(limit=10), {}  # model: name -> pairs, in insertion order
    for name, pairs in ops:
        ok = kept.keep(name, pairs, ("schedule", name, pairs))
        assert ok == (pairs <= 10)
        if ok:
            model.pop(name, None)
            while model and sum(model.values()) + pairs > 10:
                model.pop(next(iter(model)))
            model[name] = pairs
        assert kept.pairs == sum(model.values()) <= 10 and len(kept) == len(model)
        for n, p in model.items():
            assert n in kept and kept[n] == ("schedule", n, p)
