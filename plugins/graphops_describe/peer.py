"""The networkx peer of ``describe``, for side-by-side comparison in benchmarks."""
from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

from graphops.plugin import GraphSet, gini

from .params import DescribeParams


def to_networkx(obj: Any) -> tuple[list[Any], bool]:
    """Each graph as a networkx (multi)graph, and whether the input was a GraphSet.

    Done once per input and kept out of timings.
    """
    batched = isinstance(obj, GraphSet)
    return [g.to_networkx() for g in (obj if batched else [obj])], batched


def _row(G: Any) -> dict[str, Any]:
    deg = np.fromiter((d for _, d in G.degree()), dtype=np.int64, count=G.number_of_nodes())
    empty = len(deg) == 0
    distinct = len({(u, v) if G.is_directed() else frozenset((u, v)) for u, v in G.edges()})
    comps = nx.number_weakly_connected_components if G.is_directed() else nx.number_connected_components
    return {
        "n_vertices": G.number_of_nodes(), "n_edges": G.number_of_edges(),
        "self_loops": nx.number_of_selfloops(G), "multi_edges": G.number_of_edges() - distinct,
        "degree_min": np.nan if empty else float(deg.min()),
        "degree_mean": np.nan if empty else float(deg.sum()) / len(deg),
        "degree_max": np.nan if empty else float(deg.max()),
        "degree_gini": gini(np, deg) if len(deg) else float("nan"), "n_components": comps(G) if not empty else 0,
    }


def run_networkx(prepared: tuple[list[Any], bool], params: DescribeParams) -> dict[str, Any]:
    graphs, batched = prepared
    rows = [_row(G) for G in graphs]
    out = {k: np.asarray([r[k] for r in rows]) for k in rows[0]}
    if batched:
        out = {"graph": np.arange(len(graphs), dtype=np.int64), **out}
    return out
