"""jaccard on a Dask cluster: the pairs cut into ranges of about equal work (d_u + d_v + 1 per
pair), each range scored by the chosen backend on a worker that holds the whole graph, the
frames put back together in pair order (:mod:`graphops.cluster`)."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from graphops.cluster import PARTS_PER_WORKER, Part, Split
from graphops.device import Device, to_device
from graphops.pairs import Pairs

__all__ = ["split"]


def _pairs(inputs: Mapping[str, Any]) -> Pairs:
    given = inputs.get("pairs")
    return Pairs.edges_of(inputs["graph"]) if given is None else given


def split(inputs: Mapping[str, Any], params: Any, workers: int) -> Split:
    from graphops.work import even_ranges

    graph = inputs["graph"]
    index = _pairs(inputs).index(graph, graph.device)  # on the graph's own device; the costs come here
    xp = graph.device.xp
    deg = xp.diff(graph.csr().indptr)
    cost = to_device(xp.cumsum(deg[index.first] + deg[index.second] + 1.0), Device.CPU)
    work = np.concatenate([[0.0], cost])
    ranges = even_ranges(len(index), workers * PARTS_PER_WORKER, work)
    return Split([Part((lo, hi), float(work[hi] - work[lo])) for lo, hi in ranges], run, merge)


def run(inputs: Mapping[str, Any], params: Any, backend: str, select: tuple[int, int]) -> Any:
    from graphops.dispatch import execute
    from graphops.registry import get_registry

    lo, hi = select
    algo = get_registry().algorithm("jaccard")
    return execute(algo, {"graph": inputs["graph"], "pairs": _pairs(inputs).slice(lo, hi)}, backend, params).result


def merge(values: list[Any]) -> Any:
    first = values[0]
    if type(first).__module__.split(".")[0] == "cudf":
        import cudf

        return cudf.concat(values, ignore_index=True)
    from graphops.device import host_pandas

    return host_pandas().concat(values, ignore_index=True)
