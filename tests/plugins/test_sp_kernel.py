"""sp_kernel: the four-loop reference on tiny graphs, GraKeL's published values, both paths, bad input."""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest

import graphops as go
from tests.reference import sp_kernel as ref

MIXED = {10: 180, 50: 76}  # the mixed dense benchmark set: 180 graphs of 10 nodes, 76 of 50


@functools.cache
def mixed_set():
    return go.generate.gnp_set(MIXED, p=0.5, n_labels=4, n_attrs=2, seed=20261121)


# tiny graphs: (n, edges, labels, attributes, weights)
TINY = [
    (4, [(0, 1), (1, 2), (2, 3)], [0, 1, 0, 1], [[0.0], [1.0], [2.0], [0.5]], None),
    (3, [(0, 1), (1, 2), (2, 0)], [1, 1, 0], [[1.0], [0.0], [1.5]], None),
    (5, [(0, 1), (3, 4)], [0, 0, 1, 1, 0], [[0.2], [0.4], [0.6], [0.8], [1.0]], None),   # disconnected
    (2, [], [1, 0], [[0.0], [1.0]], None),                                              # no edges
    (1, [], [0], [[3.0]], None),                                                        # single node
    (4, [(0, 1), (1, 2), (0, 2), (2, 3)], [0, 1, 1, 0], [[1.0], [2.0], [3.0], [4.0]], [1.5, 0.5, 3.0, 1.0]),
]


def graphset(specs, weighted=False):
    graphs = []
    for n, edges, labels, attrs, weights in specs:
        df = pd.DataFrame({"src": [u for u, _ in edges], "dst": [v for _, v in edges]}, dtype="int64")
        if weighted:
            df["w"] = weights if weights is not None else [1.0] * len(edges)
        nodes = pd.DataFrame({"id": np.arange(n), "label": labels, "x": [a[0] for a in attrs]})
        graphs.append(go.Graph.from_edgelist(df, weight="w" if weighted else None, nodes=nodes))
    return go.GraphSet.from_graphs(graphs, node_label="label", node_attrs=["x"], name="tiny")


def reference_gram(specs, node_spec, length_gamma=None, weighted=False):
    prepared = []
    for n, edges, labels, attrs, weights in specs:
        w = (weights if weights is not None else [1.0] * len(edges)) if weighted else None
        prepared.append((ref.distances(n, edges, w), labels, attrs))
    return np.array([[ref.kernel(a, b, node_spec, length_gamma) for b in prepared] for a in prepared])


KERNELS = [  # (params, reference node spec, reference length gamma)
    ({"node_kernel": "delta", "length_kernel": "delta"}, {"delta": True}, None),
    ({"node_kernel": "none", "length_kernel": "delta"}, {}, None),
    ({"node_kernel": {"gaussian": {"gamma": 0.5}, "attributes": True}, "length_kernel": "delta"},
     {"gamma": 0.5}, None),
    ({"node_kernel": {"delta": True, "gaussian": {"gamma": 0.7}}, "length_kernel": {"gaussian": {"gamma": 1.0}}},
     {"delta": True, "gamma": 0.7}, 1.0),
    ({"node_kernel": "delta", "length_kernel": {"gaussian": {"gamma": 0.3}}}, {"delta": True}, 0.3),
]
BACKENDS = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kernel", range(len(KERNELS)))
def test_tiny_graphs_match_four_loop_reference(kernel, backend, weighted):
    params, node_spec, gamma = KERNELS[kernel]
    want = reference_gram(TINY, node_spec, gamma, weighted)
    K = go.run("sp_kernel", graphset(TINY, weighted), backend=backend, **params)
    assert K.dtype == np.float64 and K.shape == (len(TINY), len(TINY))
    np.testing.assert_allclose(K, want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("form", ["walk", "matrix"])
@pytest.mark.parametrize("kernel", range(len(KERNELS)))
def test_both_fcsp_forms_match_four_loop_reference(kernel, form, backend, weighted):
    params, node_spec, gamma = KERNELS[kernel]
    want = reference_gram(TINY, node_spec, gamma, weighted)
    K = go.run("sp_kernel", graphset(TINY, weighted), backend=backend, path="fcsp", fcsp_form=form, **params)
    np.testing.assert_allclose(K, want, rtol=1e-12, atol=0)


def test_matrix_form_refuses_many_distinct_lengths():
    n = 70  # a weighted path with distinct weights: far more than 64 distinct path lengths
    df = pd.DataFrame({"src": np.arange(n - 1), "dst": np.arange(1, n), "w": 1.0 + np.arange(n - 1) / 97})
    gs = go.GraphSet.from_graphs([go.Graph.from_edgelist(df, weight="w")], name="path70")
    with pytest.raises(ValueError, match="fcsp_form 'matrix' needs at most 64 distinct path lengths"):
        go.run("sp_kernel", gs, backend="cpu", node_kernel="none", path="fcsp", fcsp_form="matrix")
    auto = go.run("sp_kernel", gs, backend="cpu", node_kernel="none", path="fcsp")
    assert auto[0, 0] == go.run("sp_kernel", gs, backend="cpu", node_kernel="none", path="fcsp", fcsp_form="walk")[0, 0]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
def test_histogram_and_fcsp_paths_agree_exactly(weighted, backend):
    gs = graphset(TINY, weighted)
    for node in ("delta", "none"):
        a = go.run("sp_kernel", gs, backend=backend, node_kernel=node, path="histogram")
        b = go.run("sp_kernel", gs, backend=backend, node_kernel=node, path="fcsp")
        np.testing.assert_array_equal(a, b)


def test_train_test_and_normalization():
    gs = graphset(TINY)
    full = go.run("sp_kernel", gs, backend="cpu")
    cross = go.run("sp_kernel", gs[[0, 2]], gs[1:], backend="cpu")
    np.testing.assert_array_equal(cross, full[np.ix_([0, 2], [1, 2, 3, 4, 5])])
    norm = go.run("sp_kernel", gs[[0, 2]], gs[1:], backend="cpu", normalize=True)
    d = np.diag(full)
    scale = np.sqrt(np.outer(d[[0, 2]], d[1:]))
    want = np.divide(cross, scale, out=np.zeros_like(cross), where=scale > 0)
    np.testing.assert_allclose(norm, want, rtol=1e-15)
    fc = go.run("sp_kernel", gs[[0, 2]], gs[1:], backend="cpu", normalize=True,
                node_kernel={"gaussian": {"gamma": 0.5}})
    fs = go.run("sp_kernel", gs, backend="cpu", normalize=True, node_kernel={"gaussian": {"gamma": 0.5}})
    np.testing.assert_allclose(fc, fs[np.ix_([0, 2], [1, 2, 3, 4, 5])], rtol=1e-12)


def test_label_alphabets_may_differ_between_train_and_test():
    a = graphset(TINY[:2])
    b = graphset([(3, [(0, 1), (1, 2)], [7, 1, 7], [[0.0]] * 3, None)])
    K = go.run("sp_kernel", b, a, backend="cpu")
    want = reference_gram([*TINY[:2], (3, [(0, 1), (1, 2)], [7, 1, 7], [[0.0]] * 3, None)], {"delta": True})
    np.testing.assert_array_equal(K, want[2:, :2])


def test_mutag_equals_grakel_published_values(shared_data):
    gs = go.read_tu(shared_data / "tu" / "MUTAG")
    K = go.run("sp_kernel", gs, backend="cpu")
    assert (K[0, 0], K[0, 1]) == (6660.0, 2950.0) and f"{K.sum():.5e}" == "2.02175e+08"
    Kf = go.run("sp_kernel", gs, backend="cpu", path="fcsp")
    np.testing.assert_array_equal(K, Kf)
    Kn = go.run("sp_kernel", gs, backend="cpu", normalize=True)
    assert round(Kn[0, 1], 6) == 0.910556


# GraKeL 0.1.11 ShortestPath(with_labels=True) on the TU sets, computed with GraKeL once and
# kept here: (K[0,0], K[0,1], K[-1,-1], sum of K). graphops' full matrices equal GraKeL's exactly
# (checked element by element where GraKeL is installed: test_equals_grakel_when_installed).
GRAKEL = {
    "ENZYMES": (62976.0, 24278.0, None, 11485907086.0),
    "NCI1": (3258.0, 4682.0, 31552.0, 408380864374.0),
    "NCI109": (7032.0, 4286.0, 5746.0, 404991815450.0),
    "PROTEINS": (72648.0, 26408.0, 128336.0, 142434304656.0),
}


@pytest.mark.parametrize("name", sorted(GRAKEL))
def test_tu_sets_equal_grakel_values(shared_data, name):
    K = go.run("sp_kernel", go.read_tu(shared_data / "tu" / name), backend="cpu")
    k00, k01, klast, total = GRAKEL[name]
    assert (K[0, 0], K[0, 1], K.sum()) == (k00, k01, total)
    assert klast is None or K[-1, -1] == klast


@pytest.mark.parametrize("name", ["MUTAG", "PTC_MR", "ENZYMES"])
def test_equals_grakel_when_installed(shared_data, name):
    pytest.importorskip("grakel")
    gs = go.read_tu(shared_data / "tu" / name)
    np.testing.assert_array_equal(go.run("sp_kernel", gs, backend="cpu"),
                                  go.run("sp_kernel", gs, backend="grakel"))
    test, train = gs[: len(gs) // 4], gs[len(gs) // 4:]
    np.testing.assert_allclose(go.run("sp_kernel", test, train, backend="cpu", normalize=True),
                               go.run("sp_kernel", test, train, backend="grakel", normalize=True),
                               rtol=1e-15, atol=0)


def test_bad_input():
    gs = graphset(TINY)
    bare = go.GraphSet.from_graphs([go.Graph.from_edgelist(pd.DataFrame({"src": [0], "dst": [1]}))],
                                   name="bare")
    with pytest.raises(ValueError, match="node_kernel 'delta' needs node labels, but GraphSet 'bare' has none"):
        go.run("sp_kernel", bare, backend="cpu")
    with pytest.raises(ValueError, match="Gaussian node kernel needs continuous node attributes, but GraphSet 'bare'"):
        go.run("sp_kernel", bare, backend="cpu", node_kernel={"gaussian": {"gamma": 1.0}})
    with pytest.raises(ValueError, match="greater than 0"):
        go.run("sp_kernel", gs, backend="cpu", length_kernel={"gaussian": {"gamma": 0}})
    with pytest.raises(ValueError, match="path 'histogram' needs delta"):
        go.run("sp_kernel", gs, backend="cpu", path="histogram", length_kernel="gaussian")
    with pytest.raises(ValueError, match="input 'graphs' is an empty GraphSet"):
        go.run("sp_kernel", gs[[]], backend="cpu")
    with pytest.raises(TypeError, match=r"input 'graphs' takes a graphops.GraphSet .*; got graphops.model.graph.Graph \(one graph"):
        go.run("sp_kernel", gs[0], backend="cpu")


def test_attribute_dimensions_must_match():
    a = graphset(TINY[:2])
    b = go.GraphSet(node_ptr=a.node_ptr, edge_ptr=a.edge_ptr, src=a.src, dst=a.dst,
                    node_labels=a.node_labels, node_attrs=np.hstack([a.node_attrs, a.node_attrs]), name="wide")
    with pytest.raises(ValueError, match="node attributes have 1 dimensions in 'tiny' but 2 in 'wide'"):
        go.run("sp_kernel", a, b, backend="cpu", node_kernel={"gaussian": {"gamma": 1.0}})


def test_negative_cycle_names_the_graph():
    specs = [TINY[0], (3, [(0, 1), (1, 2)], [0, 0, 0], [[0.0]] * 3, [1.0, -2.0])]
    with pytest.raises(ValueError, match="graph 1 has a negative cycle"):
        go.run("sp_kernel", graphset(specs, weighted=True), backend="cpu")


def test_gram_too_large_for_memory_is_refused_before_starting(monkeypatch):
    from graphops_sp_kernel import params

    monkeypatch.setattr(params.os, "sysconf", lambda name: 8)  # 8 pages of 8 bytes
    with pytest.raises(MemoryError, match="a 6 x 6 float64 Gram matrix needs 0.0 GiB, more than"):
        go.run("sp_kernel", graphset(TINY), backend="cpu")



@pytest.mark.gpu
@pytest.mark.parametrize("name, params, exact", [
    ("MUTAG", {}, True),
    ("NCI1", {}, True),
    ("PTC_MR", {"path": "fcsp"}, True),
    ("MUTAG", {"normalize": True}, False),
    ("ENZYMES", {"node_kernel": {"gaussian": {"gamma": 0.5}}, "length_kernel": {"gaussian": {"gamma": 1.0}}}, False),
    ("PROTEINS", {"node_kernel": {"delta": True, "gaussian": {"gamma": 0.1}}}, False),
])
def test_cpu_and_gpu_agree_on_real_sets(shared_data, name, params, exact):
    gs = go.read_tu(shared_data / "tu" / name)
    if not exact:
        gs = gs[:120]
    a = go.run("sp_kernel", gs, backend="cpu", **params)
    b = go.run("sp_kernel", gs, backend="gpu", **params)
    if exact:
        np.testing.assert_array_equal(a, b)
    else:  # atol only absorbs subnormal values (Gaussians of distant attributes underflow)
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-300)


@pytest.mark.gpu
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("route", ["half", "double", "path lists"])
def test_gpu_delta_histograms_every_route_equals_cpu(monkeypatch, weighted, route):
    """The delta Gram on the GPU: histograms from the distance blocks multiplied in float16 on
    the tensor cores (exact counts), in float64 when a count or an entry is too large for that,
    or from path lists when the key range is too large for a table: all equal the CPU exactly,
    with labels and without, against itself and train × test."""
    import graphops_sp_kernel.gpu as sgpu

    if route == "double":
        monkeypatch.setattr(sgpu, "HALF_COUNT_MAX", 0)
    if route == "path lists":
        monkeypatch.setattr(sgpu, "DENSE_KEYS", 0)
    gs = mixed_set()[170:200]
    if weighted:  # lengths are sums of weights: searched among the distinct lengths
        rng = np.random.default_rng(7)
        graphs = [go.Graph.from_edgelist(g.edges.assign(w=rng.integers(1, 4, len(g.edges)).astype(float)),
                                         weight="w", nodes=g.nodes) for g in gs]
        gs = go.GraphSet.from_graphs(graphs, node_label="label")
    for params in ({}, {"node_kernel": "none"}):
        want = go.run("sp_kernel", gs, backend="cpu", **params)
        np.testing.assert_array_equal(go.run("sp_kernel", gs, backend="gpu", **params), want)
        np.testing.assert_array_equal(go.run("sp_kernel", gs[:9], gs[9:], backend="gpu", **params), want[:9, 9:])


@pytest.mark.gpu
def test_gpu_tiles_and_train_test(shared_data):
    gs = go.read_tu(shared_data / "tu" / "ENZYMES")[:90]
    params = {"node_kernel": {"gaussian": {"gamma": 0.5}}, "normalize": True}
    full = go.run("sp_kernel", gs, backend="gpu", **params)
    tiled = go.run("sp_kernel", gs, backend="gpu", tile=7, **params)
    np.testing.assert_allclose(tiled, full, rtol=1e-14)
    cross = go.run("sp_kernel", gs[60:], gs[:60], backend="gpu", tile=5, **params)
    np.testing.assert_allclose(cross, full[60:, :60], rtol=1e-12)
    np.testing.assert_allclose(cross, go.run("sp_kernel", gs[60:], gs[:60], backend="cpu", **params), rtol=1e-12)


@pytest.mark.gpu
@pytest.mark.parametrize("params", [
    {"node_kernel": {"gaussian": {"gamma": 1.0}}},
    {"node_kernel": {"gaussian": {"gamma": 1.0}}, "length_kernel": {"gaussian": {"gamma": 0.5}}},
    {"node_kernel": "delta", "path": "fcsp"},
])
def test_gpu_forms_agree_with_cpu_on_dense_graphs(params):
    gs = mixed_set()[150:200]
    want = go.run("sp_kernel", gs, backend="cpu", fcsp_form="walk", **params)
    for form in ("walk", "matrix", "auto"):
        got = go.run("sp_kernel", gs, backend="gpu", fcsp_form=form, **params)
        if params.get("path") == "fcsp":  # integer sums: exact in any order
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.gpu
def test_gpu_result_stays_where_the_graphs_live():
    import cupy as cp

    gs = mixed_set()[::8]
    for params in ({}, {"node_kernel": {"gaussian": {"gamma": 1.0}}, "normalize": True}):
        on_host = go.run("sp_kernel", gs, backend="gpu", tile=3, **params)
        on_gpu = go.run("sp_kernel", gs.to("gpu"), backend="gpu", tile=3, **params)
        assert isinstance(on_host, np.ndarray) and isinstance(on_gpu, cp.ndarray)
        np.testing.assert_array_equal(on_gpu.get(), on_host)
        np.testing.assert_array_equal(on_host, on_host.T)  # the mirrored lower triangle
        np.testing.assert_allclose(on_host, go.run("sp_kernel", gs, backend="cpu", **params), rtol=1e-12)


def test_split_balances_the_predicted_times():
    from graphops_sp_kernel.common import choose_split, split_for_threshold

    work = np.array([1, 1, 2, 2, 100, 100, 1000], dtype=np.int64)
    fast_gpu = choose_split(work, cpu_rate=1.0, gpu_rate=1e6, gpu_overhead=1e-3)
    assert fast_gpu.cpu_pairs == 0 and fast_gpu.threshold == 0 and "GPU only" in fast_gpu.describe()
    even = choose_split(work, cpu_rate=100.0, gpu_rate=100.0, gpu_overhead=0.0)
    assert 0 < even.cpu_pairs < len(work)
    # CPU gets the 6 lightest (206 units: 2.06 s), the GPU the 1000 (10 s): no split finishes sooner
    # (5 lightest: 11 s; all 7: 12.06 s)
    assert even.cpu_pairs == 6 and even.threshold == 101
    assert even.predicted_cpu_s == pytest.approx(2.06) and even.predicted_gpu_s == pytest.approx(10.0)
    fixed = split_for_threshold(work, 3)
    assert (fixed.cpu_pairs, fixed.gpu_pairs, fixed.threshold) == (4, 3, 3)


def test_mixed_benchmark_set_is_reproducible():
    a, b = mixed_set(), go.generate.gnp_set(MIXED, seed=20261121)
    assert len(a) == 256 and list(np.unique(np.diff(a.node_ptr))) == [10, 50]
    for field in ("node_ptr", "edge_ptr", "src", "dst", "node_labels", "node_attrs"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert not np.array_equal(go.generate.gnp_set(MIXED, seed=1).src[:50], a.src[:50])
    density = len(a.src[a.edge_ptr[180]:]) / (76 * 50 * 49 / 2)
    assert 0.48 < density < 0.52


@pytest.mark.gpu
@pytest.mark.parametrize("threshold", [None, 0, 10**12, 2000])
def test_hybrid_equals_cpu(threshold):
    gs = mixed_set()[::4]
    for params, exact in (({"path": "fcsp"}, True),
                          ({"node_kernel": {"gaussian": {"gamma": 1.0}}, "normalize": True}, False)):
        a = go.run("sp_kernel", gs, backend="cpu", **params)
        done = go.execute_call("sp_kernel", gs, backend="hybrid", hybrid_threshold=threshold, **params)
        if exact:
            np.testing.assert_array_equal(a, done.result)
        else:
            np.testing.assert_allclose(done.result, a, rtol=1e-12)
        split = done.details  # reported with the result, not kept in module state
        assert split["cpu_pairs"] + split["gpu_pairs"] == len(gs) * (len(gs) + 1) // 2
        if threshold == 0:
            assert split["cpu_pairs"] == 0
        if threshold == 10**12:
            assert split["gpu_pairs"] == 0
    cross = go.run("sp_kernel", gs[10:], gs[:10], backend="hybrid", hybrid_threshold=threshold, normalize=True,
                   node_kernel={"gaussian": {"gamma": 1.0}})
    np.testing.assert_allclose(cross, go.run("sp_kernel", gs[10:], gs[:10], backend="cpu", normalize=True,
                                             node_kernel={"gaussian": {"gamma": 1.0}}), rtol=1e-12)


def test_scikit_learn_style_front_end():
    from graphops.kernels import ShortestPathKernel

    gs = graphset(TINY)
    k = ShortestPathKernel(backend="cpu", normalize=True)
    np.testing.assert_array_equal(k.fit_transform(gs), go.run("sp_kernel", gs, backend="cpu", normalize=True))
    k.fit(gs[:4])
    np.testing.assert_allclose(k.transform(gs[4:]),
                               go.run("sp_kernel", gs[4:], gs[:4], backend="cpu", normalize=True), rtol=0)
    assert k.set_params(normalize=False).get_params()["normalize"] is False
    with pytest.raises(ValueError, match="not fitted yet"):
        ShortestPathKernel().transform(gs)


@pytest.mark.parametrize("slot", ["other", "train"])
def test_yaml_step_with_a_second_set(tmp_path, slot):
    """The second set's slot is ``other`` (as in mg_kernel); the former ``train`` still works, warned about."""
    gen = "{generate: {kind: gnp_set, sizes: {10: 180, 50: 76}, seed: 20261121}}"
    (tmp_path / "p.yaml").write_text(
        "version: 1\n"
        f"graphs: {{test: {gen}, train: {gen}}}\n"
        "steps:\n"
        f"  - {{id: k, algorithm: sp_kernel, inputs: {{graphs: test, {slot}: train}}, backend: cpu,\n"
        "     params: {normalize: true}, output: k.npy}\n")
    if slot == "train":
        with pytest.warns(DeprecationWarning, match="sp_kernel: input 'train' is now 'other' \\(graphops 0.2\\)"):
            go.run_pipeline(tmp_path / "p.yaml")
    else:
        go.run_pipeline(tmp_path / "p.yaml")
    K = np.load(tmp_path / "out" / "k.npy")
    gs = mixed_set()
    np.testing.assert_allclose(K, go.run("sp_kernel", gs, gs, backend="cpu", normalize=True), rtol=0)
    assert K.shape == (256, 256)
    with pytest.warns(DeprecationWarning, match="input 'train' is now 'other'"):
        np.testing.assert_array_equal(go.run("sp_kernel", gs[:5], train=gs[5:9], backend="cpu"),
                                      go.run("sp_kernel", gs[:5], other=gs[5:9], backend="cpu"))


def test_parallel_inside_and_across_pairs_agree():
    from graphops_sp_kernel import cpu
    from graphops_sp_kernel.params import SPKernelParams
    from graphops_sp_kernel.paths import path_lists

    gs = mixed_set()[170:190]
    csr = gs.csr()
    p = path_lists(csr)
    params = SPKernelParams(node_kernel={"gaussian": {"gamma": 1.0}}, length_kernel={"gaussian": {"gamma": 0.5}})
    rows, cols = (a.astype(np.int64) for a in np.triu_indices(len(gs)))
    values = {}
    for form in ("walk", "matrix", "auto"):
        setup = cpu.fcsp_setup(csr, csr, p, p, params.model_copy(update={"fcsp_form": form}))
        across, inside = np.empty(len(rows)), np.empty(len(rows))
        cpu._fcsp_pairs(rows, cols, across, **setup)
        cpu._fcsp_inside(rows, cols, inside, **setup)  # parallel inside each pair
        np.testing.assert_array_equal(across, inside)  # same form per pair, same order
        values[form] = across
    np.testing.assert_allclose(values["matrix"], values["walk"], rtol=1e-13)
    np.testing.assert_allclose(values["auto"], values["walk"], rtol=1e-13)
    assert not np.array_equal(values["matrix"], values["walk"])  # the two forms really ran


def test_progress_bar_does_not_change_results():
    gs = graphset(TINY)
    params = {"node_kernel": {"gaussian": {"gamma": 0.5}}, "tile": 2}
    np.testing.assert_array_equal(go.run("sp_kernel", gs, backend="cpu", progress=True, **params),
                                  go.run("sp_kernel", gs, backend="cpu", progress=False, **params))


def test_one_kernel_vocabulary_with_mg_kernel():
    """sp_kernel takes the base-kernel objects mg_kernel takes (and their YAML form); its strings are
    shorthands with identical values."""
    from graphops.kernels import Constant, KroneckerDelta, SquareExponential, TensorProduct

    gs = go.datasets.load("MUTAG")[:25]

    def same(a, b):
        np.testing.assert_array_equal(go.run("sp_kernel", gs, backend="cpu", **a),
                                      go.run("sp_kernel", gs, backend="cpu", **b))

    same(dict(node_kernel="delta", length_kernel="delta"),
         dict(node_kernel=KroneckerDelta(0, on="label"), length_kernel=KroneckerDelta(0)))
    same(dict(node_kernel="delta"), dict(node_kernel=TensorProduct(label=KroneckerDelta(0))))
    same(dict(node_kernel="none"), dict(node_kernel=Constant(1.0)))
    same(dict(length_kernel={"gaussian": {"gamma": 2.0}}), dict(length_kernel=SquareExponential(0.5)))
    same(dict(length_kernel={"gaussian": {"gamma": 2.0}}),
         dict(length_kernel={"square_exponential": {"length_scale": 0.5}}))
    attributed = go.generate.gnp_set({8: 6, 11: 6}, p=0.3, n_attrs=2, seed=1)
    a = go.run("sp_kernel", attributed, backend="cpu", node_kernel={"delta": True, "gaussian": {"gamma": 2.0}})
    b = go.run("sp_kernel", attributed, backend="cpu", node_kernel=KroneckerDelta(0, on="label") * SquareExponential(0.5))
    np.testing.assert_array_equal(a, b)
    assert a.any()
    for bad, role in ((KroneckerDelta(0.5, on="label"), "node"), (SquareExponential(1.0, on="label"), "node"),
                      (Constant(0.5), "length")):
        with pytest.raises(go.InputError, match=f"sp_kernel's {role} kernel is .*got .*Other base kernels run in "
                                             f"mg_kernel"):
            go.run("sp_kernel", gs, backend="cpu", **{f"{role}_kernel": bad})
