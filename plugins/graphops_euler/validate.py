"""Validators of Euler tours, published as ``graphops.functions.is_euler_circuit`` and
``graphops.functions.is_euler_path``; :func:`tour_problem` says what is wrong with a tour."""
from __future__ import annotations

from typing import Any

from graphops.plugin import Graph, InputTypeError, column_array, plain_values, to_device

__all__ = ["is_euler_circuit", "is_euler_path", "tour_problem"]


def _indices(graph: Any, column: Any, what: str) -> tuple[Any, str | None]:
    xp = graph.ids.device.xp
    values = column if graph.ids.kind == "string" else to_device(column_array(column, "int64"), graph.ids.device)
    pos, missing = graph.ids.lookup(values)
    if bool(missing.any()):
        row = int(xp.flatnonzero(missing)[0])
        return pos, f"{what} at step {row} is not a vertex of the graph"
    return pos, None


def tour_problem(graph: Any, tour: Any, kind: str = "circuit", source: Any = None) -> str | None:
    """Why ``tour`` (a frame with columns src, dst, edge_id, and optionally step) is not an
    Euler ``kind`` (circuit or path) of ``graph`` starting at ``source``; ``None`` when it is."""
    if kind not in ("circuit", "path"):
        raise ValueError(f"kind must be 'circuit' or 'path'; got {kind!r}")
    if not isinstance(graph, Graph):
        raise InputTypeError(f"graph must be a graphops.Graph (the graph the tour walks); got {type(graph).__name__}")
    if not hasattr(tour, "columns"):
        raise InputTypeError(f"tour must be a frame with columns src, dst and edge_id (what euler returns); got "
                             f"{type(tour).__name__}")
    missing = [c for c in ("src", "dst", "edge_id") if c not in tour.columns]
    if missing:
        return f"the tour has no column(s) {missing}; it needs src, dst and edge_id"
    m = graph.n_edges
    if len(tour) != m:
        return f"the tour has {len(tour)} steps and the graph {m} edges; each edge must be used exactly once"
    if m == 0:
        return None if source is None else "an empty tour cannot start at a source"
    device = graph.ids.device
    xp = device.xp
    raw = to_device(column_array(tour["edge_id"]), device)
    if raw.dtype.kind not in "iu":  # fractions, NaN or text: not an edge row (never truncated to one)
        whole = raw.dtype.kind == "f" and bool((xp.isfinite(raw) & (raw == xp.floor(raw)) & (xp.abs(raw) < 2.0**62)).all())
        if not whole:
            return f"the edge_id column holds values that are not edge rows (dtype {raw.dtype}); it needs integers"
    e = raw.astype(xp.int64)
    if bool(((e < 0) | (e >= m)).any()):
        row = int(xp.flatnonzero((e < 0) | (e >= m))[0])
        return f"edge_id {int(e[row])} at step {row} is not an edge row (0..{m - 1})"
    uses = xp.bincount(e, minlength=m)
    if bool((uses != 1).any()):
        bad = int(xp.flatnonzero(uses != 1)[0])
        return f"edge {bad} is used {int(uses[bad])} times; each edge must be used exactly once"
    if "step" in tour.columns:
        steps = to_device(column_array(tour["step"], "int64"), device)
        if bool((steps != xp.arange(m)).any()):
            return "the step column is not 0, 1, ..., m-1 in order"
    s, problem = _indices(graph, tour["src"], "src")
    if problem:
        return problem
    d, problem = _indices(graph, tour["dst"], "dst")
    if problem:
        return problem
    gs, gd = to_device(graph.src_index, device)[e], to_device(graph.dst_index, device)[e]
    ok = (s == gs) & (d == gd)
    if not graph.directed:
        ok |= (s == gd) & (d == gs)
    if not bool(ok.all()):
        row = int(xp.flatnonzero(~ok)[0])
        return f"step {row} walks edge {int(e[row])} between other vertices than the edge's own"
    joined = d[:-1] == s[1:]
    if not bool(joined.all()):
        row = int(xp.flatnonzero(~joined)[0])
        return f"step {row} ends where step {row + 1} does not start: the walk is not consecutive"
    if kind == "circuit" and int(d[-1]) != int(s[0]):
        return "the walk does not end where it started: it is not a circuit"
    if source is not None:
        first = plain_values(graph.ids.values, s[:1])[0]
        if first != source:
            return f"the tour starts at {first!r}, not at source {source!r}"
    return None


def is_euler_circuit(graph: Any, tour: Any, source: Any = None) -> bool:
    """Whether ``tour`` walks every edge of ``graph`` exactly once, consecutively, and ends
    where it starts (at ``source`` when given). :func:`tour_problem` says why not."""
    return tour_problem(graph, tour, "circuit", source) is None


def is_euler_path(graph: Any, tour: Any, source: Any = None) -> bool:
    """Like :func:`is_euler_circuit` without the closing condition."""
    return tour_problem(graph, tour, "path", source) is None
