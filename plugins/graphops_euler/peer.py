"""The networkx peer of ``euler`` (``nx.eulerian_circuit`` / ``nx.eulerian_path`` with keys),
for benchmarks and for comparing semantics; the checks before work are graphops' own."""
from __future__ import annotations

from typing import Any

import numpy as np

from graphops.plugin import Device, to_device

from .common import plan_tour
from .cpu import edge_components
from .params import EulerParams

__all__ = ["to_networkx", "run_networkx"]


def to_networkx(graph: Any) -> Any:
    """A networkx multigraph of the edges (internal ids), edge keys = edge rows; built once,
    outside timings."""
    import networkx as nx

    src, dst = (to_device(a, Device.CPU) for a in (graph.src_index, graph.dst_index))
    G = nx.MultiDiGraph() if graph.directed else nx.MultiGraph()
    G.add_edges_from(zip(src.tolist(), dst.tolist(), range(len(src))))
    G.graph["graphops"] = graph
    return G


def run_networkx(G: Any, params: EulerParams) -> dict[str, Any]:
    import networkx as nx

    plan = plan_tour(G.graph["graphops"], params, edge_components)
    if G.number_of_edges() == 0:
        walk: list = []
    elif plan.kind == "circuit":
        walk = list(nx.eulerian_circuit(G, source=plan.start, keys=True))
    else:
        walk = list(nx.eulerian_path(G, source=plan.start, keys=True))
    m = len(walk)
    arr = np.array(walk, dtype=np.int64).reshape(m, 3)
    return {"step": np.arange(m, dtype=np.int64), "src": arr[:, 0], "dst": arr[:, 1], "edge_id": arr[:, 2]}
