"""What both backends share: the checks before work (degrees, components, start and end
vertex) and the arrays a backend receives."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graphops.plugin import Device, InputError, device_of, plain_values, to_device

__all__ = ["NotEulerianError", "Arcs", "TourPlan", "plan_tour", "check_degrees", "prepare_cpu", "prepare_gpu",
           "components"]

SHOWN = 5  # how many offending vertices an error lists


class NotEulerianError(InputError):
    """The graph has no Euler circuit (or path) of the kind asked for; the message says why
    (unbalanced or odd vertices, edges in several components). A ``ValueError`` too, and published
    as ``graphops.NotEulerianError``."""


@dataclass(frozen=True)
class Arcs:
    """A backend's input: ``n`` vertices, edge ``i`` from ``src[i]`` to ``dst[i]`` (internal
    indices; NumPy int64 on the CPU, CuPy int32 on the GPU), whether edges are directed, and
    the graph (for :func:`plan_tour`, whose answer is cached on it)."""

    n: int
    src: Any
    dst: Any
    directed: bool
    graph: Any = field(repr=False, compare=False, default=None)

    @property
    def m(self) -> int:
        return int(self.src.shape[0])


def _arcs(graph: Any, device: Device, dtype: str) -> Arcs:
    src, dst = (to_device(a, device).astype(dtype, copy=False) for a in (graph.src_index, graph.dst_index))
    return Arcs(graph.n_vertices, src, dst, graph.directed, graph)


def prepare_cpu(graph: Any) -> Arcs:
    return _arcs(graph, Device.CPU, "int64")


def prepare_gpu(graph: Any) -> Arcs:
    if max(graph.n_edges, graph.n_vertices) >= 2 ** 31 - 2:
        raise InputError(f"euler gpu: {graph.n_edges} edges on {graph.n_vertices} vertices; the GPU backend "
                         f"takes fewer than 2**31 of each")
    return _arcs(graph, Device.GPU, "int32")


@dataclass(frozen=True)
class TourPlan:
    """What the checks found: ``kind`` (circuit or path), the start vertex and, for a path,
    the end vertex (internal indices; -1 when there are no edges)."""

    kind: str
    start: int
    end: int


def components(graph: Any, edge_components: Any) -> tuple[int, int, int]:
    """Connected components that carry edges (edge direction ignored), and two vertices in
    different ones (-1, -1 when there is one), by the calling backend's ``edge_components(n, src,
    dst)`` on its own device (the graph's arrays moved there); cached per device."""
    device = Device.GPU if edge_components.__module__.endswith(".gpu") else Device.CPU

    def build() -> tuple[int, int, int]:
        src, dst = to_device(graph.src_index, device), to_device(graph.dst_index, device)
        return edge_components(graph.n_vertices, src, dst)

    return graph.cached(("euler", "components", device), build)


def _ids(graph: Any, index: Any) -> list[Any]:
    """Original ids at internal indices, as plain Python values (for messages)."""
    return plain_values(graph.ids.values, index)


def _listing(graph: Any, bad: Any, what: Any) -> str:
    """``'a' (in 2, out 1), ...`` for the first few offending vertices."""
    xp = device_of(bad).xp
    first = xp.flatnonzero(bad)[:SHOWN]
    ids = _ids(graph, first)
    parts = [f"{i!r} ({what(int(v))})" for i, v in zip(ids, to_device(first, Device.CPU).tolist())]
    more = int(bad.sum()) - len(parts)
    return ", ".join(parts) + (f" and {more} more" if more > 0 else "")


def _source_index(graph: Any, source: Any) -> int:
    ids = graph.ids
    if ids.kind == "string" and not isinstance(source, str) or ids.kind == "integer" and isinstance(source, str):
        raise InputError(f"euler: source={source!r} is a {type(source).__name__} but this graph's vertex ids are "
                         f"{'strings' if ids.kind == 'string' else 'integers'}; pass one of them")
    xp = ids.device.xp
    pos, missing = ids.lookup(xp.asarray([source]) if ids.kind == "integer" else [source])
    if bool(missing[0]):
        sample = _ids(graph, xp.arange(min(3, graph.n_vertices)))
        raise InputError(f"euler: source={source!r} is not a vertex of the graph (its ids look like "
                         f"{', '.join(map(repr, sample)) or 'nothing: it has no vertices'})")
    return int(pos[0])


def _degree_facts(graph: Any) -> dict[str, Any]:
    def build() -> dict[str, Any]:
        src, dst = graph.src_index, graph.dst_index
        xp = device_of(src).xp
        n = graph.n_vertices
        out_deg = xp.bincount(src, minlength=n)
        in_deg = xp.bincount(dst, minlength=n)
        return {"out": out_deg, "in": in_deg, "deg": out_deg + in_deg}

    return graph.cached(("euler", "degrees"), build)


def check_degrees(graph: Any, params: Any) -> TourPlan:
    """What the degrees say (device-neutral, no backend code: run when the call is validated):
    the tour's kind, start and end, or a NotEulerianError saying why there is none."""
    key = ("euler", "plan", params.kind, repr(params.source))
    return graph.cached(key, lambda: _plan(graph, params))


def plan_tour(graph: Any, params: Any, edge_components: Any) -> TourPlan:
    """Check that ``graph`` has the tour ``params`` asks for, its edges in one component (found by
    the calling backend's ``edge_components``); say why not (NotEulerianError)."""
    plan = check_degrees(graph, params)
    if graph.n_edges == 0:
        return plan
    count, a, b = components(graph, edge_components)
    if count > 1:
        u, v = _ids(graph, device_of(graph.src_index).xp.asarray([a, b]))
        raise NotEulerianError(f"not Eulerian: the edges lie in {count} connected components (e.g. {u!r} and {v!r} "
                               f"are in different ones); an Euler {plan.kind} needs every edge in one")
    return plan


def _plan(graph: Any, params: Any) -> TourPlan:
    source = None if params.source is None else _source_index(graph, params.source)
    if graph.n_edges == 0:
        if source is not None:
            raise InputError(f"euler: source={params.source!r} has no edges: the graph has none (its tour is empty)")
        return TourPlan(params.kind if params.kind != "auto" else "circuit", -1, -1)
    facts = _degree_facts(graph)
    xp = device_of(facts["deg"]).xp
    if graph.directed:
        diff = facts["out"] - facts["in"]
        bad = diff != 0
        starts, ends = xp.flatnonzero(diff == 1), xp.flatnonzero(diff == -1)
        pathable = int(bad.sum()) == 2 and len(starts) == 1 and len(ends) == 1
        how = lambda v: f"in {int(facts['in'][v])}, out {int(facts['out'][v])}"  # noqa: E731
        unbalanced = "vertices have in-degree != out-degree"
    else:
        bad = facts["deg"] % 2 == 1
        odd = xp.flatnonzero(bad)
        starts = ends = odd
        pathable = len(odd) == 2
        how = lambda v: f"degree {int(facts['deg'][v])}"  # noqa: E731
        unbalanced = "vertices have odd degree (a self-loop counts 2)"
    n_bad = int(bad.sum())
    kind = params.kind if params.kind != "auto" else ("circuit" if n_bad == 0 else "path")
    if kind == "circuit" and n_bad:
        hint = ""
        if pathable:
            s, t = _ids(graph, xp.stack([starts[0], ends[-1]]))
            hint = f". It has an Euler path from {s!r} to {t!r}: pass kind='path' (or kind='auto')"
        raise NotEulerianError(f"not Eulerian: {n_bad} {unbalanced}: {_listing(graph, bad, how)}. An Euler "
                               f"circuit needs {'in == out' if graph.directed else 'even degree'} at every "
                               f"vertex{hint}")
    if kind == "path" and not pathable:
        if n_bad == 0:
            raise NotEulerianError("kind='path' needs exactly one start/end pair of vertices, and every vertex of "
                                   "this graph is balanced: it has an Euler circuit instead (kind='circuit' or "
                                   "kind='auto')")
        need = ("exactly one vertex with out - in = 1 (the start) and one with in - out = 1 (the end)"
                if graph.directed else "exactly two odd vertices (the ends)")
        raise NotEulerianError(f"no Euler path: {n_bad} {unbalanced}: {_listing(graph, bad, how)}. An Euler path "
                               f"needs {need}, every other vertex balanced")
    if kind == "circuit":
        if source is not None and int(facts["deg"][source]) == 0:
            first = _ids(graph, graph.src_index[:1])[0]
            raise InputError(f"euler: source={params.source!r} has no edges; a circuit starts at a vertex with "
                             f"edges (e.g. {first!r}, the tail of the first edge)")
        start = source if source is not None else int(graph.src_index[0])
        return TourPlan("circuit", start, start)
    if graph.directed:
        start, end = int(starts[0]), int(ends[0])
    else:
        start, end = int(odd[0]), int(odd[1])
        if source is not None and source == end:
            start, end = end, start
    if source is not None and source != start:
        s, t = _ids(graph, xp.asarray([start, end]))
        where = f"{s!r} (out - in = 1)" if graph.directed else f"{s!r} or {t!r} (the odd vertices)"
        raise InputError(f"euler: an Euler path of this graph starts at {where}; source={params.source!r} "
                         f"cannot start one")
    return TourPlan("path", start, end)
