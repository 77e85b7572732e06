"""Conversions between :class:`Graph` and networkx / cuGraph graphs (imported only when used)."""
from __future__ import annotations

from typing import Any

import numpy as np

from graphops.base.device import Device, host_pandas, require
from graphops.model.frames import new_frame
from graphops.errors import InputError

pd = host_pandas()  # the real pandas, also under cudf.pandas

__all__ = ["graph_to_networkx", "graph_from_networkx", "graph_to_cugraph", "graph_from_cugraph"]


def _has_repeats(g: Any) -> bool:
    csr = g.csr(Device.CPU)
    rows = np.repeat(np.arange(g.n_vertices), np.diff(csr.indptr))
    return bool(np.any((rows[1:] == rows[:-1]) & (csr.indices[1:] == csr.indices[:-1])))


def graph_to_networkx(g: Any) -> Any:
    """A networkx graph with original ids; Multi(Di)Graph when the frame repeats an edge."""
    nx = require("networkx", "Graph.to_networkx")
    multi = _has_repeats(g)
    cls = {(False, False): nx.Graph, (True, False): nx.DiGraph,
           (False, True): nx.MultiGraph, (True, True): nx.MultiDiGraph}[(g.directed, multi)]
    G = cls()
    edges = g.edges.to_pandas() if g.device is Device.GPU else g.edges
    nodes = None if g.nodes is None else (g.nodes.to_pandas() if g.device is Device.GPU else g.nodes)
    if nodes is not None:
        G.add_nodes_from((_plain(r.pop("id")), r) for r in nodes.to_dict("records"))
    else:
        G.add_nodes_from(_plain(v) for v in g.ids.to(Device.CPU).values)
    attrs = [c for c in edges.columns if c not in ("src", "dst")]
    for rec in edges.to_dict("records"):
        u, v = _plain(rec.pop("src")), _plain(rec.pop("dst"))
        G.add_edge(u, v, **{a: rec[a] for a in attrs})
    return G


def _plain(v: Any) -> Any:
    """An id as a plain Python int or str (networkx node keys)."""
    return v.item() if hasattr(v, "item") else v


def graph_from_networkx(G: Any, weight: str | None = None, graph_class: Any = None) -> Any:
    """A pandas-backed ``graph_class`` (:class:`~graphops.model.graph.Graph`, which calls this) from a
    networkx graph with integer or string node ids."""

    kinds = {"int" if isinstance(n, (int, np.integer)) and not isinstance(n, bool) else
             "str" if isinstance(n, str) else type(n).__name__ for n in G.nodes}
    if not kinds <= {"int"} and kinds != {"str"}:
        bad = next(n for n in G.nodes if not isinstance(n, str))
        raise InputError(f"graph node ids must be all integers or all strings; found {bad!r} "
                         f"({sorted(kinds)}). Relabel first with networkx.convert_node_labels_to_integers(G) "
                         f"or networkx.relabel_nodes(G, str)")
    id_type = "int64" if kinds <= {"int"} else object
    rows = list(G.edges(data=True))  # (u, v, attributes) for graphs and multigraphs alike
    if weight is not None and any(weight not in d for _, _, d in rows):
        raise InputError(f"weight={weight!r}: some edges have no attribute {weight!r}")
    data: dict[str, Any] = {"src": [u for u, _, _ in rows], "dst": [v for _, v, _ in rows]}
    for key in sorted({k for _, _, d in rows for k in d} | ({weight} if weight is not None else set())):
        data[key] = [d.get(key, np.nan) for _, _, d in rows]  # (a graph without edges: empty)
    df = pd.DataFrame(data, columns=list(data)).astype({"src": id_type, "dst": id_type})
    if weight is not None and not rows:
        df[weight] = df[weight].astype("float64")
    nodes = pd.DataFrame({"id": np.asarray(list(G.nodes), dtype=id_type)})
    for key in sorted({k for _, d in G.nodes(data=True) for k in d}):
        nodes[key] = [d.get(key, np.nan) for _, d in G.nodes(data=True)]
    return graph_class.from_edgelist(df, weight=weight, directed=G.is_directed(), nodes=nodes)


def graph_to_cugraph(g: Any) -> Any:
    """A ``cugraph.Graph`` with the same edges, weights and directedness (original ids)."""
    cugraph = require("cugraph", "Graph.to_cugraph")
    edges = g.to(Device.GPU).edges
    G = cugraph.Graph(directed=g.directed)
    G.from_cudf_edgelist(edges, source="src", destination="dst",
                         edge_attr="weight" if g.weighted else None, renumber=True)
    return G


def graph_from_cugraph(G: Any, graph_class: Any = None) -> Any:
    """A cuDF-backed ``graph_class`` (:class:`~graphops.model.graph.Graph`) from a ``cugraph.Graph``'s
    edge list."""

    df = G.view_edge_list()
    cols = list(df.columns)
    data = {"src": df[cols[0]].values, "dst": df[cols[1]].values}
    weighted = G.is_weighted() and len(cols) > 2
    if weighted:
        data["weight"] = df[cols[2]].values
    frame = new_frame(Device.GPU, data)
    # cuGraph may list an undirected edge in both directions; keep it once, as graphops does.
    return graph_class.from_edgelist(frame, weight="weight" if weighted else None, directed=G.is_directed(),
                               dedupe=not G.is_directed())
