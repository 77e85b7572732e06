"""Parameters, output columns and work count of ``describe``."""
from __future__ import annotations

from typing import Any

from graphops.plugin import Params

OUTPUTS = (
    "graph", "n_vertices", "n_edges", "self_loops", "multi_edges", "degree_min", "degree_mean",
    "degree_max", "degree_gini", "n_components",
)


class DescribeParams(Params):
    """``describe`` takes no parameters.

    Conventions (those of networkx multigraphs): an edge frame row is one edge; the
    degree of a vertex counts edge ends, so a self-loop adds 2 and a directed graph's
    degree is in + out; ``multi_edges`` counts rows beyond the first of each distinct
    edge (``u-v`` and ``v-u`` are one undirected edge); components are weakly
    connected for directed graphs, and an isolated vertex is a component of its own.
    ``degree_gini`` is the Gini index of the degree sequence (0 when every vertex has
    the same degree, including no edges at all); statistics of a graph without
    vertices are NaN. A GraphSet gives one row per graph, numbered by ``graph``.
    """


def cost(inputs: dict[str, Any], params: DescribeParams) -> dict[str, float]:
    """Least bytes any implementation must touch: the CSR once, plus a few passes over vertices."""
    g = next(iter(inputs.values()))
    csr = g.csr()
    entries = len(csr.indices)
    return {"bytes": 8.0 * (csr.n_vertices + 1) + 4.0 * entries + 8.0 * 4 * csr.n_vertices, "flops": 0.0}
