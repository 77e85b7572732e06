"""Graphs whose edge frame is a Dask DataFrame (``dask_cudf`` or pandas partitions), never
gathered in one place: ``Graph.from_edgelist(ddf)`` with a Dask frame gives a :class:`DaskGraph`.
It runs on a Dask client's workers, cut into column slices (:mod:`graphops.engine.slices`), by
the algorithms that declare a split for it (``jaccard``).
"""
from __future__ import annotations

from typing import Any

from graphops.base.device import Device, device_of
from graphops.errors import InputError

__all__ = ["DaskGraph", "is_dask_frame"]


def is_dask_frame(obj: Any) -> bool:
    """Whether ``obj`` is a Dask DataFrame (dask.dataframe or dask_cudf), without importing Dask."""
    return type(obj).__module__.split(".")[0] in ("dask", "dask_cudf", "dask_expr") and hasattr(obj, "npartitions")


class DaskGraph:
    """An undirected (or symmetrized) graph held as a Dask edge frame of integer vertex ids.

    It is a description, not data in this process: it runs only with ``client=`` (see the module
    docstring). Its device is its partitions' family: cuDF partitions (``dask_cudf``) are GPU
    data, pandas ones CPU data; the result of a call is a Dask frame of the same family.
    """

    kind = "daskgraph"  # what Params.check_declared reads, as of a pipeline's declared graph
    weighted = False
    proxied = False
    # files read by the workers: a call that finds, when they could not read them, the line at fault
    # (its one-line message) or None (graphops.io.partitioned)
    explain_unread: Any = None

    def __init__(self, edges: Any, src: str, dst: str, directed: bool):
        self.edges, self.src, self.dst, self.directed = edges, src, dst, bool(directed)

    @classmethod
    def from_edgelist(cls, ddf: Any, src: str = "src", dst: str = "dst", weight: str | None = None,
                      directed: bool = False) -> "DaskGraph":
        import numpy as np

        from graphops.errors import InputTypeError
        from graphops.model.frames import _is_frame, _numpy_dtype, check_columns

        if not _is_frame(ddf):
            raise InputTypeError(f"a Dask edge frame is a dask.dataframe or dask_cudf DataFrame with src and dst "
                                 f"columns; got {type(ddf).__module__}.{type(ddf).__name__}")
        missing = [c for c in (src, dst) if c not in ddf.columns]
        if missing:
            raise InputError(f"the Dask edge frame has no column(s) {missing}; its columns are {list(ddf.columns)}. "
                             f"Name the id columns with src=... and dst=...")
        check_columns(ddf, {"src": src, "dst": dst}, "Dask edge frame")  # each once, one role each
        if weight is not None:
            raise InputError("a Dask edge frame makes an unweighted graph (no algorithm on column slices uses "
                             "weights yet); drop weight=, or build a Graph from ddf.compute() to use them")
        for role, col in (("src", src), ("dst", dst)):
            dtype = ddf[col].dtype
            if (np.dtype(str(dtype).lower()).kind if _numpy_dtype(ddf[col]) else "U") not in "iu":
                raise InputError(f"{role} column {col!r} of the Dask edge frame has dtype {dtype}; a graph on a "
                                 f"Dask frame takes integer vertex ids. Map names to integers first (e.g. with "
                                 f"categorize()), or build a Graph from ddf.compute()")
        return cls(ddf[[src, dst]], src, dst, directed)

    @property
    def device(self) -> Device:
        return device_of(self.edges._meta)

    @property
    def npartitions(self) -> int:
        return int(self.edges.npartitions)

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return f"DaskGraph({kind}, {self.npartitions} partition(s) of {self.device.value} frames)"
