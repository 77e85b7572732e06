"""Vertex pairs as an input kind: given by original id, resolved once against a graph.

An algorithm declares ``Input("pairs", kinds=("pairs",), required=False, default="edges")``.
Callers pass a pandas/cuDF frame of pairs (columns ``first``/``second``, or exactly two
columns), a :class:`Graph` whose edges are the pairs (the YAML form), or a :class:`Pairs`;
``go.run(name, g, pairs=df)`` binds the keyword to the slot. Dispatch maps them to internal
vertex indices once per call (unknown ids are an error naming them) and hands the backend a
:class:`PairIndex` on its device. An empty slot with ``default="edges"`` means every distinct
edge of the graph once, in edge-frame order (cached on the graph).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any

from graphops.base.device import Device, device_of, to_device, unproxy
from graphops.errors import InputError, InputTypeError
from graphops.model.frames import check_columns, id_array, plain_values, to_family

__all__ = ["Pairs", "PairIndex", "as_pairs"]


@dataclass(frozen=True)
class PairIndex:
    """Pairs as int64 internal vertex indices on one device: what a backend receives.

    ``digest`` identifies the pairs' content (for caches keyed by workload); ``extra`` holds
    backends' derived objects for this view, as :attr:`graphops.model.csr.CSR.extra` does.
    """

    first: Any
    second: Any
    digest: str
    ids: tuple[Any, Any] | None = field(default=None, compare=False)  # the same pairs by original id (home)
    extra: dict = field(default_factory=dict, compare=False)

    def original(self, column: Any) -> Any:
        """The original ids of ``first`` or ``second`` when ``column`` is one of them, else ``None``
        (dispatch maps a backend's vertex columns back without a gather when they are the pairs)."""
        if self.ids is not None:
            for mine, ids in zip((self.first, self.second), self.ids):
                if column is mine:
                    return ids
        return None

    def __len__(self) -> int:
        return int(len(self.first))

    def __getstate__(self) -> dict:  # what backends derived for this view stays where it was made
        return {**self.__dict__, "extra": {}}


class Pairs:
    """Vertex pairs by original id (integer arrays or string Series, in one frame family)."""

    def __init__(self, first: Any, second: Any, what: str = "pairs", digest: str | None = None,
                 proxied: bool = False):
        self.first, self.second, self.what = first, second, what
        self.proxied = proxied  # given as a cudf.pandas proxy frame
        self._digest = digest
        self._views: "weakref.WeakKeyDictionary[Any, dict[Device, PairIndex]]" = weakref.WeakKeyDictionary()

    def __len__(self) -> int:
        return int(len(self.first))

    def __getstate__(self) -> dict:
        """Pickled without the per-graph index views (rebuilt where it is unpickled)."""
        return {k: v for k, v in self.__dict__.items() if k != "_views"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._views = weakref.WeakKeyDictionary()

    def slice(self, lo: int, hi: int) -> "Pairs":
        """Pairs ``lo:hi``, in order; the index views already made for a graph are sliced too
        (a part of a cluster call does not search its ids again)."""
        def part(ids: Any) -> Any:
            return ids.iloc[lo:hi].reset_index(drop=True) if hasattr(ids, "iloc") else ids[lo:hi]
        out = Pairs(part(self.first), part(self.second), self.what, proxied=self.proxied)
        for graph, views in self._views.items():
            out._views[graph] = {
                device: PairIndex(v.first[lo:hi], v.second[lo:hi], f"{v.digest}[{lo}:{hi}]",
                                  None if v.ids is None else (part(v.ids[0]), part(v.ids[1])))
                for device, v in views.items()}
        return out

    @classmethod
    def from_frame(cls, frame: Any) -> "Pairs":
        frame, proxied = unproxy(frame)
        check_columns(frame, {}, what="pairs frame")
        cols = [str(c) for c in frame.columns]
        if "first" in cols and "second" in cols:
            a, b = "first", "second"
        elif len(cols) == 2:
            a, b = frame.columns
        else:
            raise InputError(f"pairs frame must have columns 'first' and 'second' (or exactly two columns); "
                             f"it has {cols}")
        return cls(id_array(frame[a], f"pairs {str(a)!r}"), id_array(frame[b], f"pairs {str(b)!r}"), "pairs frame",
                   proxied=proxied)

    @classmethod
    def from_graph(cls, graph: Any) -> "Pairs":
        """The edges of ``graph`` as pairs, in edge-frame order, repeats kept."""
        named = getattr(graph, "named", None)  # a pipeline's graph: its name and file
        return cls(graph.original_ids(graph.src_index), graph.original_ids(graph.dst_index),
                   "pairs graph" if not named else f"pairs graph {named}")

    @classmethod
    def edges_of(cls, graph: Any) -> "Pairs":
        """Every distinct edge of ``graph`` once, in edge-frame order, oriented as first stored
        (``u-v`` and ``v-u`` are one edge); cached on the graph."""
        from graphops.model.graph import dedupe_rows

        def build() -> "Pairs":
            keep = dedupe_rows(graph.src_index, graph.dst_index, graph.n_vertices, directed=False)
            src, dst = graph.src_index[keep], graph.dst_index[keep]
            pairs = cls(graph.original_ids(src), graph.original_ids(dst), "edges", digest="edges")
            pairs._views[graph] = {graph.device: PairIndex(src, dst, "edges", (pairs.first, pairs.second))}
            return pairs

        return graph.cached(("pairs", "edges"), build)

    def index(self, graph: Any, device: Device) -> PairIndex:
        """The pairs as internal indices of ``graph`` on ``device`` (computed once per graph and device)."""
        views = self._views.setdefault(graph, {})
        if graph.device not in views:
            views[graph.device] = self._resolve(graph)
        if device not in views:
            home = views[graph.device]
            views[device] = PairIndex(to_device(home.first, device), to_device(home.second, device), home.digest,
                                      home.ids)
        return views[device]

    def require_rows(self) -> None:
        """An empty pairs input is an error (a call with nothing to score is a mistake upstream)."""
        if len(self) == 0:
            raise InputError(f"the {self.what} is empty: give at least one (first, second) row, or leave "
                             f"pairs out to score every edge of the graph")

    def _resolve(self, graph: Any) -> PairIndex:
        self.require_rows()
        first, second = (self._internal(graph, ids) for ids in (self.first, self.second))
        same_family = all(device_of(c) is graph.device for c in (self.first, self.second))
        return PairIndex(first, second, self._digest or _digest(first, second),
                         (self.first, self.second) if same_family else None)

    def _internal(self, graph: Any, ids: Any) -> Any:
        if graph.ids.kind == "integer":
            ids = self._as_integers(ids)
        ids = ids if hasattr(ids, "str") else to_device(ids, graph.device)
        if hasattr(ids, "str"):
            ids = to_family(ids.to_frame(), graph.device).iloc[:, 0]
        pos, unknown = graph.ids.lookup(ids)
        check_known(ids, unknown, self.what)
        return pos

    def require_integers(self) -> None:
        """Both columns integer ids (a graph of integer vertex ids, e.g. a Dask edge frame's): else
        one line naming a few of the strings."""
        for ids in (self.first, self.second):
            self._as_integers(ids)

    def _as_integers(self, ids: Any) -> Any:
        """Ids for a graph of integer vertex ids, as given when they are integers; strings (the
        other kind a pairs column may hold) are an error naming a few, not numpy's comparison of an
        int with a str."""
        import numpy as np

        kind = getattr(getattr(ids, "dtype", None), "kind", "O")
        if kind in "iu":
            return ids
        shown = ", ".join(repr(v) for v in plain_values(ids, np.arange(min(len(ids), 3))))
        by = {"f": "decimal numbers", "b": "true/false values", "c": "complex numbers"}.get(kind, "strings")
        raise InputError(f"the {self.what} names vertices by {by} (e.g. {shown}); the graph's vertex ids are "
                         f"integers: give the pairs as those integers")


# Rows whose ids an error about unknown vertex ids reads to count the distinct ones (beyond: "at least").
UNKNOWN_READ = 1_000_000


def check_known(ids: Any, unknown: Any, what: str) -> None:
    """Raise, naming a few of them and counting the distinct ones, when any of ``ids`` is
    ``unknown`` (a mask) to the graph."""
    if bool(unknown.any()):
        bad = device_of(unknown).xp.flatnonzero(unknown)
        distinct = list(dict.fromkeys(plain_values(ids, bad[:UNKNOWN_READ])))
        count = f"{len(distinct):,}" if len(bad) <= UNKNOWN_READ else f"at least {len(distinct):,}"
        shown = ", ".join(repr(v) for v in distinct[:5])
        raise InputError(f"the {what} names {count} vertex id(s) that are not in the graph, in {len(bad):,} of its "
                         f"rows (e.g. {shown}); drop those rows or add the vertices to the graph")


def _digest(first: Any, second: Any) -> str:
    """A content fingerprint of index pairs (count and two mixed sums), for workload caches."""
    xp = device_of(first).xp
    a, b = first.astype(xp.uint64), second.astype(xp.uint64)
    mix = (a * xp.uint64(0x9E3779B97F4A7C15)) ^ (b * xp.uint64(0xC2B2AE3D27D4EB4F))
    return f"{len(first)}:{int(mix.sum())}:{int((mix >> xp.uint64(29)).sum())}"


def as_pairs(obj: Any) -> "Pairs":
    """A :class:`Pairs` from what a caller may pass for a ``pairs`` input."""
    from graphops.model.graph import Graph

    if isinstance(obj, Pairs):
        return obj
    if isinstance(obj, Graph):
        return Pairs.from_graph(obj)
    if hasattr(obj, "columns") and hasattr(obj, "iloc"):
        return Pairs.from_frame(obj)
    raise InputTypeError(f"pairs must be a pandas or cuDF frame (columns first, second), a graphops.Graph "
                         f"whose edges are the pairs, or graphops.model.pairs.Pairs; got {type(obj).__name__}")
