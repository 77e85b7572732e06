"""GraphSet: TU files, batched CSR, slicing, construction from graphs, device moves."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import graphops as go

TU_COUNTS = {  # graphs, nodes, undirected edges (half the lines of DS_A.txt)
    "MUTAG": (188, 3371, 3721), "PTC_MR": (344, 4915, 5054), "ENZYMES": (600, 19580, 37282),
    "PROTEINS": (1113, 43471, 81044), "NCI1": (4110, 122747, 132753), "NCI109": (4127, 122494, 132604),
}


@pytest.mark.parametrize("name", sorted(TU_COUNTS))
def test_read_tu_counts(shared_data, name):
    gs = go.read_tu(shared_data / "tu" / name)
    with open(shared_data / "tu" / name / f"{name}_A.txt") as fh:
        lines = sum(1 for _ in fh)
    assert (len(gs), gs.n_nodes, gs.n_edges) == TU_COUNTS[name]
    assert 2 * gs.n_edges == lines
    assert gs.node_labels is not None and len(gs.node_labels) == gs.n_nodes
    assert gs.graph_labels is not None and len(gs.graph_labels) == len(gs)


def test_mutag_labels_match_files(shared_data):
    folder = shared_data / "tu" / "MUTAG"
    gs = go.read_tu(folder)
    a = np.loadtxt(folder / "MUTAG_A.txt", delimiter=",", dtype=np.int64) - 1
    el = np.loadtxt(folder / "MUTAG_edge_labels.txt", dtype=np.int64)
    by_pair = {(u, v): lab for (u, v), lab in zip(a.tolist(), el.tolist())}
    for u, v, lab in zip(gs.src.tolist(), gs.dst.tolist(), gs.edge_labels.tolist()):
        assert by_pair[(u, v)] == lab and by_pair[(v, u)] == lab
    np.testing.assert_array_equal(gs.node_labels, np.loadtxt(folder / "MUTAG_node_labels.txt", dtype=np.int64))
    np.testing.assert_array_equal(gs.graph_labels[:3], [1, -1, -1])
    ind = np.loadtxt(folder / "MUTAG_graph_indicator.txt", dtype=np.int64)
    np.testing.assert_array_equal(np.diff(gs.node_ptr), np.bincount(ind)[1:])


def test_enzymes_attributes(shared_data):
    gs = go.read_tu(shared_data / "tu" / "ENZYMES")
    assert gs.node_attrs.shape == (19580, 18) and gs.node_attrs.dtype == np.float64
    assert gs.node_attrs[0, 1] == pytest.approx(15.887014)


def test_batched_csr_is_block_diagonal(shared_data):
    gs = go.read_tu(shared_data / "tu" / "PTC_MR")[:50]
    csr = gs.csr()
    blocks = []
    for g in gs:
        s, d = g.csr().indptr, g.csr().indices
        blocks.append(sp.csr_matrix((np.ones(len(d)), d, s), shape=(g.n_vertices, g.n_vertices)))
    ref = sp.block_diag(blocks, format="csr")
    ref.sort_indices()
    np.testing.assert_array_equal(csr.indptr, ref.indptr)
    np.testing.assert_array_equal(csr.indices, ref.indices)
    assert csr.n_graphs == 50 and np.shares_memory(csr.graph_ptr, gs.node_ptr)  # no copy (a read-only view)


def small_set():
    graphs = []
    for k in range(4):
        n = k + 2
        df = pd.DataFrame({"src": np.arange(n - 1), "dst": np.arange(1, n), "label": np.full(n - 1, k)})
        nodes = pd.DataFrame({"id": np.arange(n), "label": np.arange(n) + 10 * k, "x": np.arange(n) * 0.5})
        graphs.append(go.Graph.from_edgelist(df, nodes=nodes))
    return go.GraphSet.from_graphs(graphs, node_label="label", edge_label="label", node_attrs=["x"])


def test_from_graphs_and_slicing():
    gs = small_set()
    assert len(gs) == 4 and gs.n_nodes == 2 + 3 + 4 + 5 and gs.n_edges == 1 + 2 + 3 + 4
    sub = gs[[3, 1]]
    assert list(np.diff(sub.node_ptr)) == [5, 3]
    assert list(sub.node_labels) == [30, 31, 32, 33, 34, 10, 11, 12]
    assert list(sub.edge_labels) == [3, 3, 3, 3, 1, 1]
    assert sub.src.min() == 0 and sub.src[4] == 5  # second graph's edges shifted to its own block
    assert len(gs[1:3]) == 2 and len(gs[np.array([True, False, True, False])]) == 2
    g = gs[2]
    assert g.n_vertices == 4 and list(g.nodes["label"]) == [20, 21, 22, 23]
    assert list(g.nodes["attr0"]) == [0.0, 0.5, 1.0, 1.5] and list(g.edges["label"]) == [2, 2, 2]
    with pytest.raises(IndexError, match="graph index 4 out of range for a GraphSet of 4 graphs"):
        gs[4]


def test_from_networkx():
    nx = pytest.importorskip("networkx")
    a, b = nx.path_graph(["x", "y", "z"]), nx.complete_graph(4)
    for G in (a, b):
        nx.set_node_attributes(G, 7, "label")
    gs = go.GraphSet.from_networkx([a, b], node_label="label")
    assert len(gs) == 2 and gs.n_edges == 2 + 6 and set(gs.node_labels.tolist()) == {7}
    with pytest.raises(ValueError, match="graph 0 has no node label column 'kind'"):
        go.GraphSet.from_networkx([a], node_label="kind")


@pytest.mark.parametrize("setup, error, message", [
    (lambda p: p / "NOPE", FileNotFoundError, "TU dataset folder not found"),
    (lambda p: p, FileNotFoundError, "lacks DS_A.txt, DS_graph_indicator.txt"),
])
def test_tu_errors(tmp_path, setup, error, message):
    folder = tmp_path / "DS"
    folder.mkdir()
    with pytest.raises(error, match=message):
        go.read_tu(setup(folder))


def test_tu_edge_across_graphs(tmp_path):
    folder = tmp_path / "DS"
    folder.mkdir()
    (folder / "DS_A.txt").write_text("1, 2\n2, 1\n2, 3\n3, 2\n")
    (folder / "DS_graph_indicator.txt").write_text("1\n1\n2\n")
    with pytest.raises(ValueError, match="DS_A.txt: edge 2,3 joins graphs 1 and 2"):
        go.read_tu(folder)


def test_empty_list_is_an_error():
    with pytest.raises(ValueError, match="a GraphSet needs at least one graph"):
        go.GraphSet.from_graphs([])


@pytest.mark.gpu
def test_graphset_moves_to_gpu(xp):
    gs = small_set()
    dev = gs.to("gpu")
    assert dev.device is go.Device.GPU and isinstance(dev.node_attrs, xp.ndarray)
    sub = dev[[3, 1]]
    np.testing.assert_array_equal(sub.src.get(), gs[[3, 1]].src)
    np.testing.assert_array_equal(dev.csr().indices.get(), gs.csr().indices)


def test_named_node_and_edge_features_from_networkx():
    """Any number of named features, kept under their attribute names through subsets, graph
    views and the feature tables; strings become the same integer codes in every graph."""
    import networkx as nx

    from graphops import GraphSet, InputError

    g1 = nx.Graph()
    g1.add_node(0, element="C", charge=0.5, h=1)
    g1.add_node(1, element="O", charge=-0.25, h=0)
    g1.add_edge(0, 1, order=2, length=1.2)
    g2 = nx.Graph()
    g2.add_node("a", element="N", charge=0.0, h=3)
    g2.add_node("b", element="C", charge=1.0, h=2)
    g2.add_node("c", element="C", charge=1.5, h=2)
    g2.add_edge("a", "b", order=1, length=1.5)
    g2.add_edge("b", "c", order=1, length=1.4)
    gs = GraphSet.from_networkx([g1, g2], node_features=["element", "charge", "h"],
                                edge_features=["order", "length"])
    nodes, edges = gs.node_feature_table(), gs.edge_feature_table()
    assert list(nodes) == ["element", "charge", "h"] and list(edges) == ["order", "length"]
    np.testing.assert_array_equal(nodes["element"], [0, 2, 1, 0, 0])  # C < N < O
    assert nodes["charge"].dtype == np.float64 and nodes["h"].dtype == np.int64
    np.testing.assert_allclose(edges["length"], [1.2, 1.5, 1.4])
    sub = gs[[1]]
    np.testing.assert_array_equal(sub.node_feature_table()["element"], [1, 0, 0])
    np.testing.assert_allclose(sub.edge_feature_table()["length"], [1.5, 1.4])
    g = gs[1]
    assert list(g.nodes["charge"]) == [0.0, 1.0, 1.5]
    assert list(g.edges["order"]) == [1, 1]
    with pytest.raises(InputError, match="graph 0 has no node feature 'mass'"):
        GraphSet.from_networkx([g1], node_features=["mass"])
    with pytest.raises(InputError, match="taken by node_labels"):
        GraphSet(node_ptr=gs.node_ptr, edge_ptr=gs.edge_ptr, src=gs.src, dst=gs.dst,
                 node_features={"label": nodes["h"]})
    with pytest.raises(InputError, match="one value per node"):
        GraphSet(node_ptr=gs.node_ptr, edge_ptr=gs.edge_ptr, src=gs.src, dst=gs.dst,
                 node_features={"h": nodes["h"][:2]})


def test_tu_labels_and_attributes_are_features_by_name():
    from graphops import GraphSet

    gs = GraphSet(node_ptr=np.array([0, 2]), edge_ptr=np.array([0, 1]), src=np.array([0]), dst=np.array([1]),
                  node_labels=np.array([3, 4]), node_attrs=np.array([[0.5, 1.0], [1.5, 2.0]]),
                  edge_labels=np.array([7]))
    assert list(gs.node_feature_table()) == ["label", "attr0", "attr1"]
    np.testing.assert_allclose(gs.node_feature_table()["attr1"], [1.0, 2.0])
    assert list(gs.edge_feature_table()) == ["label"]


def test_a_feature_mixing_value_types_is_refused():
    import networkx as nx

    a, b = nx.path_graph(3), nx.path_graph(2)
    nx.set_node_attributes(a, {0: "C", 1: "C", 2: "O"}, "element")
    nx.set_node_attributes(b, 2, "element")
    with pytest.raises(go.InputError, match=r"node feature 'element' mixes value types: string \('C'\) and number "
                                         r"\(2\); use one type per feature"):
        go.GraphSet.from_networkx([a, b], node_features=["element"])
