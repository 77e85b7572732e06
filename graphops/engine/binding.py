"""Binding a call's inputs to an algorithm's slots: by position or name, each checked against
the kinds its slot takes, a networkx graph read as a :class:`Graph` and a list of graphs as a
:class:`GraphSet`; anything else is named in full beside what is accepted."""
from __future__ import annotations

import sys
from typing import Any, Mapping, Sequence

import numpy as np

from graphops.errors import InputError, InputTypeError
from graphops.host.algorithm import Algorithm, Input
from graphops.model.daskgraph import DaskGraph, is_dask_frame
from graphops.model.graph import Graph
from graphops.model.graphset import GraphSet
from graphops.model.pairs import Pairs, as_pairs

__all__ = ["bind_inputs", "as_graphset", "type_name"]

_KIND = {Graph: "graph", GraphSet: "graphset", Pairs: "pairs", DaskGraph: "daskgraph"}


def bind_inputs(algo: Algorithm, args: Sequence[Any], by_name: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Map positional (and keyword) inputs to the algorithm's slots, checking count and kind."""
    slots = algo.inputs
    given = dict(zip([s.name for s in slots], args))
    for name, obj in ((algo.renamed(k), v) for k, v in (by_name or {}).items()):
        if name in given:
            raise InputTypeError(f"{algo.name}: input {name!r} given twice (by position and by keyword)")
        given[name] = obj
    empty = [s for s in slots if s.required and s.name in given and given[s.name] is None]
    if empty:
        raise InputTypeError(f"{algo.name}: input {empty[0].name!r} is None; it takes a "
                             f"{' or a '.join(empty[0].kinds)}")
    missing = [s.name for s in slots if s.required and s.name not in given]
    if len(args) > len(slots) or missing:
        want = ", ".join(s.name + ("" if s.required else "?") for s in slots)
        raise InputTypeError(f"{algo.name} takes inputs ({want}); got {len(args)} input(s)")
    bound = {}
    for slot in slots:
        if slot.name in given and given[slot.name] is not None:
            bound[slot.name] = _bind(algo, slot, given[slot.name])
    return bound


def type_name(obj: Any) -> str:
    """``networkx.classes.graph.Graph``, ``list``: what an object is, in full, for messages."""
    cls = type(obj)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def _is_networkx(obj: Any) -> bool:
    nx = sys.modules.get("networkx")
    return nx is not None and isinstance(obj, nx.Graph)


def _converted(slot: Any, obj: Any) -> Any:
    """A networkx graph as a :class:`Graph`, a list (tuple, array) of networkx graphs or of Graphs
    as a :class:`GraphSet`, for a slot that takes one (as ``from_networkx``/``from_graphs`` do)."""
    if _is_networkx(obj) and "graph" in slot.kinds:
        return Graph.from_networkx(obj)
    if isinstance(obj, (list, tuple)) or (isinstance(obj, np.ndarray) and obj.dtype == object and obj.ndim == 1):
        items = list(obj)
        if "graphset" in slot.kinds and items and all(_is_networkx(g) for g in items):
            return GraphSet.from_networkx(items)
        if "graphset" in slot.kinds and items and all(isinstance(g, Graph) for g in items):
            return GraphSet.from_graphs(items)
    return obj


def _accepted(slot: Any) -> str:
    kinds = {"graph": "a graphops.Graph or a networkx graph",
             "graphset": "a graphops.GraphSet or a list of networkx graphs or of graphops.Graph objects",
             "pairs": "a frame of vertex pairs", "daskgraph": "a graphops.DaskGraph",
             "matrix": "a 2-D NumPy or CuPy array (e.g. a Gram matrix)"}
    return ", or ".join(kinds[k] for k in slot.kinds)


def _given(obj: Any) -> str:
    """What was given, for messages: a type's full name, or what a list holds."""
    if isinstance(obj, (list, tuple)):
        kinds = sorted({type_name(x) for x in obj})
        what = type_name(obj)
        return f"an empty {what}" if not kinds else f"a {what} of {' and '.join(kinds)}"
    return type_name(obj)


def as_graphset(obj: Any, who: str) -> GraphSet:
    """``obj`` as a :class:`GraphSet` the way a Gram input slot reads it (a GraphSet, or a
    list, tuple or object array of networkx graphs or of Graphs); ``who`` names the caller in
    the error for anything else."""
    if not isinstance(obj, (str, bytes, GraphSet)) and hasattr(obj, "__len__") and len(obj) == 0:
        raise InputError(f"{who}: no graphs (an empty {type(obj).__name__}); it needs at least one")
    got = _converted(Input("graphs", kinds=("graphset",)), obj)
    if not isinstance(got, GraphSet):
        raise InputTypeError(f"{who} takes {_accepted(Input('graphs', kinds=('graphset',)))}; got {_given(obj)}")
    return got


def is_matrix(obj: Any) -> bool:
    """A 2-D NumPy or CuPy array (a ``matrix`` input), not a frame."""
    return hasattr(obj, "shape") and hasattr(obj, "dtype") and len(obj.shape) == 2 and not hasattr(obj, "columns")


def _bind(algo: Algorithm, slot: Any, obj: Any) -> Any:
    if "matrix" in slot.kinds and is_matrix(obj):
        return obj
    obj = _converted(slot, obj)
    kind = _KIND.get(type(obj))
    if kind == "daskgraph" and kind in slot.kinds:
        return obj
    if kind == "daskgraph" or is_dask_frame(obj):
        from graphops.host.registry import get_registry

        raise InputTypeError(f"{algo.name}: input {slot.name!r} cannot be a Dask frame or DaskGraph; a Dask edge "
                             f"frame is a graph input (graphops.Graph.from_edgelist(ddf)) of algorithms that run "
                             f"on column slices ({get_registry().taking('daskgraph')}), or compute() it first")
    if "pairs" in slot.kinds and kind != "graphset":
        return as_pairs(obj)
    if kind not in slot.kinds:
        hint = " (one graph: pass a list of it, [G])" if _is_networkx(obj) or isinstance(obj, Graph) else ""
        raise InputTypeError(f"{algo.name}: input {slot.name!r} takes {_accepted(slot)}; got {_given(obj)}{hint}. Build a "
                             f"Graph with graphops.Graph.from_edgelist(df) or graphops.read_graph(path), a GraphSet "
                             f"with graphops.read_tu(path) or graphops.GraphSet.from_graphs(graphs)")
    return obj
