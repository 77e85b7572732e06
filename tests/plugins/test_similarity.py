"""The similarity family (sorensen, overlap, cosine, adamic_adar, resource_allocation, and jaccard's
two-hop and top-k pairs) against the set references and networkx."""
from __future__ import annotations

import re

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphops as go
from graphops.errors import GraphopsError
from tests.reference.jaccard import edge_pairs, neighbourhoods
from tests.reference.similarity import score, two_hop

MEASURES = ["jaccard", "sorensen", "overlap", "cosine", "adamic_adar", "resource_allocation"]
COLUMN = {"jaccard": "jaccard_coeff", "sorensen": "sorensen_coeff", "overlap": "overlap_coeff",
          "cosine": "cosine_coeff", "adamic_adar": "adamic_adar_index",
          "resource_allocation": "resource_allocation_index"}
WEIGHTED = ["jaccard", "sorensen", "overlap", "cosine"]
SUMS = ("adamic_adar", "resource_allocation")
# graphops' own backends; the hybrid with a CPU share, so both sides score pairs
OWN = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu), pytest.param("hybrid", marks=pytest.mark.gpu)]


def same(got, want, backend, measure, weighted):
    """CPU results are exact; the GPU adds a sum's terms in another order (atomics), within 1e-12."""
    if backend == "cpu" or not (weighted or measure in SUMS):
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def make(src, dst, weights=None):
    data = {"src": np.asarray(src, np.int64), "dst": np.asarray(dst, np.int64)}
    if weights is not None:
        data["w"] = np.asarray(weights, np.float64)
    return go.Graph.from_edgelist(pd.DataFrame(data), weight="w" if weights is not None else None)


def rows(df, column):
    return {(int(a), int(b)): float(x) for a, b, x in zip(df["first"], df["second"], df[column])}


graphs = st.integers(2, 14).flatmap(lambda n: st.tuples(
    st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.sampled_from([0.5, 1.0, 2.0, 3.5])),
             min_size=1, max_size=40)))


@pytest.mark.parametrize("backend", OWN)
@settings(max_examples=30, deadline=None)
@given(graphs, st.sampled_from(MEASURES), st.booleans())
def test_given_edges_and_two_hop_pairs_equal_the_reference(backend, drawn, measure, weighted):
    """Random small graphs with self-loops and repeated edges: every edge's score and every two-hop
    pair's (both orders, grouped by the first vertex) equal the definitions'; a two-hop pair scores
    exactly what it scores as a given pair."""
    (edges,) = drawn
    weighted = weighted and measure in WEIGHTED
    src, dst, w = (list(c) for c in zip(*edges))
    g = make(src, dst, w if weighted else None)
    nbrs = neighbourhoods(src, dst, w if weighted else None)
    kw = dict(backend=backend, use_weight=weighted)
    if backend == "hybrid":
        kw["cpu_share"] = 0.5
    got = rows(go.run(measure, g, **kw), COLUMN[measure])
    assert set(got) == set(edge_pairs(src, dst))
    for (u, v), x in got.items():
        assert x == pytest.approx(score(nbrs, measure, u, v, weighted), rel=1e-12, abs=1e-15)
    out = go.run(measure, g, candidates="two_hop", **kw)
    hop = rows(out, COLUMN[measure])
    assert set(hop) == two_hop(nbrs, aux=measure in ("adamic_adar", "resource_allocation"))
    for (u, v), x in hop.items():
        assert x == pytest.approx(score(nbrs, measure, u, v, weighted), rel=1e-12, abs=1e-15)
    index = {v: i for i, v in enumerate(g.vertices.tolist())}
    keys = [(index[a], index[b]) for a, b in zip(out["first"], out["second"])]
    assert keys == sorted(keys)  # grouped by the first vertex, second ascending, in vertex order
    if hop:
        pairs = pd.DataFrame({"first": out["first"], "second": out["second"]})
        again = go.run(measure, g, pairs, **kw)[COLUMN[measure]].to_numpy()
        same(again, out[COLUMN[measure]].to_numpy(), backend, measure, weighted)


@pytest.mark.parametrize("backend", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
@settings(max_examples=25, deadline=None)
@given(graphs, st.sampled_from(MEASURES), st.integers(1, 12), st.booleans())
def test_top_k_is_the_reference_top_k_in_any_chunking(backend, drawn, measure, k, small_chunks):
    """top_k over the unordered two-hop pairs: the k highest, ties by (first, second) in vertex
    order, highest first; the same whether the work goes in one chunk or one vertex a chunk (on the
    GPU: launches of one wedge first, then buffers of the vertex count, split when they overflow)."""
    import graphops_jaccard.measures as m
    if backend == "gpu":
        import graphops_jaccard.gpu as m  # noqa: F811 - the GPU's chunking knob

    (edges,) = drawn
    src, dst, _ = (list(c) for c in zip(*edges))
    g = make(src, dst)
    nbrs = neighbourhoods(src, dst)
    index = {v: i for i, v in enumerate(g.vertices.tolist())}
    pairs = {(u, v) for u, v in two_hop(nbrs, aux=measure in ("adamic_adar", "resource_allocation"))
             if index[u] < index[v]}
    ranked = sorted(pairs, key=lambda p: (-score(nbrs, measure, *p), index[p[0]], index[p[1]]))[:k]
    knob = "FIRST_CHUNK_WEDGES" if backend == "cpu" else "BEST_ROWS"
    old = getattr(m, knob)
    setattr(m, knob, 1 if small_chunks else old)
    try:
        out = go.run(measure, g, backend=backend, candidates="two_hop", top_k=k)
    finally:
        setattr(m, knob, old)
    got = list(zip(out["first"].tolist(), out["second"].tolist()))
    want = [score(nbrs, measure, *p) for p in ranked]
    np.testing.assert_allclose(out[COLUMN[measure]].to_numpy(), want, rtol=1e-12)
    assert [(index[a], index[b]) for a, b in got] == sorted(((index[a], index[b]) for a, b in got),
                                                           key=lambda p: (-rows(out, COLUMN[measure])[
                                                               (g.vertices[p[0]], g.vertices[p[1]])], p))
    assert len(got) == len(ranked)


def test_vertices_pick_the_first_vertex_of_two_hop_pairs():
    g = go.Graph.from_networkx(nx.karate_club_graph())
    full = rows(go.run("jaccard", g, backend="cpu", candidates="two_hop"), "jaccard_coeff")
    some = go.run("jaccard", g, backend="cpu", candidates="two_hop", vertices=[33, 0, 33])
    got = rows(some, "jaccard_coeff")
    assert got == {p: x for p, x in full.items() if p[0] in (0, 33)}
    assert some["first"].tolist() == sorted(some["first"].tolist())
    top = go.run("jaccard", g, backend="cpu", candidates="two_hop", vertices=[33], top_k=3)
    assert set(top["first"]) == {33} and len(top) == 3


def test_networkx_indices_agree_on_karate():
    G = nx.karate_club_graph()
    g = go.Graph.from_networkx(G)
    hop = go.run("jaccard", g, backend="cpu", candidates="two_hop")
    pairs = list(zip(hop["first"].tolist(), hop["second"].tolist()))
    for name, fn in (("jaccard", nx.jaccard_coefficient), ("adamic_adar", nx.adamic_adar_index),
                     ("resource_allocation", nx.resource_allocation_index)):
        want = {(u, v): x for u, v, x in fn(G, pairs)}
        got = rows(go.run(name, g, pd.DataFrame({"first": hop["first"], "second": hop["second"]}), backend="cpu"),
                   COLUMN[name])
        assert set(got) == set(want)
        for p, x in got.items():
            assert x == pytest.approx(want[p], rel=1e-12), (name, p)


@pytest.mark.parametrize("kw, message", [
    (dict(vertices=[0]), "candidates='two_hop'"),
    (dict(candidates="two_hop", vertices=[]), "empty"),
    (dict(candidates="two_hop", vertices=[99]), "99"),
    (dict(candidates="two_hop", top_k=0), "top_k"),
    (dict(candidates="three_hop"), "candidates"),
])
def test_bad_pair_choices_are_one_line(kw, message):
    g = make([0, 1, 2], [1, 2, 0])
    with pytest.raises(GraphopsError, match=message):
        go.run("sorensen", g, backend="cpu", **kw)


def test_two_hop_with_a_pairs_input_or_weights_on_an_index_is_refused():
    g = make([0, 1, 2], [1, 2, 0], [1.0, 2.0, 3.0])
    with pytest.raises(GraphopsError, match="drop the pairs input"):
        go.run("jaccard", g, pd.DataFrame({"first": [0], "second": [1]}), backend="cpu", candidates="two_hop")
    with pytest.raises(GraphopsError, match="no weighted form"):
        go.run("adamic_adar", g, backend="cpu", use_weight=True)


def test_what_the_trial_found_is_said_or_scored_as_networkx_does():
    """resource_allocation of a pair (u, u) with a neighbour of degree 1 (networkx: 1/1); vertex ids
    beyond int64 or of mixed kinds, one line each; weights whose sums or squares leave float64."""
    g = make([0, 0], [1, 2])
    p = pd.DataFrame({"first": [0], "second": [0]})
    assert go.run("resource_allocation", g, p, backend="cpu")["resource_allocation_index"].tolist() == [2.0]
    assert list(nx.resource_allocation_index(nx.star_graph(2), [(0, 0)], backend="graphops")) == [(0, 0, 2.0)]
    for vertices, message in (([2**70], "beyond the 64-bit signed range"), ([0, "1"], "mixes integers and strings"),
                              ([0, None], "holds None (NoneType); a vertex id is an integer or a string"),
                              ("0", "is a list of vertex ids")):
        with pytest.raises(GraphopsError, match=re.escape(message)) as info:
            go.run("jaccard", g, backend="cpu", candidates="two_hop", vertices=vertices)
        assert str(info.value).count("vertices") <= 2
    edges = pd.DataFrame({"src": [0, 1, 0, 2], "dst": [1, 2, 2, 3]})
    for w, measure, message in ((1e308, "jaccard", "add up beyond what float64 holds"),
                                (1e200, "cosine", "leave float64's range when squared"),
                                (1e-200, "cosine", "leave float64's range when squared")):
        heavy = go.Graph.from_edgelist(edges.assign(w=w), weight="w")
        with pytest.raises(GraphopsError, match=message):
            go.run(measure, heavy, backend="cpu", use_weight=True)
    G = nx.Graph([(2**70, 1), (1, 2)])
    with nx.config.backend_priority(algos=["graphops"]):  # declined: networkx runs it
        assert len(list(nx.jaccard_coefficient(G))) == 1


def test_the_networkx_peer_lists_each_measures_own_two_hop_pairs():
    """A self-loop at 0: Jaccard's two-hop pairs include (0, 1) through 0 itself, networkx's indices'
    do not; the peer's converted graph (shared by the measures) keeps a list per measure."""
    g = make([0, 0, 1], [0, 1, 2])
    for measure in ("jaccard", "adamic_adar", "resource_allocation"):
        peer = go.run(measure, g, backend="networkx", candidates="two_hop")
        ours = go.run(measure, g, backend="cpu", candidates="two_hop")
        assert rows(peer, COLUMN[measure]).keys() == rows(ours, COLUMN[measure]).keys(), measure


def test_backends_without_two_hop_say_which_have_it():
    from graphops_jaccard.common import require_default_pairs
    from graphops_jaccard.params import JaccardParams

    with pytest.raises(GraphopsError, match="two_hop' runs on the backends cpu, gpu and hybrid.*'cugraph_dask'"):
        require_default_pairs(JaccardParams(candidates="two_hop"), "cugraph_dask")
    with pytest.raises(GraphopsError, match="top_k runs on the backends cpu, gpu and hybrid"):
        require_default_pairs(JaccardParams(top_k=5), "cugraph_dask")
    require_default_pairs(JaccardParams(), "cugraph_dask")  # the default mode runs anywhere


@pytest.mark.gpu
@pytest.mark.parametrize("weighted", [False, True])
def test_gpu_equals_cpu_on_an_rmat_graph_in_every_mode(monkeypatch, weighted):
    """R-MAT 12 (hubs: hash sets and bitmaps for the counts, warps and blocks for the sums), every
    measure: edges, two-hop pairs (both passes cut into many launches), top_k, vertices; the GPU's
    pairs are the CPU's in the same order, its scores equal (sums within 1e-12)."""
    import graphops_jaccard.gpu as jgpu

    g = go.generate.rmat(12, 16, seed=5)
    if weighted:
        rng = np.random.default_rng(1)
        g = make(g.edges.src, g.edges.dst, rng.uniform(0.1, 3.0, len(g.edges)))
    monkeypatch.setattr(jgpu, "FIRST_CHUNK_WEDGES", 1 << 12)
    monkeypatch.setattr(jgpu, "BEST_ROWS", 1 << 10)
    some = g.vertices[::7].tolist()
    for measure in MEASURES:
        use = weighted and measure in WEIGHTED
        for kw in ({}, {"candidates": "two_hop"}, {"candidates": "two_hop", "top_k": 300},
                   {"candidates": "two_hop", "vertices": some}, {"candidates": "two_hop", "vertices": some, "top_k": 40},
                   {"top_k": 100}):
            want = go.run(measure, g, backend="cpu", use_weight=use, **kw)
            got = go.run(measure, g, backend="gpu", use_weight=use, **kw)
            if "top_k" in kw and (use or measure in SUMS):  # near-ties may swap within 1e-12
                np.testing.assert_allclose(got[COLUMN[measure]], want[COLUMN[measure]], rtol=1e-12)
                continue
            assert got["first"].tolist() == want["first"].tolist(), (measure, kw)
            assert got["second"].tolist() == want["second"].tolist(), (measure, kw)
            same(got[COLUMN[measure]].to_numpy(), want[COLUMN[measure]].to_numpy(), "gpu", measure, use)


def test_real_graph_two_hop_jaccard_against_networkx(shared_data):
    path = shared_data / "graphs" / "cugraph_netscience.csv"
    if not path.exists():
        pytest.skip(f"{path.name} not in the data folder")
    df = pd.read_csv(path, sep=" ", header=None, names=["src", "dst", "w"])
    g = go.Graph.from_edgelist(df[["src", "dst"]])
    G = nx.from_pandas_edgelist(df, "src", "dst")
    out = go.run("jaccard", g, backend="cpu", candidates="two_hop")
    sample = out.sample(2000, random_state=1) if len(out) > 2000 else out
    want = {(u, v): x for u, v, x in nx.jaccard_coefficient(G, list(zip(sample["first"], sample["second"])))}
    for (u, v), x in rows(sample, "jaccard_coeff").items():
        assert x == pytest.approx(want[(u, v)], rel=1e-12)
    count = sum(1 for u in G for v in nx.single_source_shortest_path_length(G, u, cutoff=2)
                if v != u and set(G[u]) & set(G[v]))
    assert len(out) == count


@pytest.mark.rapids
@pytest.mark.parametrize("measure", ["jaccard", "sorensen", "overlap"])
@pytest.mark.parametrize("weighted", [False, True])
def test_cugraph_peers_agree_on_edges_two_hop_pairs_and_top_k(measure, weighted):
    """cuGraph's functions of the family on R-MAT 12 (no self-loops, no repeats): every edge, the
    two-hop pairs (cuGraph without vertex_pair, its self pairs dropped: both orders appear there as
    here) and all_pairs top k, values to 1e-6."""
    g = go.generate.rmat(12, 16, seed=5)
    if weighted:
        rng = np.random.default_rng(2)
        g = make(g.edges.src, g.edges.dst, rng.uniform(0.1, 3.0, len(g.edges)))
    for kw in ({}, {"candidates": "two_hop"}):
        ours = go.run(measure, g, backend="gpu", use_weight=weighted, **kw)
        theirs = go.run(measure, g, backend="cugraph", use_weight=weighted, **kw)
        a, b = rows(ours, COLUMN[measure]), rows(theirs, COLUMN[measure])
        assert set(a) == set(b), (kw, len(a), len(b))
        keys = sorted(a)
        np.testing.assert_allclose([b[p] for p in keys], [a[p] for p in keys], rtol=1e-6, atol=1e-7)
    ours = go.run(measure, g, backend="gpu", use_weight=weighted, candidates="two_hop", top_k=200)
    theirs = go.run(measure, g, backend="cugraph", use_weight=weighted, candidates="two_hop", top_k=200)
    # cuGraph may list a pair in both orders: compare the scores of the unordered pairs it keeps
    kept = {tuple(sorted(p)): x for p, x in rows(theirs, COLUMN[measure]).items()}
    best = sorted(rows(ours, COLUMN[measure]).values(), reverse=True)
    np.testing.assert_allclose(sorted(kept.values(), reverse=True), best[:len(kept)], rtol=1e-6, atol=1e-7)
    everything = rows(go.run(measure, g, backend="gpu", use_weight=weighted, candidates="two_hop"), COLUMN[measure])
    for p, x in kept.items():
        assert x == pytest.approx(everything[p], rel=1e-6, abs=1e-7)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 19), max_size=6), min_size=1, max_size=20), st.data())
def test_wedge_counts_of_any_first_vertices(rows, data):
    """The work of a first vertex's two-hop walk (Σ d_x over its neighbours x), for any vertices
    asked in any order with repeats: a sum over its row's neighbours' lengths."""
    from graphops_jaccard.common import Adjacency

    n = len(rows)
    rows = [[x % n for x in r] for r in rows]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
    indices = np.asarray([x for r in rows for x in r], dtype=np.int32)
    us = np.asarray(data.draw(st.lists(st.integers(0, n - 1), max_size=12)), dtype=np.int64)
    expected = [sum(len(rows[x]) for x in rows[u]) for u in us]
    assert Adjacency(indptr, indices).wedges(us).tolist() == expected
