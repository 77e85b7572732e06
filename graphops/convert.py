"""Conversions between :class:`Graph` and networkx / cuGraph graphs (imported only when used)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .device import Device, require
from .frames import new_frame

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
    vertices = g.vertices.get() if g.device is Device.GPU else g.vertices
    if nodes is not None:
        G.add_nodes_from((int(r.pop("id")), r) for r in nodes.to_dict("records"))
    else:
        G.add_nodes_from(int(v) for v in vertices)
    attrs = [c for c in edges.columns if c not in ("src", "dst")]
    for rec in edges.to_dict("records"):
        u, v = int(rec.pop("src")), int(rec.pop("dst"))
        G.add_edge(u, v, **{a: rec[a] for a in attrs})
    return G


def graph_from_networkx(G: Any, weight: str | None = None) -> Any:
    """A pandas-backed :class:`Graph` from a networkx graph with integer node ids."""
    from .graph import Graph

    bad = [n for n in G.nodes if not isinstance(n, (int, np.integer)) or isinstance(n, bool)]
    if bad:
        raise ValueError(f"graph node ids must be integers; found {bad[0]!r}. Relabel first with "
                         f"networkx.convert_node_labels_to_integers(G)")
    rows = list(G.edges(data=True))  # (u, v, attributes) for graphs and multigraphs alike
    if weight is not None and any(weight not in d for _, _, d in rows):
        raise ValueError(f"weight={weight!r}: some edges have no attribute {weight!r}")
    data: dict[str, Any] = {"src": [u for u, _, _ in rows], "dst": [v for _, v, _ in rows]}
    for key in sorted({k for _, _, d in rows for k in d}):
        data[key] = [d.get(key, np.nan) for _, _, d in rows]
    df = pd.DataFrame(data, columns=list(data)).astype({"src": "int64", "dst": "int64"})
    nodes = pd.DataFrame({"id": np.asarray(list(G.nodes), dtype=np.int64)})
    for key in sorted({k for _, d in G.nodes(data=True) for k in d}):
        nodes[key] = [d.get(key, np.nan) for _, d in G.nodes(data=True)]
    return Graph.from_edgelist(df, weight=weight, directed=G.is_directed(), nodes=nodes)


def graph_to_cugraph(g: Any) -> Any:
    """A ``cugraph.Graph`` with the same edges, weights and directedness (original ids)."""
    cugraph = require("cugraph", "Graph.to_cugraph")
    edges = g.to(Device.GPU).edges
    G = cugraph.Graph(directed=g.directed)
    G.from_cudf_edgelist(edges, source="src", destination="dst",
                         edge_attr="weight" if g.weighted else None, renumber=True)
    return G


def graph_from_cugraph(G: Any) -> Any:
    """A cuDF-backed :class:`Graph` from a ``cugraph.Graph``'s edge list."""
    from .graph import Graph

    df = G.view_edge_list()
    cols = list(df.columns)
    data = {"src": df[cols[0]].values, "dst": df[cols[1]].values}
    weighted = G.is_weighted() and len(cols) > 2
    if weighted:
        data["weight"] = df[cols[2]].values
    frame = new_frame(Device.GPU, data)
    # cuGraph may list an undirected edge in both directions; keep it once, as graphops does.
    return Graph.from_edgelist(frame, weight="weight" if weighted else None, directed=G.is_directed(),
                               dedupe=not G.is_directed())
