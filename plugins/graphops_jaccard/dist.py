"""jaccard on a Dask cluster (:mod:`graphops.engine.cluster`).

* A :class:`Graph`: the pairs (every distinct edge, or those given) are made once, here, and cut
  into ranges of about equal work (:func:`.common.pair_work`: the kernels' list entries read);
  each range's internal indices go to one worker only (kept there for the next call), which
  scores them. With graphops' own kernels (``cpu``, ``gpu``) the workers are sent only the set
  adjacency the kernels read (indptr and sorted, duplicate-free indices: about 4 bytes an edge
  end), not the graph with its edge frame and ids; another backend's workers get the whole
  graph. Only the coefficients come back; the frame is made here, beside the pairs this process
  holds.
* A :class:`~graphops.model.daskgraph.DaskGraph` (a Dask edge frame): never gathered. It is cut into
  one column slice per worker. When the whole set adjacency fits a worker (4 bytes an entry, a
  share of its memory: :data:`graphops.engine.slices.WHOLE_SHARE`), the slices are put together
  on each worker holding a slice's edges, once, and each slice's distinct edges are counted there
  in one task. Otherwise the edges living in slice ``s`` get their shared counts
  ``|N_t(u) ∩ N_t(v)|`` from every slice ``t`` (tasks where slice ``t`` is, the kernels' count
  mode) and the counts are summed. J = c / (d_u + d_v - c) is formed as the kernels form it;
  the result is a Dask frame of the graph's family in edge-frame order.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

from graphops.plugin import (DaskGraph, Device, Distributed, InputError, Kept, PARTS_PER_WORKER, PairIndex, Pairs, Part,
                             Split, add_up, column_slices, device_of, frame_on, in_input_order, new_frame,
                             rows_by_cost, run_kernel, run_part, stoppable, to_device, whole_adjacency)

from .common import pair_work, require_default_pairs, result

__all__ = ["split"]


def _pairs(inputs: Mapping[str, Any]) -> Pairs:
    given = inputs.get("pairs")
    return Pairs.edges_of(inputs["graph"]) if given is None else given


# The backends whose parts run jaccard's own kernels on the set adjacency sent to the workers; any
# other backend's parts run it on the whole graph, sent to every worker.
OWN_KERNELS = ("cpu", "gpu")


def split(inputs: Mapping[str, Any], params: Any, workers: int, backend: str = "gpu") -> Split | Distributed:
    require_default_pairs(params, f"{backend} on a Dask cluster")
    graph = inputs["graph"]
    if isinstance(graph, DaskGraph):
        pairs = inputs.get("pairs")
        if pairs is not None:
            pairs.require_rows()
            if any(hasattr(c, "str") for c in (pairs.first, pairs.second)):
                raise InputError("the pairs name vertices by strings; a graph on a Dask edge frame has integer "
                                 "vertex ids. Give the pairs as those integers")
        return Distributed(sliced)
    index = _pairs(inputs).index(graph, graph.device)  # made once, here, on the graph's own device
    gpu, weighted = backend != "cpu", bool(params.use_weight)  # the kernels whose work the parts balance
    key = ("cluster parts", workers * PARTS_PER_WORKER, gpu, weighted)
    if key not in index.extra:  # the same cut for the next call with as many workers
        xp = graph.device.xp
        deg = xp.diff(graph.csr().indptr)
        work = pair_work(xp, deg[index.first], deg[index.second], gpu, weighted)  # where it is
        index.extra[key] = [Part(p.select, p.cost, PairIndex(index.first[p.select[0]:p.select[1]],
                                                             index.second[p.select[0]:p.select[1]],
                                                             f"{index.digest}{p.select}"))
                            for p in rows_by_cost(work, key[1])]
    sent = {"adjacency": _adjacency(graph, params)} if backend in OWN_KERNELS else None
    return Split(index.extra[key], run, _Merge(index), views=(index,), sent=sent, keep_with=index)


def _adjacency(graph: Any, params: Any) -> Any:
    """The set adjacency the parts score on (cached on the graph's CSR, as a call here caches it)."""
    from .common import adjacency

    csr, module = graph.csr(), _module(graph.device)
    key = ("jaccard_sent", bool(params.symmetrize), bool(params.use_weight))  # one object: kept on the workers
    return csr.cached(key, lambda: adjacency(csr, params.symmetrize, params.use_weight, module.row_sums))


def _module(device: Device) -> Any:
    if device is Device.GPU:
        from . import gpu

        return gpu
    from . import cpu

    return cpu


def run(algorithm: Any, inputs: Mapping[str, Any], params: Any, backend: str, select: tuple[int, int],
        data: PairIndex) -> Any:
    """On a worker: the coefficients of the part's pairs (``data``: their internal indices; the
    client has the pairs), by jaccard's kernels on the set adjacency sent, or by the backend on
    the whole graph. (Sending back the shared counts as 2 bytes a pair instead, J formed by the
    client, was slower: R-MAT 22 on 2 H200s 208 ms against 173 ms, the packing and unpacking
    costing more than the 385 MB it saved.)"""
    if "adjacency" not in inputs:
        return run_part(algorithm, {"graph": inputs["graph"], "pairs": data}, params, backend,
                        wrap=False)["jaccard_coeff"]
    device = Device.GPU if algorithm.backends[backend].device == "gpu" else Device.CPU
    adj, pairs = (_on(obj, device) for obj in (inputs["adjacency"], data))
    return run_kernel(algorithm, backend, _module(device).coefficients, adj, pairs.first, pairs.second)


_MOVED = Kept()  # on a worker: a sent object -> its copy on this worker's device, while the object lives


def _on(obj: Any, device: Device) -> Any:
    """On a worker: an adjacency or pair slice sent from another device, moved to this one once
    (kept while the sent object is)."""
    first = obj.indptr if hasattr(obj, "indptr") else obj.first
    if device_of(first) is device:
        return obj
    moved = _MOVED.get(obj)
    if moved is None:
        fields = {f.name: None if getattr(obj, f.name) is None else to_device(getattr(obj, f.name), device)
                  for f in dataclasses.fields(obj) if f.name not in ("digest", "ids", "extra")}
        moved = _MOVED.setdefault(obj, dataclasses.replace(obj, **fields))
    return moved


@dataclass(frozen=True)
class _Merge:
    """The parts' coefficients in pair order beside the pairs the client already holds: only
    8 bytes a pair come back from the workers, not the pair columns."""

    index: PairIndex

    def __call__(self, values: list[Any]) -> dict[str, Any]:
        home = device_of(self.index.first)
        xp = home.xp
        coeff = xp.concatenate([to_device(v, home) for v in values]) if values else xp.empty(0, xp.float64)
        return result(self.index, coeff)  # (no pairs, no parts: every backend gives float64)


def sliced(client: Any, inputs: Mapping[str, Any], params: Any, backend: str, workers: int,
           stop: str) -> tuple[list, Any]:
    """Submit the column-slice tasks (module docstring); ``(futures, finish)``."""
    if backend not in ("cpu", "gpu"):
        raise InputError(f"jaccard on a Dask edge frame runs the 'cpu' or 'gpu' backend on each slice; "
                         f"got backend={backend!r}")
    graph = inputs["graph"]
    sl = column_slices(client, graph, workers)
    sub = client.submit
    if inputs.get("pairs") is not None:
        return _given_pairs(client, sl, inputs["pairs"], backend, stop)
    whole = whole_adjacency(sl)  # each slice's edges counted where they are, when the whole adjacency fits
    scored = []
    for s in range(workers):
        counts = [sub(stoppable, stop, _shared, adjacency, sl.edges[s], backend, pure=False)
                  for adjacency in ([whole[s]] if whole else sl.adjacency)]
        scored.append(sub(_score, sl.edges[s], sl.positions[s], sl.degrees, *counts,
                          pure=False))
    futures, frame = in_input_order(sl, scored, _meta(graph.device))
    return futures, lambda: frame


def _meta(device: Device) -> Any:
    xp = device.xp
    empty = xp.zeros(0, xp.int64)
    return new_frame(device, {"first": empty, "second": empty, "jaccard_coeff": xp.zeros(0, xp.float64)})


def _given_pairs(client: Any, sl: Any, pairs: Pairs, backend: str, stop: str) -> tuple[list, Any]:
    """Explicit pairs on column slices: the pairs go to every slice's worker, each counts their
    shared neighbours within its slice, the counts are summed; one partition, in pair order."""
    sub = client.submit
    home = sl.graph.device
    sent = client.scatter(pairs, broadcast=True, hash=False)
    index = sub(_pair_index, sent, sl.ids, pure=False)
    counts = [sub(stoppable, stop, _shared, adjacency, index, backend, pure=False) for adjacency in sl.adjacency]
    out = sub(_score_pairs, sent, index, sl.degrees, sl.ids, home, *counts, pure=False)
    frame = frame_on([out], _meta(home))
    return [out], lambda: frame


def _pair_index(pairs: Pairs, ids: Any) -> tuple[Any, Any]:
    """On a worker: the pairs as indices into the sorted distinct ids (unknown ids: the error of
    one process)."""
    from graphops.plugin import IdMap
    from graphops.plugin import check_known

    device, known = device_of(ids), IdMap(ids)
    out = []
    for col in (pairs.first, pairs.second):
        pos, unknown = known.lookup(to_device(col, device).astype(device.xp.int64))
        check_known(col, unknown, pairs.what)
        out.append(pos)
    return out[0], out[1]


def _coefficients(pairs: tuple[Any, Any], degrees: Any, counts: tuple[Any, ...]) -> tuple:
    """On a worker: the per-slice shared counts of ``pairs`` (internal indices) summed, and J
    formed as the kernels form it (shared / union, or 0); ``(first, second, J)`` on the counts'
    device."""
    device = device_of(counts[0])
    xp = device.xp
    c = add_up(*(to_device(x, device) for x in counts))
    first, second = (to_device(a, device) for a in pairs)
    deg = to_device(degrees, device)
    union = (deg[first] + deg[second]).astype(xp.float64) - c
    empty = union == 0
    return first, second, xp.where(empty, 0.0, c / xp.where(empty, 1.0, union))


def _score_pairs(pairs: Pairs, index: tuple[Any, Any], degrees: Any, ids: Any, home: Device, *counts: Any) -> Any:
    """On a worker: the pairs with J, by the caller's ids (its own arrays when of the graph's family)."""
    first, second, coeff = _coefficients(index, degrees, counts)
    ids = to_device(ids, device_of(coeff))
    named = [col if device_of(col) is home else ids[i] for col, i in zip((pairs.first, pairs.second), (first, second))]
    return new_frame(home, {"first": named[0], "second": named[1], "jaccard_coeff": coeff})


def _shared(adjacency: tuple[Any, Any], edges: tuple[Any, Any], backend: str) -> Any:
    """On a worker: |N_t(u) ∩ N_t(v)| of a slice's edges in slice t's adjacency (float64, exact)."""
    from .common import Adjacency

    device = Device.GPU if backend == "gpu" else Device.CPU
    adj = Adjacency(*(to_device(a, device) for a in adjacency))
    first, second = (to_device(a, device).astype(device.xp.int64) for a in edges)
    if device is Device.GPU:
        from . import gpu

        return gpu.coefficients(adj, first, second, shared=True)
    from . import cpu

    return cpu.coefficients(adj, first, second, shared=True)


def _score(edges: tuple[Any, Any], positions: Any, degrees: Any, *counts: Any) -> dict[str, Any]:
    """On a worker: J of the slice's edges beside their input positions (their ids are taken
    where the input partitions are: :func:`in_input_order`)."""
    coeff = _coefficients(edges, degrees, counts)[2]
    return {"position": to_device(positions, device_of(coeff)), "jaccard_coeff": coeff}
