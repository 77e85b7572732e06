"""Per-graph statistics from per-vertex counts, written once for NumPy and CuPy alike.

Both backends compute per-vertex arrays (degree, self-loops, repeated edges, whether
the vertex is its component's root) with their own kernels, then call
:func:`summarize`. Sums run in int64, so CPU and GPU give identical numbers.
"""
from __future__ import annotations

from typing import Any

from graphops.plugin import gini_from_sums


def segment_sums(xp: Any, rows: Any, ptr: Any) -> Any:
    """For each row of ``rows`` (k × n), the int64 sums of ``row[ptr[i]:ptr[i+1]]`` (k × G).

    One cumulative sum over all rows at once: a few launches on the GPU, whatever k is.
    """
    acc = xp.zeros((rows.shape[0], rows.shape[1] + 1), dtype=xp.int64)
    xp.cumsum(rows, axis=1, out=acc[:, 1:])
    return acc[:, ptr[1:]] - acc[:, ptr[:-1]]


def _sorted_within(xp: Any, deg: Any, gid: Any) -> Any:
    """Degrees sorted inside each graph's contiguous segment."""
    span = int(deg.max()) + 1 if len(deg) else 1
    return xp.sort(gid * span + deg) - gid * span


def summarize(xp: Any, csr: Any, deg: Any, self_at: Any, multi_at: Any, roots: Any) -> dict[str, Any]:
    """The ``describe`` columns for every graph of a (batched) CSR."""
    graph_ptr, edge_ptr = csr.segments()
    n = graph_ptr[1:] - graph_ptr[:-1]
    n_graphs = len(n)
    gid = xp.searchsorted(graph_ptr, xp.arange(csr.n_vertices, dtype=xp.int64), side="right") - 1
    sdeg = _sorted_within(xp, deg, gid)
    rank = xp.arange(csr.n_vertices, dtype=xp.int64) - graph_ptr[gid] + 1
    per_vertex = xp.stack([deg, rank * sdeg, self_at, multi_at, roots.astype(xp.int64)])
    total, weighted_rank, loops, repeats, components = segment_sums(xp, per_vertex, graph_ptr)
    empty = n == 0
    nf = xp.where(empty, 1, n).astype(xp.float64)
    first = xp.minimum(graph_ptr[:-1], max(csr.n_vertices - 1, 0))
    last = xp.maximum(graph_ptr[1:] - 1, 0)
    nan = xp.float64("nan")
    pick = (lambda a: xp.where(empty, nan, a[first] if len(a) else xp.zeros(n_graphs)))
    return {
        "graph": xp.arange(n_graphs, dtype=xp.int64),
        "n_vertices": n.astype(xp.int64),
        "n_edges": (edge_ptr[1:] - edge_ptr[:-1]).astype(xp.int64),
        "self_loops": loops,
        "multi_edges": repeats,
        "degree_min": pick(sdeg),
        "degree_mean": xp.where(empty, nan, total / nf),
        "degree_max": xp.where(empty, nan, sdeg[last] if len(sdeg) else xp.zeros(n_graphs)),
        "degree_gini": gini_from_sums(xp, n, total, weighted_rank),
        "n_components": components,
    }


def finish(xp: Any, csr: Any, stats: dict[str, Any]) -> dict[str, Any]:
    """Drop the ``graph`` column for a single graph (it is always 0 there)."""
    if csr.graph_ptr is None:
        stats = {k: v for k, v in stats.items() if k != "graph"}
    return stats


def picture(result: Any, inputs: dict[str, Any], params: Any, path: Any) -> Any:
    """The degree distribution of the described graph (or of all graphs of a GraphSet)."""
    import numpy as np

    from graphops.plugin import Device
    from graphops.plugin import histogram

    graph = inputs["graph"]
    degrees = np.diff(np.asarray(graph.csr(Device.CPU).indptr))
    return histogram(degrees, path, title=f"degrees of {getattr(graph, 'name', 'the graph')} ({len(degrees):,} vertices)",
                     xlabel="degree", log_y=True, bins=min(60, max(int(degrees.max(initial=0)) + 1, 2)))
