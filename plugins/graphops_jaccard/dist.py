"""jaccard on a Dask cluster: the pairs cut into ranges of about equal work (d_u + d_v + 1 per
pair), each range scored by the chosen backend on a worker that holds the whole graph, the
frames put back together in pair order (:mod:`graphops.cluster`)."""
from __future__ import annotations

from typing import Any, Mapping

from graphops.cluster import PARTS_PER_WORKER, Split, rows_by_cost
from graphops.device import Device, device_of, to_device
from graphops.pairs import Pairs

__all__ = ["split"]


def _pairs(inputs: Mapping[str, Any]) -> Pairs:
    given = inputs.get("pairs")
    return Pairs.edges_of(inputs["graph"]) if given is None else given


def split(inputs: Mapping[str, Any], params: Any, workers: int) -> Split:
    graph = inputs["graph"]
    index = _pairs(inputs).index(graph, graph.device)  # on the graph's own device; the costs come here
    deg = graph.device.xp.diff(graph.csr().indptr)
    work = to_device(deg[index.first] + deg[index.second] + 1.0, Device.CPU)
    return Split(rows_by_cost(work, workers * PARTS_PER_WORKER), run, merge)


def run(inputs: Mapping[str, Any], params: Any, backend: str, select: tuple[int, int]) -> Any:
    from graphops.dispatch import execute
    from graphops.registry import get_registry

    lo, hi = select
    algo = get_registry().algorithm("jaccard")
    return execute(algo, {"graph": inputs["graph"], "pairs": _pairs(inputs).slice(lo, hi)}, backend, params).result


def merge(values: list[Any]) -> Any:
    return device_of(values[0]).xdf.concat(values, ignore_index=True)
