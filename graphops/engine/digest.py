"""Content digests of what a call reads: a graph (its edge and node frames), a set of graphs (its
arrays), a pair list, a result (a frame or an array): the same data gives the same digest in any
process on any machine, whichever device it lives on (it is read back to the host to be hashed).

A frame column is hashed by name, dtype and values (``pandas.util.hash_pandas_object`` with its fixed
key, so text ids hash alike everywhere); an array by dtype, shape and bytes. A digest is kept on the
object it was made for (graphs and sets do not change once built). A Dask graph has none: its
partitions are never in one place.
"""
from __future__ import annotations

import dataclasses
import hashlib
import weakref
from typing import Any

__all__ = ["digest", "Undigestible"]

_KEPT: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()


class Undigestible(TypeError):
    """What cannot be digested (a Dask graph, an object of no known kind), and why."""


def digest(obj: Any) -> str:
    """A hex digest (128 bits) of ``obj``'s content."""
    try:
        kept = _KEPT.get(obj)
    except TypeError:  # not weakly referable (an array, a tuple): not kept
        kept = None
    if kept is not None:
        return kept
    h = hashlib.blake2b(digest_size=16)
    _feed(h, obj)
    out = h.hexdigest()
    try:
        _KEPT[obj] = out
    except TypeError:
        pass
    return out


def _feed(h: Any, obj: Any) -> None:
    from graphops.model.daskgraph import DaskGraph
    from graphops.model.graph import Graph
    from graphops.model.graphset import GraphSet
    from graphops.model.pairs import Pairs

    if obj is None:
        h.update(b"none;")
    elif isinstance(obj, DaskGraph):
        raise Undigestible("a Dask graph's partitions are never in one place to be hashed")
    elif isinstance(obj, Graph):
        h.update(f"graph;directed={obj.directed};".encode())
        _feed(h, obj.edges)
        _feed(h, getattr(obj, "nodes", None))
    elif isinstance(obj, GraphSet):
        h.update(b"graphset;")
        for f in dataclasses.fields(obj):
            h.update(f"{f.name}=".encode())
            _feed(h, getattr(obj, f.name))
    elif isinstance(obj, Pairs):
        h.update(b"pairs;")
        _feed(h, obj.first)
        _feed(h, obj.second)
    elif isinstance(obj, dict):
        h.update(f"dict{len(obj)};".encode())
        for key in sorted(obj, key=str):
            h.update(f"{key}=".encode())
            _feed(h, obj[key])
    elif isinstance(obj, (list, tuple)):
        h.update(f"seq{len(obj)};".encode())
        for item in obj:
            _feed(h, item)
    elif isinstance(obj, (bool, int, float, str)):
        h.update(f"{type(obj).__name__}:{obj!r};".encode())
    elif hasattr(obj, "columns") and hasattr(obj, "dtypes"):  # a pandas or cuDF frame
        h.update(f"frame{len(obj)};".encode())
        for name in obj.columns:
            h.update(f"col:{name}:{obj[name].dtype};".encode())
            _feed_column(h, obj[name])
    elif hasattr(obj, "iloc") and hasattr(obj, "dtype"):  # a pandas or cuDF Series
        h.update(f"series{len(obj)}:{obj.dtype};".encode())
        _feed_column(h, obj)
    elif hasattr(obj, "dtype") and hasattr(obj, "shape"):  # a NumPy or CuPy array
        import numpy as np

        from graphops.base.device import Device, to_device

        a = np.ascontiguousarray(to_device(obj, Device.CPU))
        h.update(f"array:{a.dtype.str}:{a.shape};".encode())
        if a.dtype.kind == "O":
            raise Undigestible("an array of Python objects has no stable bytes")
        h.update(a.view(np.uint8).reshape(-1).data if a.size else b"")
    else:
        raise Undigestible(f"no digest for a {type(obj).__name__}")


def _feed_column(h: Any, column: Any) -> None:
    """A Series' values: numbers by their bytes, anything else by pandas' fixed-key row hashes."""
    import numpy as np
    import pandas as pd

    host = column.to_pandas() if hasattr(column, "to_pandas") else column
    values = host.to_numpy()
    if values.dtype.kind in "biufcmM" and not host.isna().any():
        a = np.ascontiguousarray(values)
        h.update(a.view(np.uint8).reshape(-1).data if a.size else b"")
    else:
        try:
            hashed = pd.util.hash_pandas_object(host, index=False).to_numpy()
        except TypeError as exc:  # values pandas cannot hash (lists, dicts in an object column)
            kind = type(values[0]).__name__ if len(values) else "?"
            raise Undigestible(f"a column of {kind} values ({exc})") from None
        h.update(np.ascontiguousarray(hashed).data)
