"""Compressed sparse row views of graphs, built with NumPy or CuPy alike.

A :class:`CSR` holds ``indptr`` (int64, ``n+1``), ``indices`` (int32, sorted within
each row), optional ``weights`` (float64) and ``edge_ids`` (int64): for each stored
entry, the row of the edge frame it came from. An undirected edge ``u-v`` is stored
once in the frame and twice here (``u→v`` and ``v→u``); a self-loop ``u-u`` is stored
once here, as in the adjacency matrix. Batched CSRs of many small graphs add
``graph_ptr`` (vertex offsets per graph) and ``edge_ptr`` (frame-edge offsets).
"""
from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphops.base.device import Device, device_of, to_device

log = logging.getLogger("graphops")

__all__ = ["CSR", "build_csr", "CSRViews", "read_only"]

_ARRAY_FIELDS = (
    "indptr", "indices", "weights", "edge_ids", "graph_ptr", "edge_ptr",
    "node_labels", "edge_labels", "node_attrs",
)


@dataclass(frozen=True)
class CSR:
    """Arrays of one graph (or a batch of graphs) on one device. Backends receive these."""

    indptr: Any
    indices: Any
    n_vertices: int
    n_edges: int
    directed: bool
    weights: Any = None
    edge_ids: Any = None
    graph_ptr: Any = None
    edge_ptr: Any = None
    node_labels: Any = None
    edge_labels: Any = None
    node_attrs: Any = None
    home: Any = None  # the Device of the graph this view belongs to: results go there
    extra: dict = field(default_factory=dict)  # backends' derived objects, cached per view

    @property
    def device(self) -> Device:
        return device_of(self.indptr)

    @property
    def xp(self) -> Any:
        return self.device.xp

    @property
    def n_graphs(self) -> int:
        return 1 if self.graph_ptr is None else len(self.graph_ptr) - 1

    @property
    def weighted(self) -> bool:
        return self.weights is not None

    def segments(self) -> tuple[Any, Any]:
        """``(graph_ptr, edge_ptr)`` on this device; a single graph is one segment."""
        if self.graph_ptr is not None:
            return self.graph_ptr, self.edge_ptr
        xp = self.xp
        return (xp.asarray([0, self.n_vertices], dtype=xp.int64),
                xp.asarray([0, self.n_edges], dtype=xp.int64))

    def cached(self, key: Any, make: Any) -> Any:
        """``make()``, made once per view and kept in ``extra`` under ``key`` (a backend's derived
        objects: adjacencies, distances, calibrations)."""
        if key not in self.extra:
            self.extra[key] = make()
        return self.extra[key]

    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in self.arrays().values())

    def arrays(self) -> dict[str, Any]:
        """The arrays of this view by field name (those it has)."""
        out = {name: getattr(self, name) for name in _ARRAY_FIELDS}
        return {k: v for k, v in out.items() if v is not None}

    def to(self, device: Device | str) -> "CSR":
        """This CSR on ``device``; the same object when it is already there."""
        device = Device.parse(device)
        if device is self.device:
            return self
        moved = {k: to_device(v, device) for k, v in self.arrays().items()}
        log.debug("moved CSR to %s: %d bytes", device.value, self.nbytes())
        return dataclasses.replace(self, extra={}, **moved)  # derived objects are per device


def _directed_entries(src, dst, weights, xp):
    """Rows, columns, edge ids and weights of the stored entries of a directed graph."""
    eids = xp.arange(len(src), dtype=xp.int64)
    return src, dst, eids, weights


def _undirected_entries(src, dst, weights, xp):
    """Both directions of every edge; a self-loop once."""
    eids = xp.arange(len(src), dtype=xp.int64)
    off = src != dst
    rows = xp.concatenate([src, dst[off]])
    cols = xp.concatenate([dst, src[off]])
    ids = xp.concatenate([eids, eids[off]])
    w = None if weights is None else xp.concatenate([weights, weights[off]])
    return rows, cols, ids, w


def build_csr(src: Any, dst: Any, n_vertices: int, *, directed: bool, weights: Any = None) -> CSR:
    """Build a :class:`CSR` from renumbered edge arrays (NumPy or CuPy, ids in ``[0, n)``).

    Rows are sorted by (row, column); entries with equal (row, column) keep frame order.
    """
    xp = device_of(src).xp
    src = xp.asarray(src, dtype=xp.int64)
    dst = xp.asarray(dst, dtype=xp.int64)
    if xp is np:  # a counting sort by row and a sort within rows, chunked (graphops.model.csrhost)
        from graphops.model.csrhost import build_host

        return CSR(n_vertices=int(n_vertices), n_edges=int(len(src)), directed=bool(directed),
                   **build_host(src, dst, int(n_vertices), bool(directed), weights))
    split = _directed_entries if directed else _undirected_entries
    rows, cols, ids, w = split(src, dst, weights, xp)
    key = rows * max(int(n_vertices), 1) + cols
    order = xp.argsort(key, kind="stable") if xp is np else xp.argsort(key)
    indptr = xp.zeros(n_vertices + 1, dtype=xp.int64)
    if n_vertices and len(rows):  # (CuPy's bincount takes the maximum first, which no entries have)
        xp.cumsum(xp.bincount(rows, minlength=n_vertices), out=indptr[1:])
    return CSR(
        indptr=indptr,
        indices=xp.ascontiguousarray(cols[order].astype(xp.int32)),
        n_vertices=int(n_vertices),
        n_edges=int(len(src)),
        directed=bool(directed),
        weights=None if w is None else xp.ascontiguousarray(w[order].astype(xp.float64)),
        edge_ids=xp.ascontiguousarray(ids[order]),
    )


def read_only(csr: CSR) -> CSR:
    """``csr`` with every NumPy array read-only: a read-only view of it, so an array the CSR shares
    with its owner (a GraphSet's labels) keeps the owner's flag. CuPy arrays have no such flag."""
    frozen = {}
    for name, a in csr.arrays().items():
        if isinstance(a, np.ndarray) and a.flags.writeable:
            frozen[name] = a.view()
            frozen[name].flags.writeable = False
    return dataclasses.replace(csr, **frozen) if frozen else csr


class CSRViews:
    """Mixin for graph containers: a CSR view per device, built once, plus a memo of derived objects.

    The cached views are shared by every later call, so their host (NumPy) arrays are read-only: a
    backend writing into its input raises ``ValueError: assignment destination is read-only`` (Numba
    refuses to compile the write) instead of corrupting the graph for later calls. A backend that
    needs to change an array copies it first. CuPy has no read-only arrays: a GPU backend must not
    write into its inputs (``graphops.plugin.check_algorithm`` checks that the inputs are unchanged
    after each backend ran).

    Subclasses provide ``device`` (home) and ``_build_csr()`` (on the home device).
    """

    def csr(self, device: Device | str | None = None) -> CSR:
        """The CSR view on ``device`` (default: home), built once and cached per device (read-only
        on the host)."""
        device = self.device if device is None else Device.parse(device)
        views = self.__dict__.setdefault("_csr_views", {})
        if device not in views:
            home = views.get(self.device) or read_only(dataclasses.replace(self._build_csr(), home=self.device))
            views[self.device] = home
            views[device] = read_only(home.to(device))
        return views[device]

    def __getstate__(self) -> dict:
        """Pickled (e.g. sent to a Dask worker) without its caches: they are rebuilt there."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_csr_views", "_memo")}

    def cached(self, key: Any, factory: Any) -> Any:
        """Memo for objects derived from this graph (e.g. a peer library's own graph)."""
        memo = self.__dict__.setdefault("_memo", {})
        if key not in memo:
            memo[key] = factory()
        return memo[key]
