"""The plugin's own test: graphops' gate (signatures, declared columns, families) against a reference."""
import collections

import pytest

from graphops.plugin import check_algorithm


def reference(graph, weighted=False):
    """Degrees the slow, obvious way: count (or add up) each vertex's edge-frame rows."""
    deg = collections.Counter()
    weights = graph.edges["weight"] if weighted else [1] * graph.n_edges
    for u, v, w in zip(graph.edges["src"], graph.edges["dst"], weights):
        deg[u] += w
        if u != v and not graph.directed:
            deg[v] += w
    return {"vertex": list(graph.vertices), "degree": [deg[v] for v in graph.vertices]}


def test_degree_matches_the_reference():
    report = check_algorithm("degree", reference=reference)
    assert report["cpu"] == "ok"


def test_weighted_degree_matches_the_reference():
    from graphops.plugin import tiny_graphs

    weighted = {"weighted": tiny_graphs()["weighted"]}
    assert check_algorithm("degree", reference=reference, graphs=weighted, params={"weighted": True})["cpu"] == "ok"


def test_weighted_needs_weights():
    import graphops as go

    with pytest.raises(ValueError, match="weighted=True but the graph has no weights"):
        go.run("degree", go.datasets.load("karate", weight=None), weighted=True)
