"""jaccard on a Dask cluster (:mod:`graphops.engine.cluster`).

* A :class:`Graph`: the pairs (every distinct edge, or those given) are made once, here, and cut
  into ranges of about equal work (:func:`.common.pair_work`: the kernels' list entries read);
  each range's internal indices go to one worker only (kept there for the next call), which
  scores them. With graphops' own kernels (``cpu``, ``gpu``) the workers are sent only the set
  adjacency the kernels read (indptr and sorted, duplicate-free indices: about 4 bytes an edge
  end), not the graph with its edge frame and ids; another backend's workers get the whole
  graph. Only the coefficients come back (written straight into this process's GPU memory by
  GPU workers on this machine: :mod:`graphops.engine.landing`); the frame is made here, beside
  the pairs this process holds.
* A :class:`~graphops.model.daskgraph.DaskGraph` (a Dask edge frame): never gathered. It is cut into
  one column slice per worker. When the whole set adjacency fits a worker (4 bytes an entry, a
  share of its memory: :data:`graphops.engine.slices.WHOLE_SHARE`), the slices are put together
  on each worker holding a slice's edges, once, the distinct edges are dealt again among those
  workers by each edge's cost (:func:`_gpu_cost`, :func:`_cpu_cost`), and each worker's edges are
  counted there in one task. Otherwise the edges living in slice ``s`` get their shared counts
  ``|N_t(u) ∩ N_t(v)|`` from every slice ``t`` (tasks where slice ``t`` is, the kernels' count
  mode) and the counts are summed. J = c / (d_u + d_v - c) is formed as the kernels form it;
  the result is a Dask frame of the graph's family in edge-frame order.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

from graphops.plugin import (SOON, DaskGraph, Device, Distributed, InputError, Kept, PARTS_PER_WORKER, PairIndex, Pairs,
                             Part, Split, add_up, balanced_edges, phase, column_slices, device_of, frame_on,
                             in_input_order, near, new_frame, rows_by_cost, run_kernel, run_part, stoppable, to_device,
                             whole_adjacency)

from .common import COSINE, JACCARD, MEASURES, OVERLAP, SORENSEN, Mode, pair_work

__all__ = ["split"]


def _pairs(inputs: Mapping[str, Any]) -> Pairs:
    given = inputs.get("pairs")
    return Pairs.edges_of(inputs["graph"]) if given is None else given


# The backends whose parts run jaccard's own kernels on the set adjacency sent to the workers; any
# other backend's parts run it on the whole graph, sent to every worker.
OWN_KERNELS = ("cpu", "gpu")


def split(inputs: Mapping[str, Any], params: Any, workers: int, backend: str = "gpu") -> Split | Distributed:
    graph = inputs["graph"]
    measure = MEASURES[params.measure]
    if isinstance(graph, DaskGraph):  # its params were checked (check_declared): counts, no top_k
        assert params.top_k is None and not Mode(measure.accumulator(bool(params.use_weight))).sums
        pairs = inputs.get("pairs")
        if pairs is not None:
            pairs.require_rows()
            pairs.require_integers()  # a Dask edge frame's vertex ids are integers
        return Distributed(sliced)
    if params.candidates == "two_hop":
        return _two_hop(graph, params, workers, backend)
    index = _pairs(inputs).index(graph, graph.device)  # made once, here, on the graph's own device
    gpu, weighted = backend != "cpu", bool(params.use_weight)  # the kernels whose work the parts balance
    key = ("cluster parts", workers * parts_per_worker(len(index.first), workers), gpu, weighted)
    if key not in index.extra:  # the same cut for the next call with as many workers
        xp = graph.device.xp
        deg = xp.diff(graph.csr().indptr)
        work = pair_work(xp, deg[index.first], deg[index.second], gpu, weighted)  # where it is
        index.extra[key] = [Part(p.select, p.cost, PairIndex(index.first[p.select[0]:p.select[1]],
                                                             index.second[p.select[0]:p.select[1]],
                                                             f"{index.digest}{p.select}"))
                            for p in rows_by_cost(work, key[1])]
    sent = {"adjacency": _adjacency(graph, params)} if backend in OWN_KERNELS else None
    return Split(index.extra[key], run, _Merge(index, measure.column, params.top_k), views=(index,), sent=sent,
                 keep_with=index)


# A part's pairs: about this many (2**25: 256 MB of coefficients), from one to PARTS_PER_WORKER parts
# a worker. Each part costs a Dask task and the kernels' fixed steps (the hub pairs' sort, launches
# per class of hub degree): measured on 4 H100s (2026-11-27), R-MAT 22's 64 M pairs took 108 ms in
# one part a worker (kernels 69-74 ms a worker), 125 ms in two, 151 ms in four (kernels 94-102 ms)
# and 187 ms in eight; more parts only pay where the last parts' coefficients, on their way to the
# caller while no worker computes, would take long.
PART_PAIRS = 1 << 25


def parts_per_worker(pairs: int, workers: int) -> int:
    """How many parts each worker gets for ``pairs`` pairs (:data:`PART_PAIRS`)."""
    per_worker = -(-pairs // max(workers, 1))
    return int(min(max(-(-per_worker // PART_PAIRS), 1), PARTS_PER_WORKER))


def _two_hop(graph: Any, params: Any, workers: int, backend: str) -> Split:
    """Two-hop pairs: the first vertices cut into ranges of about equal wedge count, each range's
    pairs (or its k best) found by one worker on the adjacency sent; their pairs, in order (the
    k best of all)."""
    if backend not in OWN_KERNELS:
        raise InputError(f"{params.measure} with candidates='two_hop' on a Dask cluster runs graphops' own kernels "
                         f"(backend 'cpu' or 'gpu'), not {backend!r}")
    xp = graph.device.xp
    adj = _adjacency(graph, params)
    us = xp.arange(adj.n_vertices, dtype=xp.int64) if params._vertex_index is None else params._vertex_index
    work = adj.wedges(us) + 1  # wedges walked, and the row's own cost
    parts = [Part(p.select, p.cost, us[p.select[0]:p.select[1]]) for p in rows_by_cost(work, workers * PARTS_PER_WORKER)]
    return Split(parts, run_two_hop, _TwoHopMerge(MEASURES[params.measure].column, params.top_k, graph.device),
                 sent={"adjacency": adj})


def _adjacency(graph: Any, params: Any) -> Any:
    """The set adjacency the parts score on (cached on the graph's CSR, as a call here caches it)."""
    from .common import adjacency

    csr, module = graph.csr(), _module(graph.device)
    weighted = bool(params.use_weight and MEASURES[params.measure].weights)
    key = ("jaccard_sent", bool(params.symmetrize), weighted)  # one object: kept on the workers
    return csr.cached(key, lambda: adjacency(csr, params.symmetrize, weighted, module.row_sums))


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
                        wrap=False)[MEASURES[params.measure].column]
    device = Device.GPU if algorithm.backends[backend].device == "gpu" else Device.CPU
    with phase("move", sync=True):  # the adjacency and the part's pairs onto this worker's device (once)
        adj, pairs = (_on(obj, device) for obj in (inputs["adjacency"], data))
    module = _module(device)
    with phase("kernels", sync=True):
        if params.measure == "jaccard":
            return run_kernel(algorithm, backend, module.coefficients, adj, pairs.first, pairs.second)
        return run_kernel(algorithm, backend, module.pair_scores, adj, _tables(adj, params, module), pairs.first,
                          pairs.second)


def run_two_hop(algorithm: Any, inputs: Mapping[str, Any], params: Any, backend: str, select: tuple[int, int],
                data: Any) -> tuple[Any, Any, Any]:
    """On a worker: the two-hop pairs (or the k best) of the part's first vertices ``data``."""
    device = Device.GPU if algorithm.backends[backend].device == "gpu" else Device.CPU
    with phase("move", sync=True):
        adj, module = _on(inputs["adjacency"], device), _module(device)
        us = to_device(data, device)
    upper = params.top_k is not None and params.vertices is None  # each unordered pair once
    with phase("kernels", sync=True):
        return run_kernel(algorithm, backend, module.two_hop, adj, MEASURES[params.measure],
                          _tables(adj, params, module), us, params.top_k, upper)


_TABLES = Kept()  # on a worker: an adjacency -> {measure: its per-vertex tables}


def _tables(adj: Any, params: Any, module: Any) -> Any:
    from .measures import tables

    kept = _TABLES.setdefault(adj, {})
    if params.measure not in kept:
        kept[params.measure] = tables(adj, MEASURES[params.measure], module.row_sums)
    return kept[params.measure]


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
    column: str = "jaccard_coeff"
    top_k: int | None = None

    @property
    def landing(self) -> tuple[int, str]:
        """The parts' coefficients make one float64 array in pair order: GPU workers on this
        machine write theirs into this process's GPU memory (the engine's landing)."""
        return len(self.index.first), "float64"

    @staticmethod
    def lands(select: tuple[int, int]) -> tuple[int, int]:
        """A part's place in that array: its range of pairs, ``(start, count)``."""
        return select[0], select[1] - select[0]

    def __call__(self, values: list[Any]) -> dict[str, Any]:
        from .measures import best_of

        home = device_of(self.index.first)
        xp = home.xp
        coeff = xp.concatenate([to_device(v, home) for v in values]) if values else xp.empty(0, xp.float64)
        # (no pairs, no parts: every backend gives float64)
        first, second = self.index.first, self.index.second
        if self.top_k is not None:
            first, second, coeff = best_of(first, second, coeff, self.top_k)
        return {"first": first, "second": second, self.column: coeff}


@dataclass(frozen=True)
class _TwoHopMerge:
    """The parts' two-hop pairs in order (their ranges of first vertices are in order), or the k
    best of them all."""

    column: str
    top_k: int | None
    home: Device

    def __call__(self, values: list[Any]) -> dict[str, Any]:
        from .measures import best_of

        home, xp = self.home, self.home.xp
        cols = [xp.concatenate([to_device(v[i], home) for v in values]) if values else
                xp.empty(0, xp.float64 if i == 2 else xp.int64) for i in range(3)]
        if self.top_k is not None:
            cols = list(best_of(*cols, self.top_k))
        return {"first": cols[0], "second": cols[1], self.column: cols[2]}


def sliced(client: Any, inputs: Mapping[str, Any], params: Any, backend: str, workers: int,
           stop: str) -> tuple[list, Any]:
    """Submit the column-slice tasks (module docstring); ``(futures, finish)``."""
    if backend not in ("cpu", "gpu"):
        raise InputError(f"jaccard on a Dask edge frame runs the 'cpu' or 'gpu' backend on each slice; "
                         f"got backend={backend!r}")
    graph = inputs["graph"]
    sl = column_slices(client, graph, workers)
    sub = client.submit
    measure = MEASURES[params.measure]
    if inputs.get("pairs") is not None:
        return _given_pairs(client, sl, inputs["pairs"], backend, stop, measure)
    whole = whole_adjacency(sl)  # each slice's edges counted where they are, when the whole adjacency fits
    # on the whole adjacency, each worker's edges are dealt by their cost, in pieces counted one
    # after another (a piece's values travel while the next is counted); slice by slice, every
    # worker counts every edge on its columns, and the edges stay where they were made
    per_worker = PIECES_PER_WORKER if whole else 1
    edges, positions = balanced_edges(sl, _gpu_cost if backend == "gpu" else _cpu_cost, per_worker) if whole else (
        sl.edges, sl.positions)
    homes = client.who_has(whole) if whole else {}
    scored = []
    for j in range(len(edges)):
        s = j // per_worker
        pin = near(homes, whole[s]) if whole else {}
        counts = [sub(stoppable, stop, _shared, adjacency, edges[j], backend, key=_key("shared"), **pin)
                  for adjacency in ([whole[s]] if whole else sl.adjacency)]
        scored.append(sub(_score, edges[j], sl.degrees, measure, *counts, pure=False, priority=SOON, **pin))
    futures, frame = in_input_order(sl, positions, scored, _meta(graph.device, measure.column))
    return futures, lambda: frame


# An edge's cost in a worker's shared counts beyond its pair_work (list entries read), for
# balanced_edges. Fitted on 4 H100s (2026-11-27), R-MAT 25's four column slices (51 to 199 M edges,
# each counted alone on the whole adjacency): 6.2 ps a pair_work entry and 0.82 ns an edge, within
# 3% of each slice's time. Checked the next day on the same graph, each worker's edges counted alone:
# dealt by pair_work + 132, 1.41-1.46 s; by pair_work alone, 1.41-1.52 s; the slices as cut,
# 1.03-1.72 s.
SLICE_EDGE_COST = 132.0


# Pieces of each worker's edges on the whole adjacency: each piece's values leave for the
# partitions' workers while the next piece is counted. Measured on 4 H100s (2026-11-28), R-MAT 25:
# calls of 1.81-1.93 s in one piece a worker, 1.95-1.98 s in two, 2.06-2.26 s in four (the
# values' transfers took longer the more pieces there were: 0.07-0.18 s, 0.19-0.28 s, 0.48-0.95 s).
PIECES_PER_WORKER = 1


def _gpu_cost(xp: Any, du: Any, dv: Any) -> Any:
    """An edge's cost in the GPU's shared counts (:data:`SLICE_EDGE_COST`)."""
    return pair_work(xp, du, dv, True) + SLICE_EDGE_COST


def _cpu_cost(xp: Any, du: Any, dv: Any) -> Any:
    """An edge's cost in the CPU's shared counts (its pair_work)."""
    return pair_work(xp, du, dv, False)


def _key(name: str) -> str:
    """A task's key named for what it does (the call's per-worker phases are its tasks' names)."""
    import uuid

    return f"{name}-{uuid.uuid4().hex}"


def _meta(device: Device, column: str) -> Any:
    xp = device.xp
    empty = xp.zeros(0, xp.int64)
    return new_frame(device, {"first": empty, "second": empty, column: xp.zeros(0, xp.float64)})


def _given_pairs(client: Any, sl: Any, pairs: Pairs, backend: str, stop: str, measure: Any) -> tuple[list, Any]:
    """Explicit pairs on column slices: the pairs go to every slice's worker, each counts their
    shared neighbours within its slice, the counts are summed; one partition, in pair order."""
    sub = client.submit
    home = sl.graph.device
    sent = client.scatter(pairs, hash=False)  # one copy: two tasks read it (Dask's broadcast can hang)
    index = sub(_pair_index, sent, sl.ids, pure=False)
    counts = [sub(stoppable, stop, _shared, adjacency, index, backend, key=_key("shared"))
              for adjacency in sl.adjacency]
    out = sub(_score_pairs, sent, index, sl.degrees, sl.ids, home, measure, *counts, pure=False)
    frame = frame_on([out], _meta(home, measure.column))
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


def _coefficients(pairs: tuple[Any, Any], degrees: Any, counts: tuple[Any, ...], formula: int = JACCARD) -> tuple:
    """On a worker: the per-slice shared counts c of ``pairs`` (internal indices) summed, and the
    measure formed as the kernels form it (J = c / (d_u + d_v - c), 2c / (d_u + d_v), c / min(d_u, d_v),
    c / √(d_u d_v); 0 over 0); ``(first, second, score)`` on the counts' device."""
    device = device_of(counts[0])
    xp = device.xp
    c = add_up(*(to_device(x, device) for x in counts))
    first, second = (to_device(a, device) for a in pairs)
    deg = to_device(degrees, device)
    x, y = deg[first].astype(xp.float64), deg[second].astype(xp.float64)
    if formula == JACCARD:
        den = (deg[first] + deg[second]).astype(xp.float64) - c
    elif formula == SORENSEN:
        c, den = 2.0 * c, x + y
    elif formula == OVERLAP:
        den = xp.minimum(x, y)
    elif formula == COSINE:
        den = xp.sqrt(x * y)
    else:
        raise ValueError(f"no count formula {formula}")
    empty = den <= 0
    return first, second, xp.where(empty, 0.0, c / xp.where(empty, 1.0, den))


def _score_pairs(pairs: Pairs, index: tuple[Any, Any], degrees: Any, ids: Any, home: Device, measure: Any,
                 *counts: Any) -> Any:
    """On a worker: the pairs with their score, by the caller's ids (its own arrays when of the graph's family)."""
    first, second, coeff = _coefficients(index, degrees, counts, measure.formula)
    ids = to_device(ids, device_of(coeff))
    named = [col if device_of(col) is home else ids[i] for col, i in zip((pairs.first, pairs.second), (first, second))]
    return new_frame(home, {"first": named[0], "second": named[1], measure.column: coeff})


def _shared(adjacency: tuple[Any, Any], edges: tuple[Any, Any], backend: str) -> Any:
    """On a worker: |N_t(u) ∩ N_t(v)| of a slice's edges in slice t's adjacency (float64, exact)."""
    from .common import Adjacency

    device = Device.GPU if backend == "gpu" else Device.CPU
    adj = Adjacency(*(to_device(a, device) for a in adjacency))
    first, second = (to_device(a, device).astype(device.xp.int64) for a in edges)
    if device is Device.GPU:
        from . import gpu

        return gpu.coefficients(adj, first, second, mode=Mode.SHARED)
    from . import cpu

    return cpu.coefficients(adj, first, second, mode=Mode.SHARED)


def _score(edges: tuple[Any, Any], degrees: Any, measure: Any, *counts: Any) -> dict[str, Any]:
    """On a worker: the score of the slice's edges (their ids are taken where the input partitions
    are, by their positions: :func:`in_input_order`)."""
    return {measure.column: _coefficients(edges, degrees, counts, measure.formula)[2]}
