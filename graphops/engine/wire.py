"""How Dask sends graphops' objects: field by field.

A :class:`~graphops.Graph`, :class:`~graphops.GraphSet`, id map or pair list that Dask pickled
whole would take every CuPy array and cuDF frame in it through host memory (their pickle copies
them off the device). Registered here, Dask serializes each field with the serializers of the
connection instead: over ucx ("cuda" family) device arrays and frames go as device buffers, GPU to
GPU; over tcp ("dask" family) as host buffers without a pickle copy. What an object drops when
pickled (its cached views) it drops here too (``__getstate__``), and ``__setstate__`` runs where
it arrives.

Both ends must know this path. A cluster call runs :func:`register_on` its client: here, and on
every worker of the client (a worker plugin, so also on workers that join later). Importing
graphops in a process that already runs Dask registers it there too (a user's own
``client.scatter(graph)`` then travels the same way). Only cluster code imports this module.
"""
from __future__ import annotations

import functools
import pickle
import weakref
from typing import Any

from distributed import WorkerPlugin

__all__ = ["register", "register_on"]

_registered = False
_CLIENTS: "weakref.WeakSet[Any]" = weakref.WeakSet()  # clients whose workers have the plugin


def _classes() -> tuple[type, ...]:
    from graphops.model.graph import Graph
    from graphops.model.graphset import GraphSet
    from graphops.model.ids import IdMap
    from graphops.engine.parts import Shipped
    from graphops.model.pairs import PairIndex, Pairs

    return Graph, GraphSet, IdMap, Pairs, PairIndex, Shipped  # Shipped: its subclasses too (Dask looks up the MRO)


def _dumps(family: str, obj: Any) -> tuple[dict, list]:
    from distributed.protocol import serialize

    getstate = getattr(obj, "__getstate__", None)  # object's own from Python 3.11
    state = getstate() if getstate is not None else obj.__dict__
    header, frames = serialize(dict(state or {}), serializers=(family, "pickle"), on_error="raise",
                               iterate_collection=True)
    return {"class": pickle.dumps(type(obj)), "state": header}, frames


def _loads(header: dict, frames: list) -> Any:
    from distributed.protocol import deserialize

    cls = pickle.loads(header["class"])
    state = deserialize(header["state"], frames)
    obj = cls.__new__(cls)
    if hasattr(obj, "__setstate__"):
        obj.__setstate__(state)
    else:
        obj.__dict__.update(state)
    return obj


def register() -> None:
    """Teach this process's Dask to send graphops' objects field by field (once)."""
    global _registered
    if _registered:
        return
    from distributed.protocol import dask_deserialize, dask_serialize

    families = [("dask", dask_serialize, dask_deserialize)]
    try:
        from distributed.protocol.cuda import cuda_deserialize, cuda_serialize
    except ImportError:  # pragma: no cover - distributed without its cuda family
        pass
    else:
        families.append(("cuda", cuda_serialize, cuda_deserialize))
    for family, dumps, loads in families:
        for cls in _classes():
            dumps.register(cls)(functools.partial(_dumps, family))
            loads.register(cls)(_loads)
    _registered = True


class _Register(WorkerPlugin):
    """Runs :func:`register` on each worker of a client, those that join later included."""

    def setup(self, worker: Any) -> None:
        register()


def register_on(client: Any) -> None:
    """Send graphops' objects field by field between this process and ``client``'s workers."""
    register()
    if client not in _CLIENTS:
        client.register_plugin(_Register(), name="graphops-wire")
        _CLIENTS.add(client)
