"""graphops as a networkx backend: networkx's own functions dispatched to graphops, compared
with networkx itself, and networkx's own test module for them run against the backend."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import graphops as go

nx = pytest.importorskip("networkx")


@pytest.fixture(autouse=True)
def quiet_cache():
    """networkx says once per reuse that a cached conversion is used; that is the point here."""
    nx.config.warnings_to_ignore.add("cache")
    yield
    nx.config.warnings_to_ignore.discard("cache")


def test_jaccard_coefficient_matches_networkx():
    G = nx.karate_club_graph()
    pairs = [(0, 1), (2, 3), (0, 33), (5, 5)]
    assert list(nx.jaccard_coefficient(G, pairs, backend="graphops")) == list(nx.jaccard_coefficient(G, pairs))
    ours = sorted(nx.jaccard_coefficient(G, backend="graphops"))  # every non-edge
    theirs = sorted(nx.jaccard_coefficient(G))
    assert "graphops" in str(G.__networkx_cache__)  # converted once, kept on the graph
    assert [p[:2] for p in ours] == [p[:2] for p in theirs]
    assert max(abs(a[2] - b[2]) for a, b in zip(ours, theirs)) < 1e-12
    S = nx.relabel_nodes(nx.path_graph(4), {0: "a", 1: "b", 2: "c", 3: "d"})  # string ids
    assert list(nx.jaccard_coefficient(S, [("a", "c"), ("b", "d")], backend="graphops")) == [("a", "c", 0.5),
                                                                                             ("b", "d", 0.5)]


LINK = ["jaccard_coefficient", "adamic_adar_index", "resource_allocation_index", "preferential_attachment"]


@pytest.mark.parametrize("name", LINK)
def test_every_non_edge_is_streamed_as_networkx_scores_it(monkeypatch, name):
    """Without ebunch: networkx's scores of every non-edge (isolated nodes, string ids, blocks of
    first vertices cut small), never a list of all non-edges (nx.non_edges is not called)."""
    import graphops_networkx

    G = nx.karate_club_graph()
    G.add_nodes_from([40, 41])
    if name != "jaccard_coefficient":
        G.add_edge(5, 5)  # a self-loop: networkx's indices and graphops' agree there
    S = nx.relabel_nodes(nx.les_miserables_graph(), {v: f"<{v}>" for v in nx.les_miserables_graph()})
    for graph in (G, S):
        want = {(u, v): x for u, v, x in getattr(nx, name)(graph)}
        monkeypatch.setattr(graphops_networkx, "STREAM_BLOCK", 7)
        monkeypatch.setattr(nx, "non_edges", lambda *a: pytest.fail("listed every non-edge"))
        got = {}
        for u, v, x in getattr(nx, name)(graph, backend="graphops"):
            got[(u, v)] = x
        monkeypatch.undo()
        assert len(got) == len(want) == len(list(nx.non_edges(graph)))
        for (u, v), x in got.items():
            assert x == pytest.approx(want[(u, v)] if (u, v) in want else want[(v, u)], rel=1e-12, abs=0)
    pairs = [(0, 33), (2, 2), (40, 1)]
    assert [p[:2] for p in getattr(nx, name)(G, pairs, backend="graphops")] == pairs


def test_errors_and_what_runs_in_networkx():
    with pytest.raises(nx.NodeNotFound, match="Node 9 not in G."):
        list(nx.jaccard_coefficient(nx.path_graph(3), [(0, 9)], backend="graphops"))
    with pytest.raises(nx.NetworkXNotImplemented, match="not implemented for directed type"):
        nx.jaccard_coefficient(nx.DiGraph([(0, 1)]), [(0, 1)], backend="graphops")
    looped = nx.path_graph(4)
    looped.add_edge(1, 1)  # networkx's semantics differ from graphops' with self-loops: refused here
    with pytest.raises(NotImplementedError, match="not implemented by 'graphops' backend"):
        nx.jaccard_coefficient(looped, [(0, 2)], backend="graphops")
    with nx.config.backend_priority(algos=["graphops"]):  # ... and with priority, networkx runs it
        assert list(nx.jaccard_coefficient(looped, [(0, 2)])) == list(nx.jaccard_coefficient(looped, [(0, 2)],
                                                                                                backend="networkx"))


def test_priority_dispatches_to_graphops(monkeypatch):
    import graphops_networkx

    calls = []
    original = graphops_networkx._predict
    monkeypatch.setattr(graphops_networkx, "_predict", lambda G, e, m: calls.append(1) or original(G, e, m))
    with nx.config.backend_priority(algos=["graphops"]):
        assert list(nx.jaccard_coefficient(nx.path_graph(3), [(0, 2)])) == [(0, 2, 1.0)]
    assert calls == [1]


def _is_circuit(G, edges, source=None):
    """Every edge of G once, consecutive, closed (and from source)."""
    if not edges:
        return G.number_of_edges() == 0
    ok = all(a[1] == b[0] for a, b in zip(edges, edges[1:])) and edges[-1][1] == edges[0][0]
    used = sorted(tuple(sorted(e[:2])) if not G.is_directed() else e[:2] for e in edges)
    want = sorted(tuple(sorted(e)) if not G.is_directed() else e for e in G.edges())
    return ok and used == want and (source is None or edges[0][0] == source)


@pytest.mark.parametrize("make", [lambda: nx.cycle_graph(6), lambda: nx.complete_graph(5),
                                  lambda: nx.DiGraph([(0, 1), (1, 2), (2, 0), (2, 3), (3, 2)]),
                                  lambda: nx.MultiGraph([(0, 1), (1, 0), (1, 2), (2, 1)])],
                         ids=["cycle", "K5", "digraph", "multigraph"])
def test_eulerian_circuit_is_valid(make):
    G = make()
    for source in (None, 1):
        assert _is_circuit(G, list(nx.eulerian_circuit(G, source=source, backend="graphops")), source)
    with pytest.raises(nx.NetworkXError, match="G is not Eulerian."):
        list(nx.eulerian_circuit(nx.path_graph(3), backend="graphops"))


def test_eulerian_path_and_keys():
    P = nx.path_graph(5)
    path = list(nx.eulerian_path(P, source=4, backend="graphops"))
    assert path == [(4, 3), (3, 2), (2, 1), (1, 0)]
    M = nx.MultiGraph([(0, 1), (1, 0)])
    walked = list(nx.eulerian_path(M, keys=True, backend="graphops"))
    assert sorted(k for _, _, k in walked) == [0, 1] and walked[0][0] == 0
    with pytest.raises(nx.NetworkXError, match="Graph has no Eulerian paths."):
        list(nx.eulerian_path(nx.star_graph(3), backend="graphops"))


def test_backend_info():
    info = nx.utils.backends.backend_info["graphops"]
    assert info["backend_name"] == "graphops" and "jaccard_coefficient" in info["functions"]
    assert nx.config.backends.graphops.backend == "auto"


def test_configured_backend_does_the_work(monkeypatch):
    """nx.config.backends.graphops.backend picks graphops' backend for every function."""
    monkeypatch.setattr(nx.config.backends.graphops, "backend", "no-such")
    with pytest.raises(go.errors.InputError, match="unknown backend 'no-such'"):
        list(nx.eulerian_circuit(nx.cycle_graph(4), backend="graphops"))
    with pytest.raises(go.errors.InputError, match="unknown backend 'no-such'"):
        list(nx.jaccard_coefficient(nx.cycle_graph(4), [(0, 2)], backend="graphops"))


@pytest.mark.parametrize("module,select,expect", [
    ("networkx.algorithms.tests.test_link_prediction", "Jaccard or AdamicAdar or ResourceAllocation or "
                                                       "PreferentialAttachment", "38 passed"),
    ("networkx.algorithms.tests.test_euler", "", "31 passed, 3 xfailed"),
])
@pytest.mark.parametrize("work", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_networkx_own_tests_pass_on_the_backend(module, select, expect, work):
    """networkx's own test modules with every graph converted to graphops where it can run (the
    way nx-cugraph is tested), the work done by graphops' cpu, then gpu backend. The xfails are
    graphops_networkx.EXPECTED_FAILURES: tests of networkx's particular walk order."""
    env = {**os.environ, "NETWORKX_TEST_BACKEND": "graphops", "NETWORKX_FALLBACK_TO_NX": "1",
           "GRAPHOPS_NETWORKX_BACKEND": work}
    done = subprocess.run([sys.executable, "-m", "pytest", "--pyargs", module, *(["-k", select] if select else []),
                           "-q", "-p", "no:cacheprovider", "-W", "ignore"],
                          capture_output=True, text=True, env=env, cwd=os.path.dirname(nx.__path__[0]))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert expect in done.stdout
