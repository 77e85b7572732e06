"""Parameters of ``jaccard``, the pairs it scores, and its work count."""
from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, PrivateAttr

from graphops import Graph, Params
from graphops.device import Device, device_of, to_device
from graphops.frames import check_columns, id_array, to_family
from graphops.graph import dedupe_rows

OUTPUTS = ("first", "second", "jaccard_coeff")


class JaccardParams(Params):
    """Jaccard similarity ``|N(u) ∩ N(v)| / |N(u) ∪ N(v)|`` of vertex pairs (cuGraph's semantics).

    * ``pairs``: a pandas/cuDF frame of vertex pairs by original id (columns ``first`` and
      ``second``, or exactly two columns), or a :class:`Graph` whose edges are the pairs (the
      YAML ``pairs`` input). Results come in the pairs' row order, repeats included.
      Without pairs every distinct edge is scored once, in edge-frame order, as stored
      (``u-v`` and ``v-u`` are one edge of an undirected graph).
    * Neighbourhoods are sets: a vertex is its own neighbour only when a self-loop is
      stored, and repeated edges count once (the first one's weight is used).
      J = 0 when the union is empty.
    * ``use_weight``: Σ_{w∈N(u)∩N(v)} min(w_uw, w_vw) / (Σ_∩ max(w_uw, w_vw) + the weights
      of the neighbours of u and of v they do not share); weights must be ≥ 0.
    * Directed graphs are refused unless ``symmetrize=True`` (each arc becomes an
      undirected edge; when both directions are stored the first one's weight is used).
    * ``cpu_share`` (hybrid backend only): the fraction of pairs, lightest first by
      d_u + d_v, given to the CPU threads; ``None`` lets a degree-statistics heuristic
      plus a short calibration choose (0 = GPU only).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    pairs: Any = None
    use_weight: bool = False
    symmetrize: bool = False
    cpu_share: float | None = Field(None, ge=0.0, le=1.0)

    _first: Any = PrivateAttr(None)    # internal indices, home device
    _second: Any = PrivateAttr(None)
    _ids: Any = PrivateAttr(None)      # the same pairs by original id: the output columns
    _memo: dict = PrivateAttr(default_factory=dict)

    def check_inputs(self, graph: Graph, pairs: Any = None) -> None:
        if graph.directed and not self.symmetrize:
            raise ValueError("jaccard is defined on undirected graphs and this graph is directed. "
                             "Pass symmetrize=True (YAML: params: {symmetrize: true}) to treat each arc "
                             "as an undirected edge, or build the graph with directed=False")
        if self.use_weight:
            if not graph.weighted:
                raise ValueError("use_weight=True but the graph has no edge weights; build it with "
                                 "weight='<column>' (YAML: weight: <column>) or drop use_weight")
            w = graph._weights
            bad = w < 0
            if bool(bad.any()):
                xp = device_of(w).xp
                row = int(xp.flatnonzero(bad)[0])
                raise ValueError(f"use_weight=True needs non-negative weights; edge row {row} has weight "
                                 f"{float(w[row])!r} ({int(bad.sum())} negative in all). Fix or drop them")
        if pairs is not None and self.pairs is not None:
            raise ValueError("pairs given twice: as the 'pairs' input and as the pairs= parameter; keep one")

    def resolve(self, graph: Graph, pairs: Any = None) -> "JaccardParams":
        """A copy holding the pairs as internal vertex indices on the graph's home device."""
        given = pairs if pairs is not None else self.pairs
        out = self.model_copy()
        if given is None:
            out._first, out._second, out._ids = graph.cached(("jaccard_edges",), lambda: _edge_pairs(graph))
        else:
            out._first, out._second, out._ids = _given_pairs(graph, given)
        out._memo = {}
        return out

    def output_pairs(self) -> tuple[Any, Any]:
        """The ``first``/``second`` output columns: the pairs by original id, on the home device."""
        return self._ids

    @property
    def n_pairs(self) -> int:
        return int(len(self._first))

    def pairs_on(self, device: Device) -> tuple[Any, Any]:
        """``(first, second)`` as int64 internal indices on ``device``, copied once per call plan."""
        if device not in self._memo:
            self._memo[device] = (to_device(self._first, device), to_device(self._second, device))
        return self._memo[device]


def _edge_pairs(graph: Graph) -> tuple[Any, Any, tuple[Any, Any]]:
    """Every distinct edge once, in edge-frame order (orientation as first stored)."""
    xp = graph.device.xp
    if graph.n_edges == 0:
        empty = xp.zeros(0, xp.int64)
        return empty, empty, (empty, empty)
    keep = dedupe_rows(graph._src, graph._dst, graph.n_vertices, directed=False)
    first, second = xp.ascontiguousarray(graph._src[keep]), xp.ascontiguousarray(graph._dst[keep])
    return first, second, (graph.vertices[first], graph.vertices[second])


def _pair_columns(frame: Any) -> tuple[Any, Any]:
    cols = list(frame.columns)
    if "first" in cols and "second" in cols:
        return "first", "second"
    if len(cols) == 2:
        return cols[0], cols[1]
    raise ValueError(f"pairs frame must have columns 'first' and 'second' (or exactly two columns); "
                     f"it has {[str(c) for c in cols]}")


def _given_pairs(graph: Graph, given: Any) -> tuple[Any, Any, tuple[Any, Any]]:
    home = graph.device
    if isinstance(given, Graph):
        ids = to_device(given.vertices, home)
        first, second = ids[to_device(given._src, home)], ids[to_device(given._dst, home)]
        what = "pairs graph"
    else:
        check_columns(given, {}, what="pairs frame")
        frame = to_family(given, home)
        a, b = _pair_columns(frame)
        first, second = id_array(frame[a], f"pairs {a!r}"), id_array(frame[b], f"pairs {b!r}")
        what = "pairs frame"
    if len(first) == 0:
        raise ValueError(f"the {what} is empty: give at least one (first, second) row, or leave pairs "
                         f"out to score every edge of the graph")
    return _internal(graph, first, what), _internal(graph, second, what), (first, second)


def _internal(graph: Graph, ids: Any, what: str) -> Any:
    xp = graph.device.xp
    vertices = graph.vertices
    pos = xp.searchsorted(vertices, ids)
    clipped = xp.minimum(pos, max(len(vertices) - 1, 0))
    bad = (pos >= len(vertices)) if len(vertices) == 0 else (vertices[clipped] != ids)
    if bool(bad.any()):
        unknown = xp.unique(ids[bad])
        shown = ", ".join(str(int(v)) for v in unknown[:5].tolist())
        raise ValueError(f"the {what} names {len(unknown)} vertex id(s) that are not in the graph "
                         f"(e.g. {shown}); drop those rows or add the vertices to the graph")
    return pos.astype(xp.int64)


def cost(inputs: dict[str, Any], params: JaccardParams) -> dict[str, Any]:
    """Least bytes any implementation moves (the pairs in, one float out per pair, the
    adjacency read once) and the counts that rates are quoted in."""
    from .common import adjacency, work_stats

    g = inputs["graph"]
    adj = adjacency(g.csr(), params.symmetrize, params.use_weight)
    first, second = params.pairs_on(g.device)
    stats = work_stats(adj, first, second)
    return {"bytes": 24.0 * stats["pairs"] + adj.nbytes(), "flops": 0.0,
            "counts": {"pairs": stats["pairs"], "Σ(d_u+d_v)": stats["sum_deg"]}}
