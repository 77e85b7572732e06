"""describe: every backend against the slow reference, CPU == GPU exactly, frames in -> same family out."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphops as go
from tests.reference.describe import describe as reference

TINY = {
    "no_vertices": ([], [], 0, False),
    "isolated_only": ([], [], 3, False),
    "single_edge": ([0], [1], 2, False),
    "self_loops": ([0, 0, 1], [0, 1, 1], 2, False),
    "multi_edges": ([0, 1, 0, 2, 2], [1, 0, 1, 2, 2], 3, False),
    "disconnected": ([0, 1, 2, 3, 4, 5], [1, 2, 0, 4, 5, 3], 7, False),
    "directed": ([0, 1, 2, 2, 3], [1, 2, 0, 0, 3], 5, True),
    "directed_reciprocal": ([0, 1], [1, 0], 2, True),
    "star": ([0] * 6, [1, 2, 3, 4, 5, 6], 7, False),
}
FLOATS = ("degree_min", "degree_mean", "degree_max", "degree_gini")


def make(src, dst, n, directed, weights=None, lib=pd):
    data = {"src": np.asarray(src, np.int64), "dst": np.asarray(dst, np.int64)}
    if weights is not None:
        data["w"] = np.asarray(weights, np.float64)
    df = lib.DataFrame(data)
    nodes = lib.DataFrame({"id": np.arange(n, dtype=np.int64)})
    return go.Graph.from_edgelist(df, weight="w" if weights is not None else None,
                                  directed=directed, nodes=nodes)


def assert_matches(row: dict, ref: dict, rel: float = 1e-12):
    for key, want in ref.items():
        got = row[key]
        if key in FLOATS:
            assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, rel=rel), key
        else:
            assert int(got) == want, key


def first_row(frame) -> dict:
    frame = frame.to_pandas() if hasattr(frame, "to_pandas") else frame
    return frame.iloc[0].to_dict()


BACKENDS = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu), "networkx"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(TINY))
def test_tiny_graphs_match_reference(name, backend):
    src, dst, n, directed = TINY[name]
    out = go.run("describe", make(src, dst, n, directed), backend=backend)
    assert list(out.columns) == ["n_vertices", "n_edges", "self_loops", "multi_edges", "degree_min",
                                 "degree_mean", "degree_max", "degree_gini", "n_components"]
    assert_matches(first_row(out), reference(src, dst, n, directed))


def test_weights_do_not_change_statistics():
    src, dst, n, directed = TINY["multi_edges"]
    plain = go.run("describe", make(src, dst, n, directed), backend="cpu")
    weighted = go.run("describe", make(src, dst, n, directed, weights=[0.5] * len(src)), backend="cpu")
    pd.testing.assert_frame_equal(plain, weighted)


def test_renumbered_ids_give_same_statistics():
    df = pd.DataFrame({"src": [10**12, 7, -3], "dst": [7, -3, 10**12]})
    out = first_row(go.run("describe", go.Graph.from_edgelist(df), backend="cpu"))
    assert out["n_vertices"] == 3 and out["n_components"] == 1 and out["degree_gini"] == 0.0


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 25).flatmap(lambda n: st.tuples(
    st.just(n),
    st.lists(st.tuples(st.integers(0, max(n - 1, 0)), st.integers(0, max(n - 1, 0))),
             max_size=0 if n == 0 else 60),
    st.booleans())))
def test_random_graphs_match_reference(case):
    n, edges, directed = case
    src = [u for u, _ in edges]
    dst = [v for _, v in edges]
    out = go.run("describe", make(src, dst, n, directed), backend="cpu")
    assert_matches(first_row(out), reference(src, dst, n, directed))


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(TINY))
def test_cpu_and_gpu_agree_exactly(name):
    g = make(*TINY[name])
    pd.testing.assert_frame_equal(go.run("describe", g, backend="cpu"),
                                  go.run("describe", g, backend="gpu"), check_exact=True)


@pytest.mark.rapids
@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_cudf_in_cudf_out(backend):
    import cudf

    src, dst, n, directed = TINY["disconnected"]
    out = go.run("describe", make(src, dst, n, directed, lib=cudf), backend=backend)
    assert isinstance(out, cudf.DataFrame)
    assert_matches(first_row(out), reference(src, dst, n, directed))


# real graphs ---------------------------------------------------------------------------------
REAL = {
    "cugraph_karate.csv": False, "cugraph_netscience.csv": False, "cugraph_email-Eu-core.csv": True,
    "facebook_combined.txt": False, "Email-Enron.txt": False, "luxembourg_osm.edges": False,
    "delaunay_n16.edges": False,
}


def _reference_file(path, directed: bool, dedupe: bool = False) -> dict:
    """Read the file independently of graphops and compute the reference statistics."""
    df = pd.read_csv(path, sep=r"\s+", comment="#", header=None, usecols=[0, 1])
    u, v = df[0].to_numpy(), df[1].to_numpy()
    if dedupe:
        seen, keep = set(), []
        for i, pair in enumerate(zip(u.tolist(), v.tolist())):
            key = pair if directed else tuple(sorted(pair))
            if key not in seen:
                seen.add(key)
                keep.append(i)
        u, v = u[keep], v[keep]
    ids, inv = np.unique(np.concatenate([u, v]), return_inverse=True)
    return reference(inv[: len(u)], inv[len(u):], len(ids), directed)


@pytest.mark.parametrize("backend", BACKENDS[:2])
@pytest.mark.parametrize("name", sorted(REAL))
def test_real_graphs_match_reference(shared_data, name, backend):
    path = shared_data / "graphs" / name
    g = go.read_graph(path, directed=REAL[name])
    assert_matches(first_row(go.run("describe", g, backend=backend)), _reference_file(path, REAL[name]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_real_graph_deduplicated(shared_data, backend):
    path = shared_data / "graphs" / "Email-Enron.txt"
    row = first_row(go.run("describe", go.read_graph(path, dedupe=True), backend=backend))
    assert_matches(row, _reference_file(path, False, dedupe=True))
    assert row["n_edges"] == 183831 and round(row["degree_gini"], 3) == 0.730


@pytest.mark.parametrize("backend", BACKENDS)
def test_graphset_rows_match_reference(shared_data, backend):
    gs = go.read_tu(shared_data / "tu" / "MUTAG")
    out = go.run("describe", gs, backend=backend)
    assert list(out["graph"]) == list(range(188))
    folder = shared_data / "tu" / "MUTAG"
    a = np.loadtxt(folder / "MUTAG_A.txt", delimiter=",", dtype=np.int64) - 1
    ind = np.loadtxt(folder / "MUTAG_graph_indicator.txt", dtype=np.int64) - 1
    a = a[a[:, 0] < a[:, 1]]
    for i in (0, 1, 57, 187):
        nodes = np.flatnonzero(ind == i)
        mine = a[ind[a[:, 0]] == i] - nodes[0]
        assert_matches(out.iloc[i].to_dict(), reference(mine[:, 0], mine[:, 1], len(nodes), False))
