"""Graph: an edge frame (pandas or cuDF) with hidden renumbering and cached CSR views."""
from __future__ import annotations

import logging
from typing import Any, Sequence

import numpy as np

from graphops.model.csr import CSR, CSRViews, build_csr
from graphops.base.device import Device, device_of, to_device, unproxy
from graphops.errors import InputError, InputTypeError
from graphops.model.frames import (check_columns, column_array, id_array, new_frame, plain_values, take_rows, to_family,
                     weight_array)
from graphops.model.ids import IdMap

log = logging.getLogger("graphops")

__all__ = ["Graph", "renumber", "dedupe_rows"]


def renumber(*id_columns: Any) -> tuple[IdMap, list[Any]]:
    """The sorted distinct ids over all columns, and each column mapped to ``[0, n)``."""
    return IdMap.build(*id_columns)


def dedupe_rows(src: Any, dst: Any, n: int, directed: bool) -> Any:
    """Positions of the first occurrence of each distinct edge, in frame order.

    For undirected graphs ``(u, v)`` and ``(v, u)`` are the same edge.
    """
    xp = device_of(src).xp
    lo, hi = (src, dst) if directed else (xp.minimum(src, dst), xp.maximum(src, dst))
    _, first = xp.unique(lo * max(n, 1) + hi, return_index=True)
    return xp.sort(first)


class Graph(CSRViews):
    """A directed or undirected graph held as an edge frame.

    The edge frame has columns ``src``, ``dst``, optional ``weight`` and any edge
    attribute columns; the optional node frame has ``id`` plus label/feature columns.
    Vertex ids are arbitrary integers, renumbered to ``0..n-1`` internally; results
    always speak original ids. Build with :meth:`from_edgelist`, :func:`graphops.read_graph`
    or :meth:`from_networkx`.
    """

    kind = "graph"  # what Params.check_declared reads, as of a pipeline's declared graph

    def __init__(self, edges: Any, nodes: Any, ids: IdMap, src: Any, dst: Any,
                 weights: Any, directed: bool, proxied: bool = False):
        self.edges = edges
        self.proxied = bool(proxied)  # built from cudf.pandas proxy frames: results go back as proxies
        self.nodes = nodes
        self.ids = ids
        self.directed = bool(directed)
        self._src, self._dst, self._weights = src, dst, weights

    # construction -----------------------------------------------------------------
    @classmethod
    def from_edgelist(cls, df: Any, src: str = "src", dst: str = "dst", weight: str | None = None,
                      directed: bool = False, *, edge_attrs: Sequence[str] | None = None,
                      nodes: Any = None, node_id: str = "id", dedupe: bool = False) -> "Graph":
        """Build a graph from a pandas or cuDF edge frame (the graph stays in that family).

        :param weight: weight column, or ``None`` for an unweighted graph
        :param edge_attrs: other columns to keep (default: every column not named above)
        :param nodes: optional node frame with ``node_id`` and label/feature columns; it
            defines the vertex set (isolated vertices allowed, unknown edge ids rejected)
        :param dedupe: keep only the first of repeated edges (``(u,v)``/``(v,u)`` are one
            edge when undirected), e.g. for files that list both directions

        A Dask frame (``dask_cudf`` or ``dask.dataframe``) gives a :class:`~graphops.model.daskgraph.DaskGraph`
        instead, kept in its partitions on a Dask cluster (integer ids, no weights or attributes).
        """
        from graphops.model.daskgraph import DaskGraph, is_dask_frame

        for name, flag in (("directed", directed), ("dedupe", dedupe)):
            if not isinstance(flag, (bool, np.bool_)):
                raise InputTypeError(f"Graph.from_edgelist: {name} must be True or False; got {flag!r}")
        if is_dask_frame(df):
            extra = [k for k, v in (("edge_attrs", edge_attrs), ("nodes", nodes), ("dedupe", dedupe)) if v]
            if extra:
                raise InputError(f"a graph on a Dask edge frame takes src, dst and directed only; drop {extra}, "
                                 f"or build the Graph from ddf.compute()")
            return DaskGraph.from_edgelist(df, src, dst, weight, directed)
        df, proxied = unproxy(df)
        check_columns(df, {"src": src, "dst": dst, "weight": weight})
        s, d = id_array(df[src], "src"), id_array(df[dst], "dst")
        w = weight_array(df[weight]) if weight is not None else None
        attrs = _attr_columns(df, (src, dst, weight), edge_attrs)
        frame = _edge_frame(df, s, d, w, attrs)
        node_frame, node_ids = _node_frame(nodes, node_id, device_of(df))
        ids, mapped = renumber(*((node_ids,) if node_ids is not None else (s, d)))
        rs, rd = (_map_known(ids, s, d) if node_ids is not None else mapped)
        if dedupe:
            keep = dedupe_rows(rs, rd, len(ids), directed)
            frame, rs, rd = take_rows(frame, keep), rs[keep], rd[keep]
            w = None if w is None else w[keep]
        return cls(frame, node_frame, ids, rs, rd, w, directed, proxied)

    @classmethod
    def from_arrays(cls, src: Any, dst: Any, weights: Any = None, directed: bool = False,
                    n_vertices: int | None = None) -> "Graph":
        """A graph on vertices ``0..n-1`` from integer arrays (NumPy or CuPy)."""
        device = device_of(src)
        data = {"src": src, "dst": dst}
        if weights is not None:
            data["weight"] = weights
        df = new_frame(device, data)
        nodes = None
        if n_vertices is not None:
            nodes = new_frame(device, {"id": device.xp.arange(n_vertices, dtype="int64")})
        return cls.from_edgelist(df, weight="weight" if weights is not None else None,
                                 directed=directed, nodes=nodes)

    # properties ---------------------------------------------------------------------
    @property
    def device(self) -> Device:
        """Home device: CPU for a pandas graph, GPU for a cuDF graph."""
        return device_of(self.edges)

    @property
    def vertices(self) -> Any:
        """Original vertex ids, sorted: internal index ``i`` is ``vertices[i]`` (int64 array, or
        strings: a NumPy object array on the CPU, a cuDF Series on the GPU)."""
        return self.ids.values

    @property
    def n_vertices(self) -> int:
        return len(self.ids)

    @property
    def src_index(self) -> Any:
        """Source of every edge-frame row as an internal vertex index (int64, home device)."""
        return self._src

    @property
    def dst_index(self) -> Any:
        """Destination of every edge-frame row as an internal vertex index (int64, home device)."""
        return self._dst

    @property
    def weights(self) -> Any:
        """Edge weights in frame order (float64, home device), or ``None`` when unweighted."""
        return self._weights

    @property
    def n_edges(self) -> int:
        return int(len(self._src))

    @property
    def weighted(self) -> bool:
        return self._weights is not None

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        w = ", weighted" if self.weighted else ""
        return (f"Graph({kind}{w}, {self.n_vertices} vertices, {self.n_edges} edges, "
                f"{'cudf' if self.device is Device.GPU else 'pandas'})")

    # views --------------------------------------------------------------------------
    def _build_csr(self) -> CSR:
        csr = build_csr(self._src, self._dst, self.n_vertices, directed=self.directed,
                        weights=self._weights)
        log.debug("built CSR on %s: %d bytes", self.device.value, csr.nbytes())
        return csr

    def original_ids(self, index: Any, copy: bool = True) -> Any:
        """Original vertex ids for internal indices (array in; ids out on the same device);
        ``copy=False`` lets ids 0..n-1 come back as ``index`` itself (see IdMap.take)."""
        return self.ids.take(index, copy=copy)

    def to(self, device: Device | str) -> "Graph":
        """This graph in the frame family of ``device`` (pandas or cuDF); explicit and copying."""
        device = Device.parse(device)
        if device is self.device:
            return self
        def move(a):
            return to_device(a, device)

        return Graph(to_family(self.edges, device), to_family(self.nodes, device),
                     self.ids.to(device), move(self._src), move(self._dst), move(self._weights),
                     self.directed, self.proxied)

    # conversions (implemented in convert.py, kept here as methods for discoverability) ---
    def to_networkx(self):
        """A networkx (Multi)(Di)Graph with original ids, weights and attributes."""
        from graphops.model.convert import graph_to_networkx

        return graph_to_networkx(self)

    @classmethod
    def from_networkx(cls, G: Any, weight: str | None = None) -> "Graph":
        """From a networkx graph; ``weight`` names the edge attribute to use as weight."""
        from graphops.model.convert import graph_from_networkx

        return graph_from_networkx(G, weight, cls)

    def to_cugraph(self):
        """A ``cugraph.Graph`` built from this graph's edges (needs cuGraph)."""
        from graphops.model.convert import graph_to_cugraph

        return graph_to_cugraph(self)

    @classmethod
    def from_cugraph(cls, G: Any) -> "Graph":
        """From a ``cugraph.Graph`` (its edge list, weights and directedness)."""
        from graphops.model.convert import graph_from_cugraph

        return graph_from_cugraph(G, cls)


def _attr_columns(df: Any, used: tuple, edge_attrs: Sequence[str] | None) -> list[str]:
    if edge_attrs is None:
        return [c for c in df.columns if c not in used]
    check_columns(df, {f"edge_attrs[{i}]": a for i, a in enumerate(edge_attrs)})
    return list(edge_attrs)


def _edge_frame(df: Any, s: Any, d: Any, w: Any, attrs: list[str]) -> Any:
    device = device_of(df)
    data = {"src": s, "dst": d}
    if w is not None:
        data["weight"] = w
    taken = [str(a) for a in attrs if str(a) in data]
    if taken:
        raise InputError(f"edge attribute column {taken[0]!r} has the name of the graph's own {taken[0]!r} column, "
                         f"which comes from another column; rename it, or leave it out with edge_attrs=[...]")
    for a in attrs:
        try:
            data[a] = column_array(df[a])
        except TypeError:  # a cuDF text column (CuPy holds numbers only): kept as cuDF's own column, as string ids are
            data[a] = df[a].reset_index(drop=True)
    return new_frame(device, data)


def _node_frame(nodes: Any, node_id: str, device: Device) -> tuple[Any, Any]:
    if nodes is None:
        return None, None
    nodes = unproxy(nodes)[0]
    check_columns(nodes, {"node_id": node_id}, what="node frame")
    nodes = to_family(nodes, device)
    ids = id_array(nodes[node_id], "node_id")
    if len(IdMap.build(ids)[0]) != len(ids):
        raise InputError(f"node frame column {node_id!r} has repeated ids; each vertex must appear once")
    frame = nodes.rename(columns={node_id: "id"}).sort_values("id").reset_index(drop=True)
    return frame, ids


def _map_known(ids: IdMap, s: Any, d: Any) -> list[Any]:
    out = []
    for role, col in (("src", s), ("dst", d)):
        pos, unknown = ids.lookup(col)
        if bool(unknown.any()):
            xp = device_of(pos).xp
            first = plain_values(col, xp.flatnonzero(unknown)[:1])[0]
            raise InputError(f"edge {role} id {first!r} is not in the node frame; add it there "
                             f"or drop the edges that name it")
        out.append(pos)
    return out
