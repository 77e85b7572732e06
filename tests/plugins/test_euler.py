"""euler: tours validated on random Eulerian multigraphs (both backends), networkx agreement on
which graphs are Eulerian, paths, sources, frames, de Bruijn assembly, and the errors."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphops as go
from graphops import InputError
from graphops_euler.common import NotEulerianError
from tests.reference import euler as reference

OWN = ["cpu", "cpu-merge", pytest.param("gpu", marks=pytest.mark.gpu)]
WITH_PEER = [*OWN, "networkx"]


def graph(src, dst, directed=True, lib=pd, names=False):
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    if names:
        src, dst = np.array([f"v{v}" for v in src], object), np.array([f"v{v}" for v in dst], object)
    return go.Graph.from_edgelist(lib.DataFrame({"src": src, "dst": dst}), directed=directed)


_run = go.run


def run(name, g, backend="cpu", **params):
    """go.run, with 'cpu-merge' for the CPU backend's cycle merging."""
    if backend == "cpu-merge":
        backend, params = "cpu", {**params, "method": "merge"}
    return _run(name, g, backend=backend, **params)


def valid(g, tour, kind="circuit", source=None):
    """The tour is one by the published validator and by the slow reference (integer ids)."""
    problem = go.functions.euler_tour_problem(g, tour, kind, source)
    assert problem is None, problem
    if g.ids.kind != "string":
        edges = g.edges.to_pandas() if hasattr(g.edges, "to_pandas") else g.edges  # cuDF: on the host
        tour = tour.to_pandas() if hasattr(tour, "to_pandas") else tour
        steps = list(zip(tour["src"].tolist(), tour["dst"].tolist(), tour["edge_id"].tolist()))
        assert reference.tour_problem(edges["src"].tolist(), edges["dst"].tolist(), g.directed, steps, kind,
                                      source) is None
    return True


@st.composite
def eulerian(draw):
    """A connected union of closed walks: repeated vertices, multi-edges and self-loops."""
    n = draw(st.integers(1, 7))
    walks = draw(st.lists(st.lists(st.integers(0, n - 1), min_size=1, max_size=6), min_size=1, max_size=5))
    src, dst = [], []
    for i, walk in enumerate(walks):
        if i:  # start where an earlier walk passed: every edge in one component
            walk = [src[draw(st.integers(0, len(src) - 1))]] + walk
        src += walk
        dst += walk[1:] + walk[:1]
    return src, dst, draw(st.booleans()), draw(st.booleans())


@pytest.mark.parametrize("backend", WITH_PEER)
@settings(max_examples=120, deadline=None)
@given(case=eulerian(), pick=st.integers(0, 10 ** 6))
def test_random_eulerian_multigraphs(backend, case, pick):
    src, dst, directed, names = case
    g = graph(src, dst, directed, names=names)
    tour = run("euler", g, backend=backend)
    assert list(tour.columns) == ["step", "src", "dst", "edge_id"]
    assert valid(g, tour)
    source = g.original_ids(g.src_index[pick % len(src):][:1])[0]
    tour = run("euler", g, backend=backend, source=source)
    assert valid(g, tour, source=source)


@pytest.mark.parametrize("backend", OWN)
@settings(max_examples=80, deadline=None)
@given(case=eulerian(), cut=st.integers(0, 10 ** 6))
def test_random_euler_paths(backend, case, cut):
    src, dst, directed, _ = case
    k = cut % len(src)
    if src[k] == dst[k]:
        return  # removing a self-loop leaves a circuit
    g = graph(src[:k] + src[k + 1:], dst[:k] + dst[k + 1:], directed)
    if g.n_edges and not _connected(g):
        return  # removing the edge split the graph
    tour = run("euler", g, backend=backend, kind="path")
    assert valid(g, tour, "path")
    start, end = (dst[k], src[k])  # the walk goes around the removed edge
    if directed:
        assert tour["src"].iloc[0] == start and tour["dst"].iloc[-1] == end
    else:
        assert {tour["src"].iloc[0], tour["dst"].iloc[-1]} == {start, end}
        other = tour["dst"].iloc[-1]
        back = run("euler", g, backend=backend, kind="path", source=other)
        assert valid(g, back, "path", source=other)


def _connected(g):
    G = nx.MultiGraph()
    G.add_edges_from(zip(g.src_index.tolist(), g.dst_index.tolist()))
    return nx.is_connected(G)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 6), edges=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=12),
       directed=st.booleans())
def test_agrees_with_networkx_on_which_graphs_are_eulerian(n, edges, directed):
    g = graph([u for u, _ in edges], [v for _, v in edges], directed)
    G = (nx.MultiDiGraph if directed else nx.MultiGraph)(edges)

    def works(kind):
        try:
            go.run("euler", g, backend="cpu", kind=kind)
            return True
        except NotEulerianError:
            return False

    assert works("circuit") == nx.is_eulerian(G) == reference.has_euler(6, *map(list, zip(*edges)), directed, "circuit")
    assert works("auto") == nx.has_eulerian_path(G) == reference.has_euler(6, *map(list, zip(*edges)), directed, "path")


@settings(max_examples=150, deadline=None)
@given(case=eulerian(), change=st.sampled_from(["swap", "repeat", "reverse", "drop", "source"]),
       at=st.integers(0, 10 ** 6))
def test_the_validator_agrees_with_the_reference_on_broken_tours(case, change, at):
    """A valid tour, broken one way: the published validator and the reference say the same."""
    src, dst, directed, _ = case
    g = graph(src, dst, directed)
    tour = go.run("euler", g, backend="cpu")
    steps = list(zip(tour["src"].tolist(), tour["dst"].tolist(), tour["edge_id"].tolist()))
    i = at % len(steps)
    j = (i + 1) % len(steps)
    source = None
    if change == "swap":
        steps[i], steps[j] = steps[j], steps[i]
    elif change == "repeat":
        steps[i] = steps[j]
    elif change == "reverse":
        steps[i] = (steps[i][1], steps[i][0], steps[i][2])
    elif change == "drop":
        del steps[i]
    else:
        source = steps[i][0]
    frame = pd.DataFrame(steps, columns=["src", "dst", "edge_id"], dtype="int64")
    mine = go.functions.euler_tour_problem(g, frame, "circuit", source)
    want = reference.tour_problem(src, dst, directed, steps, "circuit", source)
    assert (mine is None) == (want is None), (mine, want, steps)


@pytest.mark.parametrize("backend", OWN)
def test_tiny_cases(backend):
    loop = graph([3], [3])
    assert valid(loop, run("euler", loop, backend=backend))
    two = graph([0, 1], [1, 0], directed=False)
    t = run("euler", two, backend=backend, source=1)
    assert valid(two, t, source=1) and t["src"].tolist() == [1, 0]
    empty = go.Graph.from_edgelist(pd.DataFrame({"src": np.array([], np.int64), "dst": np.array([], np.int64)}))
    t = run("euler", empty, backend=backend)
    assert len(t) == 0 and list(t.columns) == ["step", "src", "dst", "edge_id"]
    path = graph([0, 1, 2], [1, 2, 0 + 5])
    t = run("euler", path, backend=backend, kind="auto")
    assert t["src"].tolist() == [0, 1, 2] and t["dst"].tolist() == [1, 2, 5]


@pytest.mark.parametrize("backend", OWN)
def test_edge_ids_trace_multi_edges_and_undirected_reversals(backend):
    g = graph([0, 1, 0, 2, 2], [1, 0, 2, 2, 0], directed=False)  # 0-1 twice, a loop at 2
    t = run("euler", g, backend=backend, source=2)
    assert valid(g, t, source=2)
    assert sorted(t["edge_id"].tolist()) == list(range(5))
    rows = g.edges.iloc[t["edge_id"].to_numpy()]
    walked = set(map(frozenset, zip(t["src"], t["dst"])))
    assert walked == set(map(frozenset, zip(rows["src"], rows["dst"])))


def test_validator_rejects_broken_tours():
    g = graph([0, 1, 2, 0], [1, 2, 0, 0])
    t = go.run("euler", g)
    assert go.functions.is_euler_circuit(g, t) and go.functions.is_euler_path(g, t)
    swapped = t.iloc[[1, 0, 2, 3]].reset_index(drop=True).assign(step=range(4))
    assert not go.functions.is_euler_circuit(g, swapped)
    assert "not consecutive" in go.functions.euler_tour_problem(g, swapped)
    twice = t.assign(edge_id=[t["edge_id"][0]] * 4)
    assert "used 2 times" in go.functions.euler_tour_problem(g, twice) or "used 4 times" in go.functions.euler_tour_problem(g, twice)
    assert "not at source" in go.functions.euler_tour_problem(g, t, source=99)
    assert "3 steps" in go.functions.euler_tour_problem(g, t.iloc[:3])


# --- errors ------------------------------------------------------------------------------------------
def test_unbalanced_vertices_are_counted_and_listed():
    g = graph(list(range(8)), [1, 2, 3, 4, 5, 6, 7, 9])
    with pytest.raises(NotEulerianError, match=r"2 vertices have in-degree != out-degree: 0 \(in 0, out 1\), "
                                                r"9 \(in 1, out 0\).*Euler path from 0 to 9: pass kind='path'"):
        go.run("euler", g)
    star = graph([0] * 7, list(range(1, 8)), directed=False)
    with pytest.raises(NotEulerianError, match=r"8 vertices have odd degree .*: 0 \(degree 7\), 1 \(degree 1\), "
                                                r".* and 3 more"):
        go.run("euler", star)
    assert isinstance(NotEulerianError("x"), ValueError)


def test_components_and_paths_and_sources():
    two = graph([0, 1, 5, 6], [1, 0, 6, 5])
    with pytest.raises(NotEulerianError, match=r"the edges lie in 2 connected components \(e.g. 0 and 5"):
        go.run("euler", two)
    cyc = graph([0, 1, 2], [1, 2, 0])
    with pytest.raises(NotEulerianError, match="kind='path' needs exactly one start/end pair.*kind='circuit'"):
        go.run("euler", cyc, kind="path")
    bad = graph([0, 1], [1, 2])
    with pytest.raises(NotEulerianError, match=r"no Euler path: 5 vertices .*: 0 \(in 0, out 2\), .*exactly one vertex with out - in = 1"):
        go.run("euler", graph([0, 0, 3], [1, 2, 4]), kind="path")
    with pytest.raises(InputError, match=r"starts at 0 \(out - in = 1\); source=1 cannot start one"):
        go.run("euler", bad, kind="path", source=1)
    with pytest.raises(InputError, match=r"source=7 is not a vertex of the graph \(its ids look like 0, 1, 2\)"):
        go.run("euler", cyc, source=7)
    with pytest.raises(InputError, match=r"source='a' is a str but this graph's vertex ids are integers"):
        go.run("euler", cyc, source="a")
    with pytest.raises(InputError, match=r"source must be a vertex id .*got 1.5"):
        go.run("euler", cyc, source=1.5)
    isolated = go.Graph.from_edgelist(pd.DataFrame({"src": [0, 1], "dst": [1, 0]}), directed=True,
                                      nodes=pd.DataFrame({"id": [0, 1, 2]}))
    with pytest.raises(InputError, match=r"source=2 has no edges; a circuit starts at a vertex with edges \(e.g. 0"):
        go.run("euler", isolated, source=2)
    assert valid(isolated, go.run("euler", isolated))  # isolated vertices do not matter


@pytest.mark.parametrize("threads,low", [(1, 14), (2, 3), (3, 5)])
def test_cpu_counting_sort_by_buckets(threads, low):
    """The CPU counting sort (buckets of 2**low keys, then counts within each) equals a stable
    argsort, with each key's end, also for keys that are missing and a last partial bucket."""
    from graphops_euler.merge import _counting_order

    rng = np.random.default_rng(threads)
    for n, size in [(1, 5), (37, 400), (1000, 50), (5000, 20000)]:
        keys = rng.integers(0, n, size)
        keys[:3] = n - 1
        order, ends = _counting_order(keys, n, threads, low)
        np.testing.assert_array_equal(order, np.argsort(keys, kind="stable"))
        np.testing.assert_array_equal(ends, np.cumsum(np.bincount(keys, minlength=n)))


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("backend", ["cpu-merge", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_cycle_merging_on_tens_of_thousands_of_vertices(backend, directed):
    """Many sort buckets, splitters and initial cycles; a path too (the circuit less one edge)."""
    g = go.generate.random_cycles(40_000, 30, 5_000, directed=directed, seed=5)
    tour = run("euler", g, backend=backend, source=int(g.src_index[7]))
    assert valid(g, tour, source=int(g.src_index[7]))
    e = g.edges
    cut = go.Graph.from_edgelist(e.iloc[1:].reset_index(drop=True), directed=directed)
    path = run("euler", cut, backend=backend, kind="path")
    assert valid(cut, path, "path")
    assert path["src"].iloc[0] == e["dst"].iloc[0] or not directed


# --- frames, real graphs, de Bruijn -------------------------------------------------------------------------
@pytest.mark.rapids
def test_cudf_in_cudf_out():
    import cudf

    g = graph([0, 1, 2, 2, 3], [1, 2, 0, 3, 2], lib=cudf)
    for backend in ("cpu", "gpu"):
        t = run("euler", g, backend=backend, source=2)
        assert isinstance(t, cudf.DataFrame)
        assert valid(g, t, source=2)


@pytest.mark.parametrize("backend", OWN)
def test_symmetric_digraph_of_a_road_network(backend, shared_data):
    path = shared_data / "graphs" / "luxembourg_osm.edges"
    if not path.exists():
        pytest.skip("luxembourg_osm.edges not in the shared data")
    road = go.read_graph(path)
    g = go.generate.symmetric(road)
    assert g.n_edges == 2 * road.n_edges
    source = g.original_ids(g.src_index[:1])[0]
    t = run("euler", g, backend=backend, source=source)
    assert valid(g, t, source=source)


@pytest.mark.parametrize("backend", OWN)
def test_de_bruijn_path_spells_the_sequence(backend):
    from graphops_euler.io import spell

    seq = go.generate.dna(3000, seed=11)
    g = go.generate.de_bruijn(seq, k=25)
    k1 = [seq[i:i + 24] for i in range(len(seq) - 23)]
    assert len(set(k1)) == len(k1)  # no repeated (k-1)-mer: the Euler path is unique
    t = run("euler", g, backend=backend, kind="path")
    assert spell(t) == seq


def test_kmer_reader_and_fasta_writer_in_a_pipeline(tmp_path):
    from graphops_euler.io import read_fasta

    seq = go.generate.dna(500, seed=4)
    kmers = [seq[i:i + 15] for i in range(len(seq) - 14)]
    rng = np.random.default_rng(0)
    (tmp_path / "reads.kmers").write_text("# k-mers\n" + "\n".join(rng.permutation(kmers)) + "\n")
    (tmp_path / "p.yaml").write_text(
        "version: 1\nname: t\noutput_dir: out\ngraphs:\n  reads: {path: reads.kmers}\n"
        "steps:\n  - {id: assemble, algorithm: euler, inputs: {graph: reads}, params: {kind: path},"
        " output: genome.fa}\n  - {id: tour, algorithm: euler, inputs: {graph: reads}, params: {kind: path},"
        " output: tour.csv}\n")
    go.run_pipeline(tmp_path / "p.yaml")
    assert read_fasta(tmp_path / "out" / "genome.fa") == seq
    assert len(pd.read_csv(tmp_path / "out" / "tour.csv")) == len(kmers)


def test_kmer_reader_errors(tmp_path):
    bad = tmp_path / "bad.kmers"
    bad.write_text("ACGT\nACG\n")
    with pytest.raises(InputError, match=r"bad.kmers:2: k-mer 'ACG' has 3 letters and the first one 4"):
        go.read_graph(bad)
    good = tmp_path / "good.kmers"
    good.write_text("ACGT CGTA\n")
    assert go.read_graph(good).directed
    with pytest.raises(InputError, match=r"format 'kmers' gives directed graphs .*drop directed: false"):
        go.read_graph(good, directed=False)
    (tmp_path / "p.yaml").write_text("version: 1\nname: t\ngraphs:\n  r: {path: good.kmers, directed: false}\n"
                                     "steps:\n  - {id: a, algorithm: euler, inputs: {graph: r}}\n")
    with pytest.raises(go.ConfigError, match=r"(?s)At key: directed.*format 'kmers' gives directed graphs"):
        go.load_pipeline(tmp_path / "p.yaml")
    ints = graph([0, 1], [1, 0])
    from graphops_euler.io import spell

    with pytest.raises(InputError, match="needs a de Bruijn graph"):
        spell(go.run("euler", ints))


def test_the_shipped_de_bruijn_example_rebuilds_its_genome(tmp_path):
    from pathlib import Path

    from graphops_euler.io import read_fasta

    configs = Path(__file__).resolve().parents[2] / "configs"
    go.run_pipeline(configs / "euler_example.yaml", backend="cpu", out=tmp_path)
    assert read_fasta(tmp_path / "assembled.fa") == read_fasta(configs / "data" / "genome.fa")


def test_tour_validators_refuse_fractions_and_wrong_arguments_in_one_line():
    """A fractional edge_id is not an edge row (never truncated to one); a tour or graph of the
    wrong type is an InputTypeError naming what to give."""
    from graphops_euler.validate import tour_problem

    g = go.Graph.from_edgelist(pd.DataFrame({"src": [0, 1, 2], "dst": [1, 2, 0]}), directed=True)
    tour = pd.DataFrame({"src": [0, 1, 2], "dst": [1, 2, 0], "edge_id": [0, 1, 2]})
    assert go.functions.is_euler_circuit(g, tour)
    assert go.functions.is_euler_circuit(g, tour.assign(edge_id=[0.0, 1.0, 2.0]))
    assert tour_problem(g, tour.assign(edge_id=[0.5, 1, 2])) == (
        "the edge_id column holds values that are not edge rows (dtype float64); it needs integers")
    assert not go.functions.is_euler_circuit(g, tour.assign(edge_id=[0.5, 1, 2]))
    with pytest.raises(TypeError, match="tour must be a frame"):
        go.functions.is_euler_circuit(g, "x")
    with pytest.raises(TypeError, match="graph must be a graphops.Graph"):
        go.functions.is_euler_path(None, tour)
