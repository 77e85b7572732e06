"""Graph: frames of both families, renumbering, bad input, conversions."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import graphops as go


def test_from_edgelist_renumbers_and_hides_ids(frame_lib):
    df = frame_lib.DataFrame({"a": [100, 5, 7, 5], "b": [5, 7, 100, 100], "w": [1.0, 2.0, 3.0, 4.0],
                              "kind": [1, 2, 3, 4]})
    g = go.Graph.from_edgelist(df, src="a", dst="b", weight="w")
    assert g.n_vertices == 3 and g.n_edges == 4 and g.weighted and not g.directed
    assert list(g.edges.columns) == ["src", "dst", "weight", "kind"]
    assert type(g.edges) is type(df)
    vertices = g.vertices.get() if hasattr(g.vertices, "get") else g.vertices
    np.testing.assert_array_equal(vertices, [5, 7, 100])
    idx = g.csr("cpu").indices[:2].astype(np.int64)
    orig = g.original_ids(idx)
    np.testing.assert_array_equal(orig, vertices[idx])


def test_node_frame_adds_isolated_vertices():
    df = pd.DataFrame({"src": [1], "dst": [2]})
    nodes = pd.DataFrame({"id": [3, 2, 1], "label": [0, 1, 2]})
    g = go.Graph.from_edgelist(df, nodes=nodes)
    assert g.n_vertices == 3
    assert list(g.nodes["id"]) == [1, 2, 3] and list(g.nodes["label"]) == [2, 1, 0]


@pytest.mark.parametrize("df, kwargs, message", [
    (pd.DataFrame({"s": [1], "d": [2]}), {}, "src='src': no such column in the edge frame. Columns: ['s', 'd']."),
    (pd.DataFrame({"src": [1], "dst": [2]}), {"weight": "wt"}, "weight='wt': no such column"),
    (pd.DataFrame([[1, 2, 3]], columns=["src", "dst", "src"]), {}, "duplicate column names ['src']"),
    (pd.DataFrame({"src": [1.0, np.nan], "dst": [2, 3]}), {}, "1 missing (NaN/null) vertex id(s), first at rows [1]"),
    (pd.DataFrame({"src": [1.5], "dst": [2]}), {}, "has dtype float64; vertex ids must be integers"),
    (pd.DataFrame({"src": [1, "b"], "dst": [2, 3]}), {}, "mixes int and str vertex ids (row 1: 'b')"),
    (pd.DataFrame({"src": [True], "dst": [False]}), {}, "vertex ids must be integers or strings"),
    (pd.DataFrame({"src": [1, 2], "dst": [2, 3], "w": [1.0, np.nan]}), {"weight": "w"},
     "1 NaN/null weight(s), first at rows [1]"),
    (pd.DataFrame({"src": [1], "dst": [2]}), {"dst": "src"}, "given for more than one role"),
])
def test_bad_frames_get_pointed_errors(df, kwargs, message):
    with pytest.raises(ValueError) as info:
        go.Graph.from_edgelist(df, **kwargs)
    assert message in str(info.value)


def test_not_a_frame_is_a_type_error():
    with pytest.raises(TypeError, match="must be a pandas or cuDF DataFrame; got list"):
        go.Graph.from_edgelist([(1, 2)])


def test_edge_to_unknown_node_is_rejected():
    with pytest.raises(ValueError, match="edge dst id 9 is not in the node frame"):
        go.Graph.from_edgelist(pd.DataFrame({"src": [1], "dst": [9]}), nodes=pd.DataFrame({"id": [1, 2]}))


def test_dedupe_keeps_first_of_both_directions():
    df = pd.DataFrame({"src": [1, 2, 1, 3], "dst": [2, 1, 2, 3], "w": [1.0, 2.0, 3.0, 4.0]})
    g = go.Graph.from_edgelist(df, weight="w", dedupe=True)
    assert g.n_edges == 2 and list(g.edges["weight"]) == [1.0, 4.0]
    d = go.Graph.from_edgelist(df, weight="w", directed=True, dedupe=True)
    assert d.n_edges == 3


def test_networkx_round_trip():
    nx = pytest.importorskip("networkx")
    G = nx.Graph()
    G.add_nodes_from([(10, {"label": 1}), (20, {"label": 2}), (30, {"label": 3}), (40, {"label": 4})])
    G.add_edge(10, 20, weight=0.5)
    G.add_edge(20, 30, weight=1.5)
    g = go.Graph.from_networkx(G, weight="weight")
    assert g.n_vertices == 4 and g.weighted
    back = g.to_networkx()
    assert sorted(back.nodes) == [10, 20, 30, 40] and back[20][30]["weight"] == 1.5
    assert back.nodes[40]["label"] == 4
    with pytest.raises(ValueError, match="node ids must be all integers or all strings"):
        go.Graph.from_networkx(nx.path_graph([1, "b"]))
    named = go.Graph.from_networkx(nx.path_graph(["carol", "alice", "bob"]))
    assert list(named.vertices) == ["alice", "bob", "carol"]
    assert sorted(named.to_networkx().edges) == [("alice", "bob"), ("carol", "alice")] or \
        {frozenset(e) for e in named.to_networkx().edges} == {frozenset(("carol", "alice")), frozenset(("alice", "bob"))}


@pytest.mark.parametrize("dtype", ["object", "string", "category", "str"])
def test_string_vertex_ids_in_every_pandas_dtype(dtype):
    df = pd.DataFrame({"u": ["ann@x.org", "bob@y.org", "cy"], "v": ["bob@y.org", "cy", "ann@x.org"],
                       "w": [1.0, 2.0, 3.0]}).astype({"u": dtype, "v": dtype})
    g = go.Graph.from_edgelist(df, src="u", dst="v", weight="w", directed=True)
    assert list(g.vertices) == ["ann@x.org", "bob@y.org", "cy"] and g.n_edges == 3
    np.testing.assert_array_equal(g.src_index, [0, 1, 2])
    assert list(g.original_ids(np.array([2, 0]))) == ["cy", "ann@x.org"]
    out = go.run("describe", g, backend="cpu")
    assert int(out["n_vertices"][0]) == 3 and int(out["n_components"][0]) == 1


def test_string_ids_with_a_node_frame_and_unknown_ids():
    nodes = pd.DataFrame({"id": ["a", "b", "z"], "label": [1, 2, 3]})
    g = go.Graph.from_edgelist(pd.DataFrame({"src": ["a"], "dst": ["b"]}), nodes=nodes)
    assert g.n_vertices == 3 and list(g.vertices) == ["a", "b", "z"]
    with pytest.raises(ValueError, match="edge dst id 'q' is not in the node frame"):
        go.Graph.from_edgelist(pd.DataFrame({"src": ["a"], "dst": ["q"]}), nodes=nodes)


def test_integer_and_string_columns_together_are_strings():
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [1, 2], "dst": ["x", "1"]}))
    assert list(g.vertices) == ["1", "2", "x"] and g.n_vertices == 3  # 1 and "1" are one vertex


def test_infinite_weights_are_rejected():
    df = pd.DataFrame({"src": [1, 2], "dst": [2, 3], "w": [1.0, -np.inf]})
    with pytest.raises(ValueError, match=r"1 infinite weight\(s\), first at rows \[1\] \(-inf\)"):
        go.Graph.from_edgelist(df, weight="w")


def test_multigraph_goes_to_networkx_multigraph():
    nx = pytest.importorskip("networkx")
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [0, 1], "dst": [1, 0]}))
    assert isinstance(g.to_networkx(), nx.MultiGraph)


def test_from_arrays_and_repr():
    g = go.Graph.from_arrays(np.array([0, 1]), np.array([1, 2]), n_vertices=5, directed=True)
    assert repr(g) == "Graph(directed, 5 vertices, 2 edges, pandas)"


@pytest.mark.rapids
def test_graph_moves_between_families():
    import cudf

    g = go.Graph.from_edgelist(pd.DataFrame({"src": [3, 4], "dst": [4, 5]}))
    on_gpu = g.to("gpu")
    assert isinstance(on_gpu.edges, cudf.DataFrame) and on_gpu.device is go.Device.GPU
    back = on_gpu.to("cpu")
    pd.testing.assert_frame_equal(back.edges, g.edges)


@pytest.mark.rapids
def test_cugraph_round_trip():
    pytest.importorskip("cugraph")
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [3, 4, 5], "dst": [4, 5, 3], "w": [1.0, 2.0, 3.0]}),
                               weight="w")
    G = g.to_cugraph()
    assert G.number_of_edges() in (3, 6) and G.is_weighted()
    back = go.Graph.from_cugraph(G)
    assert back.n_vertices == 3 and back.weighted
    stats = go.run("describe", back, backend="gpu").to_pandas().iloc[0]
    assert stats["n_components"] == 1


@pytest.mark.rapids
def test_string_ids_in_cudf_frames_stay_cudf():
    import cudf

    df = cudf.DataFrame({"u": ["ann", "bob", "cy", "ann"], "v": ["bob", "cy", "ann", "dee"]})
    g = go.Graph.from_edgelist(df, src="u", dst="v")
    assert g.vertices.to_pandas().tolist() == ["ann", "bob", "cy", "dee"] and g.n_edges == 4
    for backend in ("gpu", "cpu"):
        res = go.run("jaccard", g, backend=backend)
        assert isinstance(res, cudf.DataFrame)
        assert res["first"].to_pandas().tolist() == ["ann", "bob", "cy", "ann"]
        assert res["jaccard_coeff"].to_pandas().tolist() == pytest.approx([1 / 4, 1 / 3, 1 / 4, 0.0])
    pairs = cudf.DataFrame({"first": ["dee"], "second": ["cy"]})
    assert go.run("jaccard", g, pairs=pairs, backend="gpu")["jaccard_coeff"].to_pandas().tolist() == [0.5]
    assert int(go.run("describe", g, backend="gpu")["n_vertices"].to_pandas()[0]) == 4
    host = g.to("cpu")
    assert list(host.vertices) == ["ann", "bob", "cy", "dee"]


@pytest.mark.parametrize("ids", [[5, 3, 5, 9, 0], [2 ** 40, 7, 7, -3], [0], []])
def test_distinct_and_renumbering_match_numpy(ids):
    from graphops.model.ids import IdMap, distinct

    ids = np.asarray(ids, dtype=np.int64)
    np.testing.assert_array_equal(distinct(ids), np.unique(ids))
    other = ids[::-1].copy()
    idmap, (a, b) = IdMap.build(ids, other)
    np.testing.assert_array_equal(idmap.values, np.unique(np.concatenate([ids, other])))
    np.testing.assert_array_equal(idmap.values[a], ids)
    np.testing.assert_array_equal(idmap.values[b], other)


@settings(max_examples=60, deadline=None)
@given(a=st.lists(st.text(max_size=4), max_size=30), b=st.lists(st.text(max_size=4), max_size=30),
       probe=st.lists(st.text(max_size=4), max_size=10))
def test_string_ids_are_numbered_in_sorted_order_and_looked_up(a, b, probe):
    """String ids are numbered by hashing (linear: a binary search per id cost Python calls, 2 M ids
    in 14 s); the numbers are still the ids' ranks in sorted order, and lookups find exactly them."""
    from graphops.model.ids import IdMap

    cols = [pd.Series(a, dtype=str), pd.Series(b, dtype=str)]
    if not a and not b:
        return
    ids, (ia, ib) = IdMap.build(*cols)
    ordered = pd.concat(cols, ignore_index=True).drop_duplicates().sort_values().tolist()
    assert list(ids.values) == ordered
    assert [ordered[k] for k in ia.tolist()] == a and [ordered[k] for k in ib.tolist()] == b
    pos, unknown = ids.lookup(pd.Series(probe, dtype=str))
    assert unknown.tolist() == [p not in ordered for p in probe]
    assert [ordered[k] for k, u in zip(pos.tolist(), unknown.tolist()) if not u] == [p for p in probe if p in ordered]


def test_string_pairs_on_a_graph_of_integer_ids_is_one_line():
    """Pairs naming vertices by strings on a graph whose ids are integers: an InputError naming
    a few, not numpy's TypeError from comparing an int with a str."""
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [0, 1], "dst": [1, 2]}))
    with pytest.raises(go.InputError, match=r"names vertices by strings \(e.g. 'a', 'b'\); the graph's vertex ids "
                                            r"are integers"):
        go.run("jaccard", g, pairs=pd.DataFrame({"first": ["a", "b"], "second": ["b", "c"]}), backend="cpu")
