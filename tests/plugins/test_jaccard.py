"""jaccard: every backend against the set reference and networkx, pair order, frames, bad input."""
from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphops as go
from graphops.errors import BackendUnavailableError
from tests.reference.jaccard import edge_pairs, jaccard, neighbourhoods

OWN = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu), pytest.param("hybrid", marks=pytest.mark.gpu)]

TINY = {
    "single_edge": ([0], [1], None),
    "triangle_tail": ([0, 1, 2, 2], [1, 2, 0, 3], None),
    "self_loops": ([0, 0, 1, 1, 2], [0, 1, 1, 2, 0], None),
    "multi_edges": ([0, 1, 0, 1, 2, 2], [1, 0, 1, 2, 1, 3], None),
    "weighted": ([0, 0, 1, 1, 2, 3], [1, 2, 2, 3, 3, 0], [0.5, 2.0, 1.5, 0.25, 3.0, 1.0]),
    "weighted_multi": ([0, 1, 0, 1, 2], [1, 0, 2, 2, 0], [1.0, 9.0, 2.0, 0.5, 7.0]),
    "star": ([0] * 6, [1, 2, 3, 4, 5, 6], None),
}


def make(src, dst, weights=None, n=None, directed=False, lib=pd):
    data = {"src": np.asarray(src, np.int64), "dst": np.asarray(dst, np.int64)}
    if weights is not None:
        data["w"] = np.asarray(weights, np.float64)
    nodes = None if n is None else lib.DataFrame({"id": np.arange(n, dtype=np.int64)})
    return go.Graph.from_edgelist(lib.DataFrame(data), weight="w" if weights is not None else None,
                                  directed=directed, nodes=nodes)


def expected(src, dst, weights, pairs=None, weighted=False):
    nbrs = neighbourhoods(src, dst, weights)
    pairs = edge_pairs(src, dst) if pairs is None else pairs
    return pairs, [jaccard(nbrs, u, v, weighted) for u, v in pairs]


def check(res, pairs, want, rel=0.0):
    res = res.to_pandas() if hasattr(res, "to_pandas") else res
    assert list(res.columns[:3]) == ["first", "second", "jaccard_coeff"]
    assert list(zip(res["first"].tolist(), res["second"].tolist())) == [tuple(p) for p in pairs]
    got = res["jaccard_coeff"].to_numpy()
    assert got.dtype == np.float64
    if rel == 0.0:
        assert got.tolist() == pytest.approx(want, rel=1e-15, abs=0)
    else:
        assert got.tolist() == pytest.approx(want, rel=rel, abs=1e-300)


@pytest.mark.parametrize("backend", OWN)
@pytest.mark.parametrize("case", sorted(TINY))
def test_tiny_graphs_all_edges(case, backend):
    src, dst, w = TINY[case]
    pairs, want = expected(src, dst, w)
    check(go.run("jaccard", make(src, dst, w), backend=backend), pairs, want)


@pytest.mark.parametrize("backend", OWN)
@pytest.mark.parametrize("case", ["weighted", "weighted_multi", "self_loops"])
def test_tiny_graphs_weighted_pairs(case, backend):
    src, dst, w = TINY[case]
    w = w if w is not None else [1.0 + i for i in range(len(src))]
    n = max(src + dst) + 1
    pairs = [(u, v) for u in range(n) for v in range(n)]
    _, want = expected(src, dst, w, pairs, weighted=True)
    frame = pd.DataFrame(pairs, columns=["first", "second"])
    check(go.run("jaccard", make(src, dst, w), pairs=frame, use_weight=True, backend=backend),
          pairs, want, rel=1e-14)


@pytest.mark.parametrize("backend", OWN)
def test_isolated_vertices_empty_graph_and_pair_order(backend):
    g = make([0, 1], [1, 2], n=6)  # 3, 4, 5 isolated
    pairs = [(5, 4), (0, 2), (3, 3), (2, 0), (0, 2), (1, 1)]
    _, want = expected([0, 1], [1, 2], None, pairs)
    check(go.run("jaccard", g, pairs=pd.DataFrame(pairs, columns=["first", "second"]), backend=backend),
          pairs, want)
    assert want[:3] == [0.0, 1.0, 0.0]
    empty = make([], [], n=3)
    res = go.run("jaccard", empty, backend=backend)
    assert len(res) == 0 and list(res.columns) == ["first", "second", "jaccard_coeff"]


@pytest.mark.parametrize("backend", OWN)
def test_original_ids_and_two_unnamed_columns(backend):
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [100, 100, 205], "dst": [205, 7, 7]}))
    res = go.run("jaccard", g, pairs=pd.DataFrame({"a": [7, 205], "b": [100, 100]}), backend=backend)
    assert res["first"].tolist() == [7, 205] and res["second"].tolist() == [100, 100]
    assert res["jaccard_coeff"].tolist() == [1 / 3, 1 / 3]


@pytest.mark.parametrize("backend", OWN)
def test_directed_needs_symmetrize(backend):
    src, dst = [0, 1, 2, 1], [1, 2, 0, 0]
    g = make(src, dst, [1.0, 2.0, 3.0, 4.0], directed=True)
    with pytest.raises(ValueError, match="directed.*symmetrize=True"):
        go.run("jaccard", g, backend=backend)
    pairs, want = expected(src, dst, [1.0, 2.0, 3.0, 4.0], weighted=True)
    check(go.run("jaccard", g, symmetrize=True, use_weight=True, backend=backend), pairs, want, rel=1e-14)


def _random_graph(draw_edges, n):
    src = [u for u, _ in draw_edges]
    dst = [v for _, v in draw_edges]
    return src, dst


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30).flatmap(lambda n: st.tuples(
    st.just(n),
    st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=120),
    st.lists(st.floats(0.0, 10.0), min_size=120, max_size=120))))
def test_hypothesis_random_graphs_cpu(drawn):
    n, edges, weights = drawn
    src, dst = _random_graph(edges, n)
    w = weights[:len(src)]
    g = make(src, dst, w, n=n)
    pairs, want = expected(src, dst, w)
    check(go.run("jaccard", g, backend="cpu"), pairs, want)
    allpairs = [(u, v) for u in range(n) for v in range(0, n, 3)]
    _, want_w = expected(src, dst, w, allpairs, weighted=True)
    check(go.run("jaccard", g, pairs=pd.DataFrame(allpairs), use_weight=True, backend="cpu"),
          allpairs, want_w, rel=1e-12)


@pytest.mark.gpu
def test_random_skewed_graphs_gpu_hybrid_equal_cpu(monkeypatch):
    """Pairs in every GPU bin (thread, warp, block): GPU and hybrid equal the CPU exactly
    (unweighted) and to 1e-12 (weighted; warp/block sums add in another order)."""
    import graphops_jaccard.gpu as jgpu

    monkeypatch.setattr(jgpu, "THREAD_MAX", 4)
    monkeypatch.setattr(jgpu, "WARP_MAX", 64)
    g = go.generate.rmat(12, 16, seed=3)
    cpu = go.run("jaccard", g, backend="cpu")
    deg = np.bincount(np.concatenate([g.edges.src, g.edges.dst]))
    assert (deg > 64).sum() > 100  # many pairs go to the block kernel
    for b in ("gpu", "hybrid"):
        assert go.run("jaccard", g, backend=b)["jaccard_coeff"].tolist() == cpu["jaccard_coeff"].tolist()
    h = go.run("jaccard", g, backend="hybrid", cpu_share=0.3)
    assert h["jaccard_coeff"].tolist() == cpu["jaccard_coeff"].tolist()
    rng = np.random.default_rng(0)
    wg = go.Graph.from_edgelist(g.edges.assign(w=rng.uniform(0.1, 2.0, len(g.edges))), weight="w")
    wc = go.run("jaccard", wg, backend="cpu", use_weight=True)["jaccard_coeff"].to_numpy()
    for b, extra in (("gpu", {}), ("hybrid", {"cpu_share": 0.2})):
        got = go.run("jaccard", wg, backend=b, use_weight=True, **extra)["jaccard_coeff"].to_numpy()
        np.testing.assert_allclose(got, wc, rtol=1e-12, atol=0)


@pytest.mark.gpu
@pytest.mark.parametrize("bitmap_bytes", [1 << 30, 1])
def test_heavy_pairs_by_hub_equal_cpu(monkeypatch, bitmap_bytes):
    """Heavy pairs grouped by hub: every class of shared-memory hash set, tasks cut within a hub,
    and the bitmaps of the largest hubs (all at once, or one hub per batch) give the CPU's values
    exactly, and the shared counts |N(u) ∩ N(v)| equal the set reference's."""
    import cupy as cp

    import graphops_jaccard.gpu as jgpu
    from graphops.base.device import Device
    from graphops.model.pairs import Pairs
    from graphops_jaccard.common import Mode, adjacency

    monkeypatch.setattr(jgpu, "THREAD_MAX", 2)
    monkeypatch.setattr(jgpu, "HASH_CLASSES", ((8, 16, 32), (40, 128, 64), (100, 256, 128)))
    monkeypatch.setattr(jgpu, "TASK_WORK", 64)
    monkeypatch.setattr(jgpu, "TASK_PAIRS", 4)
    monkeypatch.setattr(jgpu, "BITMAP_BYTES", bitmap_bytes)
    g = go.generate.rmat(12, 16, seed=5)
    cpu = go.run("jaccard", g, backend="cpu")
    deg = np.bincount(np.concatenate([g.edges.src, g.edges.dst]))
    assert (deg > 100).sum() > 20 and ((deg > 8) & (deg <= 40)).sum() > 100  # bitmaps and hash classes
    assert go.run("jaccard", g, backend="gpu")["jaccard_coeff"].tolist() == cpu["jaccard_coeff"].tolist()
    adj = adjacency(g.csr(Device.GPU), False, False)
    pairs = Pairs.edges_of(g).index(g, Device.GPU)
    got = cp.asnumpy(jgpu.coefficients(adj, pairs.first, pairs.second, mode=Mode.SHARED))
    nbrs = neighbourhoods(g.src_index.tolist(), g.dst_index.tolist())  # internal indices, as the pairs
    want = [len(set(nbrs[u]) & set(nbrs[v])) for u, v in zip(cp.asnumpy(pairs.first).tolist(), cp.asnumpy(pairs.second).tolist())]
    assert got.tolist() == want


REAL = {
    "luxembourg_osm.edges": {"sep": " ", "comment": None},
    "delaunay_n16.edges": {"sep": " ", "comment": None},
    "facebook_combined.txt": {"sep": " ", "comment": None},
    "Email-Enron.txt": {"sep": "\t", "comment": "#"},
    "cugraph_karate.csv": {"sep": " ", "comment": None},
    "cugraph_netscience.csv": {"sep": " ", "comment": None},
    "cugraph_email-Eu-core.csv": {"sep": " ", "comment": None},
}


def _read_real(path, spec):
    df = pd.read_csv(path, sep=spec["sep"], comment=spec["comment"], header=None).iloc[:, :2]
    df.columns = ["src", "dst"]
    return df


@pytest.mark.parametrize("backend", OWN)
@pytest.mark.parametrize("name", sorted(REAL))
def test_real_graphs_equal_networkx(shared_data, name, backend):
    """Symmetrized, deduplicated, self-loops dropped (networkx and cuGraph differ only on
    self-loops): equal to networkx's jaccard_coefficient on every edge."""
    df = _read_real(shared_data / "graphs" / name, REAL[name])
    df = df[df.src != df.dst]
    g = go.Graph.from_edgelist(df, dedupe=True)
    res = go.run("jaccard", g, backend=backend)
    G = nx.Graph()
    G.add_edges_from(zip(df.src.tolist(), df.dst.tolist()))
    pairs = list(zip(res["first"].tolist(), res["second"].tolist()))
    assert len(pairs) == G.number_of_edges()
    want = [j for _, _, j in nx.jaccard_coefficient(G, pairs)]
    assert res["jaccard_coeff"].tolist() == pytest.approx(want, rel=1e-15, abs=0)


@pytest.mark.parametrize("backend", OWN)
def test_real_graph_with_self_loops_equals_set_reference(shared_data, backend):
    """email-Eu-core as stored (directed, 642 self-loops) with symmetrize: the set reference."""
    df = _read_real(shared_data / "graphs" / "cugraph_email-Eu-core.csv", REAL["cugraph_email-Eu-core.csv"])
    g = go.Graph.from_edgelist(df, directed=True)
    res = go.run("jaccard", g, backend=backend, symmetrize=True)
    pairs, want = expected(df.src.tolist(), df.dst.tolist(), None)
    check(res, pairs, want)


def test_yaml_pairs_input(tmp_path):
    (tmp_path / "g.csv").write_text("src,dst\n1,2\n2,3\n3,1\n3,4\n")
    (tmp_path / "p.csv").write_text("first,second\n4,1\n1,2\n")
    (tmp_path / "p.yaml").write_text("""\
version: 1
graphs:
  g: {path: g.csv}
  p: {path: p.csv, directed: true}
steps:
  - {id: edges, algorithm: jaccard, inputs: {graph: g}, backend: cpu, output: edges.csv}
  - {id: pairs, algorithm: jaccard, inputs: {graph: g, pairs: p}, backend: cpu, output: pairs.parquet}
""")
    go.run_pipeline(tmp_path / "p.yaml")
    pairs = pd.read_parquet(tmp_path / "out" / "pairs.parquet")
    assert pairs.values.tolist() == [[4, 1, 1 / 2], [1, 2, 1 / 3]]
    assert len(pd.read_csv(tmp_path / "out" / "edges.csv")) == 4


@pytest.mark.parametrize("bad, match", [
    (pd.DataFrame({"first": [0, 99], "second": [1, 1]}), r"names 1 vertex id\(s\) that are not in the graph, in 1 of its rows \(e.g. 99\)"),
    (pd.DataFrame({"first": [0.5, 1.0], "second": [1, 1]}), "vertex ids must be integers"),
    (pd.DataFrame({"first": [0, np.nan], "second": [1, 1]}), r"missing \(NaN/null\)"),
    (pd.DataFrame({"first": [], "second": []}, dtype="int64"), "pairs frame is empty"),
    (pd.DataFrame({"a": [0], "b": [1], "c": [2]}), "columns 'first' and 'second'"),
])
def test_bad_pairs(bad, match):
    g = make([0, 1], [1, 2])
    with pytest.raises(ValueError, match=match):
        go.run("jaccard", g, pairs=bad, backend="cpu")


def test_bad_weights_and_missing_weights():
    with pytest.raises(ValueError, match="non-negative weights; edge row 1 has weight -2.0"):
        go.run("jaccard", make([0, 1], [1, 2], [1.0, -2.0]), use_weight=True, backend="cpu")
    with pytest.raises(ValueError, match="graph has no edge weights"):
        go.run("jaccard", make([0, 1], [1, 2]), use_weight=True, backend="cpu")
    with pytest.raises(ValueError, match="NaN/null weight"):
        make([0, 1], [1, 2], [1.0, math.nan])


def test_cugraph_backend_without_cugraph_says_how_to_install():
    try:
        import cugraph  # noqa: F401
    except Exception:
        pass
    else:
        pytest.skip("cuGraph is installed here")
    with pytest.raises(BackendUnavailableError, match=r"pip install 'graphops\[gpu\]'"):
        go.run("jaccard", make([0, 1], [1, 2]), backend="cugraph")


def test_networkx_peer_backend():
    src, dst, _ = TINY["triangle_tail"]
    pairs, want = expected(src, dst, None)
    check(go.run("jaccard", make(src, dst), backend="networkx"), pairs, want)


@pytest.mark.rapids
@pytest.mark.parametrize("backend", ["gpu", "hybrid", "cpu"])
def test_cudf_in_cudf_out(backend):
    import cudf

    src, dst, w = TINY["weighted"]
    g = make(src, dst, w, lib=cudf)
    res = go.run("jaccard", g, backend=backend, use_weight=True)
    assert isinstance(res, cudf.DataFrame)
    pairs, want = expected(src, dst, w, weighted=True)
    check(res, pairs, want, rel=1e-14)
    got = go.run("jaccard", g, pairs=cudf.DataFrame({"first": [3, 0], "second": [0, 3]}), backend=backend)
    assert isinstance(got, cudf.DataFrame) and got["first"].to_pandas().tolist() == [3, 0]


@pytest.mark.rapids
@pytest.mark.parametrize("name", sorted(REAL))
def test_equal_to_cugraph(shared_data, name):
    df = _read_real(shared_data / "graphs" / name, REAL[name])
    g = go.Graph.from_edgelist(df, dedupe=True, directed=False)
    ours = go.run("jaccard", g, backend="gpu")
    theirs = go.run("jaccard", g, backend="cugraph")
    assert ours["first"].tolist() == theirs["first"].tolist()
    assert ours["second"].tolist() == theirs["second"].tolist()
    np.testing.assert_allclose(theirs["jaccard_coeff"].to_numpy(), ours["jaccard_coeff"].to_numpy(),
                               rtol=1e-6, atol=1e-7)


@pytest.mark.rapids
def test_equal_to_cugraph_weighted(shared_data):
    df = pd.read_csv(shared_data / "graphs" / "cugraph_netscience.csv", sep=" ", header=None,
                     names=["src", "dst", "w"])
    g = go.Graph.from_edgelist(df, weight="w", dedupe=True)
    ours = go.run("jaccard", g, backend="gpu", use_weight=True)
    theirs = go.run("jaccard", g, backend="cugraph", use_weight=True)
    np.testing.assert_allclose(theirs["jaccard_coeff"].to_numpy(), ours["jaccard_coeff"].to_numpy(),
                               rtol=1e-6, atol=1e-7)


def test_generators_are_deterministic_and_simple():
    a, b = go.generate.rmat(10, 8, seed=5), go.generate.rmat(10, 8, seed=5)
    assert a.edges.equals(b.edges) and not a.edges.equals(go.generate.rmat(10, 8, seed=6).edges)
    e = a.edges
    assert (e.src < e.dst).all() and not e.duplicated().any() and a.n_edges > 6000
    grid = go.generate.grid2d(3, 4)
    assert grid.n_vertices == 12 and grid.n_edges == 3 * 3 + 2 * 4


def test_example_config_runs_on_cpu(tmp_path):
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "configs" / "jaccard_example.yaml"
    summary = go.run_pipeline(example, backend="cpu", out=tmp_path)
    res = pd.read_csv(tmp_path / "karate_jaccard.csv")
    assert len(res) == 78 and summary.steps[0].backend == "cpu"
    assert list(res.columns) == ["first", "second", "jaccard_coeff"]
    G = go.datasets.load("karate").to_networkx()
    want = [j for _, _, j in nx.jaccard_coefficient(G, list(zip(res["first"], res["second"])))]
    assert res["jaccard_coeff"].tolist() == pytest.approx(want, rel=1e-15, abs=0)
    assert len(pd.read_parquet(tmp_path / "rmat16_jaccard.parquet")) == summary.steps[2].shape[0]


def test_email_enron_by_name_from_the_mirror(shared_data, monkeypatch):
    monkeypatch.setenv("GRAPHOPS_DATA", str(shared_data))
    res = go.run("jaccard", go.datasets.load("email-Enron"), backend="cpu")
    assert len(res) == 183_831 and 0.0 <= res.jaccard_coeff.min() and res.jaccard_coeff.max() <= 1.0


SWEEP = "version: 1\ngraphs:\n  karate: {dataset: karate}\n  grid: {generate: {kind: grid2d, rows: 4, cols: 4}}\n" \
        "steps: [{id: j, algorithm: jaccard, inputs: {graph: karate}}]\n"


def test_sweep_names_unknown_graphs_with_a_did_you_mean(tmp_path, capsys):
    from graphops.cli import main

    (tmp_path / "s.yaml").write_text(SWEEP)
    assert main(["jaccard-sweep", str(tmp_path / "s.yaml"), "--graphs", "karat", "--backend", "cpu"]) == 1
    assert capsys.readouterr().err == (f"InputError: graphops jaccard-sweep: no graph 'karat' in {tmp_path / 's.yaml'}. "
                                       f"Graphs of the file: grid, karate. Did you mean 'karate'?\n")


def test_sweep_without_a_gpu_offers_an_option_it_has(tmp_path, capsys, monkeypatch):
    from graphops.cli import main

    monkeypatch.setattr("graphops.plugin.gpu_status", lambda: (False, "no GPU here"))
    (tmp_path / "s.yaml").write_text(SWEEP)
    assert main(["jaccard-sweep", str(tmp_path / "s.yaml"), "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err == ("BackendUnavailableError: graphops jaccard-sweep sweeps the hybrid backend's CPU share, which needs "
                   "a usable GPU (no GPU here). On this machine, time the CPU backend on each graph with --backend cpu\n")
    assert main(["jaccard-sweep", str(tmp_path / "s.yaml"), "--out", str(tmp_path), "--backend", "cpu",
                 "--repeat", "1"]) == 0
    data = __import__("json").loads((tmp_path / "jaccard_sweep.json").read_text())
    assert data["backend"] == "cpu" and set(data["graphs"]) == {"karate", "grid"}
    assert all(g["ms"] > 0 for g in data["graphs"].values())


def test_the_kernels_modes_are_named_once():
    """common.Mode names what the kernels compute; the CUDA source compares only with the macros
    made from it (no bare numbers), and the CPU twin with the same values."""
    import re
    from importlib import resources

    from graphops_jaccard.common import FORMULA_DEFINES, MODE_DEFINES, Mode

    source = resources.files("graphops_jaccard").joinpath("kernels/jaccard.cu").read_text()
    assert not re.search(r"mode\s*==\s*\d", source)
    assert set(re.findall(r"MODE_[A-Z_]*[A-Z]", source)) == set(MODE_DEFINES)
    assert MODE_DEFINES == {"MODE_SETS": 0, "MODE_WEIGHTED": 1, "MODE_SHARED": 2, "MODE_MIN_SUM": 3,
                            "MODE_PROD_SUM": 4, "MODE_AUX_SUM": 5}
    assert not re.search(r"formula\s*==\s*\d", source)
    assert set(re.findall(r"FORMULA_[A-Z]+", source)) == set(FORMULA_DEFINES)
    assert Mode.of(weighted=True) is Mode.WEIGHTED and Mode.of(False) is Mode.SETS
