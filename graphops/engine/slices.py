"""Column slices of a :class:`~graphops.model.daskgraph.DaskGraph` on a Dask client's workers.

Algorithms that declare a split for a Dask edge frame (``jaccard``) run on the client's workers with the graph cut into
**column slices**: worker ``s`` holds every adjacency entry ``(x, w)`` whose column ``w`` lies in
its range of vertices (both directions of each edge, repeated edges once), so each holds about
``1/k`` of the graph and a graph larger than one GPU's memory fits on several. A quantity that
adds up over the columns of a row, such as ``|N(u) ∩ N(v)| = Σ_s |N_s(u) ∩ N_s(v)|`` or a
degree, is computed slice by slice and summed, in integers, so the result equals one process's.

:func:`column_slices` builds the slices with tasks on the workers (futures; nothing comes to
the client but the vertex count and the slice bounds):

1. the distinct vertex ids (sorted), kept on the workers; each edge partition maps its ids to
   indices ``0..n-1`` by binary search;
2. the column bounds, cut so that the slices' edges take about equal work (:func:`_bounds`),
   each slice holding at most :data:`ENTRY_CAP` times its share of the entries, fewer where its
   worker's free memory would not hold them (:func:`entry_cap`);
3. each edge partition cuts its entries (both directions) by slice; each slice puts its pieces
   together, drops repeated entries and builds a CSR of all ``n`` rows over its columns, plus
   the distinct edges ``{u, v}`` homed in its range (each edge has one home: its larger end when
   ``u + v`` is even, its smaller end when odd, so that every slice gets about ``1/k`` of the
   edges; homing every edge at its larger end gave the last slice ``(2k - 1)/k²`` of them), with
   the position of its first stored row and its stored orientation.

:func:`balanced_edges` deals the distinct edges again, by a cost per edge known only once they
are distinct, for algorithms that count each worker's edges on the whole adjacency
(:func:`whole_adjacency`). :func:`in_input_order` turns values per worker's edges back into a
Dask frame with one partition per input partition, rows in the input's order: the same rows, in
the same order, as one process's result.
"""
from __future__ import annotations

import operator
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

from graphops.base.device import Device, device_of
from graphops.engine.placing import answers
from graphops.model.daskgraph import DaskGraph
from graphops.model.ids import distinct

__all__ = ["Slices", "column_slices", "whole_adjacency", "balanced_edges", "merge_slices", "in_input_order", "frame_on",
           "add_up", "near", "SOON"]

# A row's position: its partition's number in the high bits, its row in the partition below.
_ROW_BITS = 40


@dataclass
class Slices:
    """A :class:`DaskGraph` cut into column slices on a client's workers (futures)."""

    client: Any
    graph: DaskGraph
    n_vertices: int
    bounds: list[int]     # slice s holds the columns bounds[s] <= w < bounds[s + 1]
    ids: Any              # future: the sorted distinct original ids (index -> id)
    adjacency: list[Any]  # futures per slice: (indptr int64 n+1, indices int32), rows sorted
    edges: list[Any]      # futures per slice: (first, second) of its distinct edges, as first stored
    positions: list[Any]  # futures per slice: those edges' first rows (partition << 40 | row)
    degrees: Any          # future: |N(x)| per vertex, over all slices
    offsets: Any          # future: rows of distinct edges before each input partition (n_parts + 1)
    ends: list[Any]       # futures per input partition: its (src, dst) id columns as int64 arrays
    whole: list[Any] | None = None  # per slice: the whole adjacency where its edges are ([]: too big)
    balanced: dict[Any, tuple[list[Any], list[Any]]] = field(default_factory=dict)  # balanced_edges, kept
    plans: dict[tuple, dict[str, list[Any]]] = field(default_factory=dict)  # positions' keys -> in_input_order's plan


_KEPT: "weakref.WeakKeyDictionary[DaskGraph, dict[tuple[str, int], Slices]]" = weakref.WeakKeyDictionary()


def column_slices(client: Any, graph: DaskGraph, k: int) -> Slices:
    """``graph`` cut into ``k`` column slices held by ``client``'s workers: built once, then kept
    on the workers for the next call while the graph object lives (``del graph`` frees them; a
    worker lost meanwhile has its share rebuilt by Dask)."""
    kept = _KEPT.setdefault(graph, {})
    sl = kept.get((client.id, k))
    futures = [] if sl is None else [sl.ids, sl.degrees, sl.offsets, *sl.adjacency, *sl.edges, *sl.positions, *sl.ends]
    if sl is None or any(f.status not in ("pending", "finished") for f in futures):
        sl = kept[(client.id, k)] = _build_slices(client, graph, k)
    return sl


def _build_slices(client: Any, graph: DaskGraph, k: int) -> Slices:
    parts = client.compute(graph.edges.to_delayed())
    sub = client.submit
    arrays = [sub(_part_arrays, p, graph.src, graph.dst, pure=False) for p in parts]
    ids = sub(_distinct, *[sub(_part_ids, a, pure=False) for a in arrays], pure=False)
    n = _first_result(sub(len, ids), graph)
    indexed = [sub(_part_index, a, ids, pure=False) for a in arrays]
    entries = sub(add_up, *[sub(_histogram, x, n, pure=False) for x in indexed], pure=False)
    work = [sub(_home_work, x, entries, pure=False) for x in indexed]
    free = list(answers(client, _free_bytes, graph.device is Device.GPU).values())  # of the workers alive
    bounds = sub(_bounds_within, n, k, free, entries, *work, pure=False).result()
    pieces = [sub(_cut, x, bounds, j, pure=False) for j, x in enumerate(indexed)]
    get = operator.getitem
    built = [sub(_slice, n, *[sub(get, p, s, pure=False) for p in pieces], pure=False) for s in range(k)]
    adjacency, edges, positions = ([sub(get, b, c, pure=False) for b in built] for c in range(3))
    degrees = sub(add_up, *[sub(_row_lengths, a, pure=False) for a in adjacency], pure=False)
    offsets = sub(_offsets, len(parts), *[sub(_origins, p, len(parts), pure=False) for p in positions], pure=False)
    return Slices(client, graph, n, list(bounds), ids, adjacency, edges, positions, degrees, offsets, arrays)


def _first_result(future: Any, graph: Any = None) -> int:
    """The first result that needs every partition read: a partition that cannot be read (a file
    with a header row among files without, text where ids should be) is said in one line naming
    the fix, not as Dask's multi-line table (the file, line and value when the graph's files can
    tell them: ``graph.explain_unread``); graphops' own errors pass as they are."""
    from graphops.errors import GraphopsError, InputError

    try:
        return int(future.result())
    except GraphopsError:
        raise
    except (ValueError, TypeError, KeyError, OverflowError) as exc:  # KeyError: a file without the first file's
        # columns; OverflowError: an id past uint64 where the ids are read as int64
        found = graph.explain_unread() if getattr(graph, "explain_unread", None) is not None else None
        if found:
            raise InputError(f"{found} (the workers could not read the graph's edge files)") from None
        text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
        raise InputError(f"the graph's edge files could not be read on the workers ({first}); every file "
                         f"needs the same columns with integer src and dst ids, and a header row only where "
                         f"header: says so (header: true reads one in every file)") from None


# The whole set adjacency (4 bytes an entry) is put together on each worker that holds a slice's
# edges when it takes at most this share of the smallest worker's memory: each slice's edges are
# then counted where they are, in one task, instead of visiting every slice (k² tasks, every edge
# moved k - 1 times). Measured on 4 H100s (2026-11-27), R-MAT 25 (1.05 G entries, 4.2 GB as a
# whole adjacency): 2.94 s the k² way, 2.67 s this way (with the edges' homes balanced; 2.47 s
# with the result reordered moving 12 bytes an edge).
WHOLE_SHARE = 0.25


def whole_adjacency(slices: Slices) -> list[Any] | None:
    """Per slice ``s``: a future of the whole set adjacency (every row's entries over all
    columns, in column order: ``(indptr, indices)``) on the worker holding slice ``s``'s edges;
    ``None`` when it would take more than :data:`WHOLE_SHARE` of a worker's memory. Put together
    once from the slices, by the workers, and kept with them."""
    if slices.whole is None:
        slices.whole = _whole(slices)
    return slices.whole or None


def _whole(slices: Slices) -> list[Any]:
    client, sub = slices.client, slices.client.submit
    entries = sum(client.gather([sub(_entries, a, pure=False) for a in slices.adjacency]))
    room = min(client.gather([sub(_room, a, pure=False) for a in slices.adjacency]))
    if 4 * entries + 8 * (slices.n_vertices + 1) > WHOLE_SHARE * room:
        return []
    homes = client.who_has(slices.edges)
    made: dict[str, Any] = {}
    out = []
    for edges in slices.edges:
        home = _holder(homes, edges)
        if home not in made:
            made[home] = sub(merge_slices, *slices.adjacency, pure=False, **_pinned(home))
        out.append(made[home])
    return out


def balanced_edges(slices: Slices, cost: Callable[[Any, Any, Any], Any], per_worker: int = 1
                   ) -> tuple[list[Any], list[Any]]:
    """Futures of distinct edges ``(first, second)`` and of their positions, ``per_worker`` pieces
    for the worker of each slice's edges (piece ``i`` on the worker of slice ``i // per_worker``):
    the slices' edges dealt again in slice order so that each piece holds about the same total
    ``cost`` (``cost(xp, d_first, d_second)``: float64 per edge, by the degrees over all
    slices). For counting each worker's edges on the whole adjacency (:func:`whole_adjacency`):
    the cut of the columns balances a work estimate made before the edges were distinct, with
    repeated edges counted each time and each slice's entries capped, which left R-MAT 25's
    slices between 0.75 and 1.24 times their mean work (measured on 4 H100s, 2026-11-27).
    Made once per cost function and count of pieces, by the workers (only each slice's total cost
    and its cut points come here), and kept with the slices; edges leave their worker only where the new cut
    moves them to a neighbour."""
    key = (cost, max(int(per_worker), 1))
    if key not in slices.balanced:
        slices.balanced[key] = _balance(slices, cost, key[1])
    return slices.balanced[key]


def _balance(slices: Slices, cost: Callable[[Any, Any, Any], Any], per_worker: int) -> tuple[list[Any], list[Any]]:
    import numpy as np

    client, sub = slices.client, slices.client.submit
    k = len(slices.edges)
    t = k * per_worker  # the pieces
    running = [sub(_running_cost, e, slices.degrees, cost, pure=False) for e in slices.edges]
    totals = np.asarray(client.gather([sub(_last, r, pure=False) for r in running]), dtype=np.float64)
    before = np.concatenate([[0.0], np.cumsum(totals)])
    marks = before[-1] * np.arange(t + 1) / max(t, 1)  # piece j holds the running cost marks[j] to marks[j + 1]
    cuts = client.gather([sub(_cut_points, r, (marks - before[s]).tolist(), pure=False)
                          for s, r in enumerate(running)])
    homes = client.who_has(slices.edges)
    get = operator.getitem
    edges, positions = [], []
    for j in range(t):
        mine = j // per_worker
        pieces = [sub(_piece, slices.edges[s], slices.positions[s], cuts[s][j], cuts[s][j + 1], pure=False)
                  for s in range(k) if cuts[s][j + 1] > cuts[s][j] or s == mine]
        joined = sub(_joined, *pieces, pure=False, **_pinned(_holder(homes, slices.edges[mine])))
        edges.append(sub(get, joined, 0, pure=False))
        positions.append(sub(get, joined, 1, pure=False))
    return edges, positions


def in_input_order(slices: Slices, positions: list[Any], values: list[Any], meta: Any,
                   ends: tuple[str, str] = ("first", "second")) -> tuple[list[Any], Any]:
    """Values per piece of the slices' distinct edges (futures of ``{column: array}``, the edges'
    first rows in ``positions``, futures kept with the slices: :attr:`Slices.positions` or
    :func:`balanced_edges`'s) as futures of one frame per input partition, rows in input order,
    indexed as one frame would be; and a Dask frame on them. Only the values travel, cut by input
    partition: each partition's rows take their ids, as ``ends``, from the partition's own columns
    (R-MAT 25 on 4 GPUs: 8 bytes an edge for jaccard, where whole rows with both ids were 32), so
    the columns are ``ends`` then the values', as in ``meta``. Each piece's values leave for the
    workers of the partitions as soon as they are made (one move per piece and worker, before
    the partitions' frames can be made), so that pieces made early travel while later ones are
    computed. Where each edge goes (a sort of each piece's edges by partition, a sort of each
    partition's rows, the partitions' workers) depends on the positions only: it is worked out on
    the first call, by the workers, and kept with the slices."""
    if not isinstance(positions, (list, tuple)) or not isinstance(values, (list, tuple)) or len(positions) != len(
            values):
        from graphops.errors import PluginError

        raise PluginError("in_input_order(slices, positions, values, meta): positions and values are lists of "
                          "futures, one of each per piece of edges (the values without a 'position' column)")
    sub = slices.client.submit
    plan = _origin_plan(slices, positions)
    groups = _groups(slices)  # (worker or None, its partitions), as the partitions are now
    bundles = []  # per piece, per group: a future of {partition: values} on the group's worker
    for v, order in zip(values, plan["orders"]):
        cut = sub(_by_origin, v, order, [js for _, js in groups], pure=False, priority=SOON)
        bundles.append([_moved(sub, sub(operator.getitem, cut, g, pure=False, priority=SOON), worker)
                        for g, (worker, _) in enumerate(groups)])
    out: dict[int, Any] = {}
    for g, (worker, js) in enumerate(groups):
        pin = _pinned(worker)
        for j in js:
            out[j] = sub(_origin_frame, j, slices.offsets, slices.ends[j], plan["rows"][j], ends, meta,
                         *[b[g] for b in bundles], pure=False, **pin)
    futures = [out[j] for j in range(len(slices.ends))]
    return futures, frame_on(futures, meta)


# The priority of the tasks that send a piece's values on their way: above the next piece's counts
# on the same worker, so that they travel while it computes.
SOON = 10


def _moved(sub: Any, future: Any, worker: str | None) -> Any:
    """``future``'s value fetched by ``worker`` as soon as it is made (a task there that returns it)."""
    return future if worker is None else sub(_same, future, pure=False, priority=SOON, **_pinned(worker))


def _origin_plan(slices: Slices, positions: list[Any]) -> dict[str, Any]:
    """Per piece, the order of its edges by input partition and where each partition's begin;
    per partition, its rows in the pieces' order and the sort that puts them in input order."""
    key = tuple(f.key for f in positions)
    plan = slices.plans.get(key)
    if plan is None or any(f.status not in ("pending", "finished") for f in (*plan["orders"], *plan["rows"])):
        sub, p = slices.client.submit, len(slices.ends)
        orders = [sub(_origin_order, f, p, pure=False) for f in positions]
        rows = [sub(_origin_rows, *[sub(_rows_of, f, order, j, pure=False) for f, order in zip(positions, orders)],
                    pure=False) for j in range(p)]
        plan = slices.plans[key] = {"orders": orders, "rows": rows}
    return plan


def _groups(slices: Slices) -> list[tuple[str | None, list[int]]]:
    """The input partitions grouped by the worker that holds their columns (asked each call: a
    worker lost since has its partitions elsewhere)."""
    homes = slices.client.who_has(slices.ends)
    groups: dict[str | None, list[int]] = {}
    for j, f in enumerate(slices.ends):
        groups.setdefault(_holder(homes, f), []).append(j)
    return list(groups.items())


def _holder(homes: dict, future: Any) -> str | None:
    """The first (by address) of the workers ``homes`` (``client.who_has``) says hold ``future``, or ``None``."""
    return (sorted(homes.get(future.key, ())) or [None])[0]


def _pinned(worker: str | None) -> dict[str, Any]:
    """``submit``'s arguments asking for ``worker`` (another may take the task if it is gone); none for ``None``."""
    return {} if worker is None else {"workers": [worker], "allow_other_workers": True}


def near(homes: dict, future: Any) -> dict[str, Any]:
    """``submit``'s arguments asking for the worker that holds ``future`` (the first by address of
    those ``homes``, ``client.who_has``, lists; another may take the task if it is gone); none where
    no worker holds it."""
    return _pinned(_holder(homes, future))


def frame_on(futures: list[Any], meta: Any) -> Any:
    """A Dask frame whose partitions are ``futures`` (frames like ``meta``), nothing gathered."""
    import dask
    import dask.dataframe as dd

    return dd.from_delayed([dask.delayed(f) for f in futures], meta=meta, verify_meta=False)


# Tasks (run on the workers) ---------------------------------------------------------------

def _xp(a: Any) -> Any:
    return device_of(a).xp


def _index_type(xp: Any, largest: int) -> Any:
    """int32 for indices below ``largest`` (or up to it) while they fit in 31 bits, else int64."""
    return xp.int32 if largest < 2**31 else xp.int64


def _part_arrays(frame: Any, src: str, dst: str) -> tuple[Any, Any]:
    """A partition's id columns as int64 arrays (checked once, used twice)."""
    from graphops.errors import InputError
    from graphops.model.frames import id_array

    missing = [c for c in (src, dst) if c not in frame.columns]
    if missing:  # a partition unlike the frame's meta (Dask may leave the column selection to this task)
        raise InputError(f"a partition of the edge frame has no column(s) {missing} (its columns: "
                         f"{[str(c) for c in frame.columns]}); every file or partition needs the same columns")
    return id_array(frame[src], "src"), id_array(frame[dst], "dst")


def _part_ids(arrays: tuple[Any, Any]) -> Any:
    return _distinct(*arrays)


def _distinct(*arrays: Any) -> Any:
    xp = _xp(arrays[0])
    return distinct(xp.concatenate(arrays))


def _part_index(arrays: tuple[Any, Any], ids: Any) -> tuple[Any, Any]:
    from graphops.base.device import to_device

    s, d = arrays
    xp, ids = _xp(s), to_device(ids, device_of(s))
    return xp.searchsorted(ids, s), xp.searchsorted(ids, d)


def _histogram(index: tuple[Any, Any], n: int) -> Any:
    s, d = index
    return _count(s, n) + _count(d, n)


def _count(x: Any, n: int, weights: Any = None) -> Any:
    """``bincount(x, weights, minlength=n)``, also of an empty ``x`` (CuPy's takes the maximum of ``x``
    first, which an empty array has not: an empty partition or slice)."""
    xp = _xp(x)
    if len(x) == 0:
        return xp.zeros(n, dtype=xp.int64 if weights is None else xp.float64)
    return xp.bincount(x, weights=weights, minlength=n)


def _home_work(index: tuple[Any, Any], entries: Any) -> Any:
    """A partition's estimated work per vertex: each edge {u, v} adds min(d_u, d_v) + EDGE_COST
    (the shorter list, searched in the longer, and the edge's own cost) to its home
    (:func:`_slice`'s rule), ``d`` a vertex's entries counted with repeats (float64 per vertex)."""
    from graphops.base.device import to_device

    s, d = index
    xp = _xp(s)
    deg = to_device(entries, device_of(s))
    home = xp.where((s + d) % 2 == 0, xp.maximum(s, d), xp.minimum(s, d))
    cost = xp.minimum(deg[s], deg[d]).astype(xp.float64) + EDGE_COST
    return _count(home, len(deg), cost)


# An edge's own cost in the work estimate, in entries of the shorter list. Measured on 4 H100s
# (2026-11-27), R-MAT 25, the second call: with 1, the slices' shared counts took 0.99, 1.43, 1.79
# and 1.49 s (call 2.08 s). A fit of those four slices (7.4 ps an entry, 1.22 ns an edge: 164)
# cut the next run's slices to 1.19, 1.64, 1.56 and 1.76 s (call 2.32 s): the fit did not hold
# beyond the slices it was made on, so 1 it stays. The estimate counts repeated edges each time, by
# degrees with repeats, and the cap on entries bounds it: where the whole adjacency is used, the
# distinct edges are dealt again by their exact cost afterwards (balanced_edges), and this cut
# only decides which columns each slice holds.
EDGE_COST = 1.0


# A slice's entries may reach ENTRY_CAP times the mean, fewer where its worker's free memory would
# not hold them (SLICE_SHARE of it at ENTRY_BYTES an entry), and never fewer than the mean: the cut
# by work moves columns toward the slices whose edges are cheap (R-MAT's last slice, of low-degree
# vertices, holds 1.39 to 1.5 times the mean entries at scales 22 to 24), and a graph that barely
# fits its workers must still fit. Measured on 4 H100s (2026-11-27), R-MAT 25: a worker's peak was
# 36.3 GiB with at most 393 M entries in its slice, its edge partitions and the whole adjacency
# included (99 bytes an entry).
ENTRY_CAP = 1.5
ENTRY_BYTES = 100
SLICE_SHARE = 0.8


def entry_cap(free: list[int], entries: float, k: int) -> float:
    """The most entries a slice may hold, as a multiple of the mean (``entries / k``), for workers
    with ``free`` bytes each: :data:`ENTRY_CAP`, or what the memory takes when less, at least 1."""
    mean = max(entries / max(k, 1), 1.0)
    return max(1.0, min(ENTRY_CAP, min(free, default=0) * SLICE_SHARE / ENTRY_BYTES / mean))


def _free_bytes(gpu: bool, dask_worker: Any = None) -> int:
    """On a worker (``client.run``, which passes ``dask_worker``): the bytes it can still take: its
    GPU's free memory, or on the host what its memory limit (the host's available memory when it
    has none) leaves beside what it holds."""
    if gpu:
        import cupy

        return int(cupy.cuda.runtime.memGetInfo()[0])
    import psutil

    available = int(psutil.virtual_memory().available)
    limit = getattr(getattr(dask_worker, "memory_manager", None), "memory_limit", None)
    return min(available, int(limit) - int(psutil.Process().memory_info().rss)) if limit else available


def _bounds_within(n: int, k: int, free: list[int], entries: Any, *work: Any) -> list[int]:
    """:func:`_bounds` with the cap that workers with ``free`` bytes each allow (:func:`entry_cap`)."""
    return _bounds(n, k, entries, *work, cap=entry_cap(free, float(entries.sum()), k))


def _bounds(n: int, k: int, entries: Any, *work: Any, cap: float) -> list[int]:
    """Column bounds giving each slice about the same estimated work (``work``: per vertex, from
    :func:`_home_work`), each within ``cap`` times the mean of the ``entries`` per slice
    whenever some cut allows it (a vertex holding more than that cannot be cut)."""
    import numpy as np

    from graphops.base.device import to_device

    C = np.concatenate([[0], np.cumsum(to_device(entries, Device.CPU), dtype=np.float64)])  # entries before b
    total = np.zeros(n)
    for w in work:
        total += to_device(w, Device.CPU)
    W = np.concatenate([[0.0], np.cumsum(total)])
    cap = cap * C[-1] / k
    # tail[j]: the first column from which j slices within the cap can hold the rest (each of the
    # last j slices filled backwards as far as the cap allows: the earliest such start there is)
    tail = [n]
    for _ in range(1, k):
        tail.append(min(int(np.searchsorted(C, C[tail[-1]] - cap, side="left")), tail[-1]))
    bounds = [0]
    for s in range(1, k):
        start = bounds[-1]
        wanted = int(np.searchsorted(W, W[-1] * s / k, side="left"))
        most = int(np.searchsorted(C, C[start] + cap, side="right")) - 1  # this slice within the cap
        bounds.append(min(max(wanted, tail[k - s], start), max(most, start), n))
    return [*bounds, n]


def _cut(index: tuple[Any, Any], bounds: list[int], part: int) -> list[tuple[Any, ...]]:
    """The partition's entries, both directions of each edge, cut by column slice: per slice
    (rows, columns, positions, flipped), ``flipped`` marking the entry that reverses the row."""
    s, d = index
    xp = _xp(s)
    m = len(s)
    small = _index_type(xp, bounds[-1])  # vertex indices: 4 bytes while they fit
    # a row's two entries side by side: positions never fall, within a slice too (stable cut),
    # so the slice sorts by its key alone to keep each edge's first-stored entry first
    rows = xp.stack([s, d], axis=1).astype(small).reshape(-1)
    cols = xp.stack([d, s], axis=1).astype(small).reshape(-1)
    pos = xp.repeat((xp.int64(part) << _ROW_BITS) + xp.arange(m, dtype=xp.int64), 2)
    flipped = xp.tile(xp.asarray([0, 1], dtype=xp.int8), m)
    if len(bounds) > 2:
        which = xp.searchsorted(xp.asarray(bounds[1:-1], dtype=small), cols, side="right")
    else:  # one slice
        which = xp.zeros(len(cols), xp.int64)
    order = xp.argsort(which, kind="stable")
    starts = xp.searchsorted(which[order], xp.arange(len(bounds)), side="left").tolist()
    cols, rows, pos, flipped = cols[order], rows[order], pos[order], flipped[order]
    return [(rows[a:b], cols[a:b], pos[a:b], flipped[a:b]) for a, b in zip(starts[:-1], starts[1:])]


def _slice(n: int, *pieces: tuple[Any, ...]) -> tuple[tuple[Any, Any], tuple[Any, Any], Any]:
    """A slice's set adjacency (CSR of all ``n`` rows over its columns), its distinct edges
    ``{u, v}`` homed here (see the module docstring: the entry ``(r, c)`` with ``r <= c`` when
    ``r + c`` is even, ``r >= c`` when odd; a self-loop's one entry) as stored first, and those
    first rows' positions."""
    xp = _xp(pieces[0][0])
    rows, cols, pos, flipped = (xp.concatenate([p[c] for p in pieces]) for c in range(4))
    small = rows.dtype
    key = rows.astype(xp.int64) * max(n, 1) + cols
    # pieces in partition order, each in stored order (see _cut): a stable sort by key puts
    # each edge's first-stored entry first (one sort of one key, not a three-key lexsort)
    order = xp.argsort(key, kind="stable")
    key, pos, flipped = key[order], pos[order], flipped[order]
    first = xp.ones(len(key), dtype=bool)
    first[1:] = key[1:] != key[:-1]
    key, pos, flipped = key[first], pos[first], flipped[first]
    r, c = (key // max(n, 1)).astype(small), (key % max(n, 1)).astype(small)
    del key
    indptr = xp.zeros(n + 1, dtype=xp.int64)
    if n:
        xp.cumsum(_count(r, n), out=indptr[1:])
    adjacency = (indptr, xp.ascontiguousarray(c.astype(xp.int32)))
    edge = (r <= c) == (((r ^ c) & 1) == 0)  # each edge's home: one of its two entries (module docstring)
    u, v, pos, flipped = r[edge], c[edge], pos[edge], flipped[edge].astype(bool)
    first_end, second_end = xp.where(flipped, v, u), xp.where(flipped, u, v)  # as first stored
    return adjacency, (first_end, second_end), pos


def _running_cost(edges: tuple[Any, Any], degrees: Any, cost: Callable[[Any, Any, Any], Any]) -> Any:
    """The running sum of the edges' ``cost`` (float64), in the slice's edge order."""
    from graphops.base.device import to_device

    first, second = edges
    xp = _xp(first)
    deg = to_device(degrees, device_of(first))
    each = xp.asarray(cost(xp, deg[first], deg[second]), dtype=xp.float64)
    got = None
    if each.shape != first.shape:
        got = f"shape {tuple(each.shape)}"
    elif len(each) and not bool(xp.isfinite(each).all() & (each >= 0).all()):
        got = f"shape {tuple(each.shape)}, with NaN, inf or negative values"
    if got is not None:
        from graphops.errors import PluginError

        raise PluginError(f"balanced_edges: the cost function {getattr(cost, '__qualname__', cost)!r} must give one "
                          f"finite cost >= 0 per edge (float64 of shape {tuple(first.shape)}); got {got}")
    return xp.cumsum(each)


def _last(running: Any) -> float:
    return float(running[-1]) if len(running) else 0.0


def _cut_points(running: Any, marks: list[float]) -> list[int]:
    """Where each of the ``k + 1`` marks falls among the edges (the first edge whose running cost
    reaches it): 0 first and the edge count last, so that every edge lies between two cuts."""
    xp = _xp(running)
    inner = xp.searchsorted(running, xp.asarray(marks[1:-1], dtype=xp.float64), side="left").tolist()
    cuts = [0, *(int(c) for c in inner), len(running)]
    for i in range(1, len(cuts)):  # never falling: each edge between exactly two cuts, whatever the marks
        cuts[i] = min(max(cuts[i], cuts[i - 1]), len(running))
    return cuts


def _piece(edges: tuple[Any, Any], positions: Any, a: int, b: int) -> tuple[tuple[Any, Any], Any]:
    return (edges[0][a:b], edges[1][a:b]), positions[a:b]


def _joined(*pieces: tuple[tuple[Any, Any], Any]) -> tuple[tuple[Any, Any], Any]:
    """Pieces of edges and positions put together, in the order given (one piece as it is)."""
    if len(pieces) == 1:
        return pieces[0]
    xp = _xp(pieces[0][1])
    return ((xp.concatenate([p[0][0] for p in pieces]), xp.concatenate([p[0][1] for p in pieces])),
            xp.concatenate([p[1] for p in pieces]))


def _entries(adjacency: tuple[Any, Any]) -> int:
    return int(len(adjacency[1]))


def _room(adjacency: tuple[Any, Any]) -> int:
    """Bytes of memory where the slice lives: its GPU's, or the worker's memory limit on the host
    (the host's when it has none)."""
    if device_of(adjacency[0]) is Device.GPU:
        import cupy

        return int(cupy.cuda.runtime.memGetInfo()[1])
    from distributed import get_worker

    limit = get_worker().memory_manager.memory_limit  # a worker's share of the host (None: no limit)
    if limit:
        return int(limit)
    import psutil

    return int(psutil.virtual_memory().total)


def merge_slices(*adjacency: tuple[Any, Any]) -> tuple[Any, Any]:
    """The whole set adjacency from the column slices' (in slice order): row ``r``'s entries of
    slice 0, then of slice 1, ... are its entries in column order, since the slices hold
    increasing column ranges."""
    xp = _xp(adjacency[0][0])
    n = len(adjacency[0][0]) - 1
    lengths = [_row_lengths(a) for a in adjacency]
    indptr = xp.zeros(n + 1, dtype=xp.int64)
    if n:
        xp.cumsum(add_up(*lengths), out=indptr[1:])
    indices = xp.empty(int(indptr[-1]), dtype=xp.int32)
    start = indptr[:-1].copy()
    for (ptr, cols), d in zip(adjacency, lengths):
        if len(cols):
            rows = xp.repeat(xp.arange(n, dtype=xp.int64), d)
            indices[start[rows] + (xp.arange(len(cols), dtype=xp.int64) - ptr[rows])] = cols
        start += d
    return indptr, indices


def _row_lengths(adjacency: tuple[Any, Any]) -> Any:
    indptr = adjacency[0]
    return indptr[1:] - indptr[:-1]


def add_up(*arrays: Any) -> Any:
    """The element-wise sum of equal-length arrays (a new array), added in the order given."""
    out = arrays[0].copy()
    for a in arrays[1:]:
        out += a
    return out


def _origins(positions: Any, parts: int) -> Any:
    """How many of a slice's edges each input partition holds (counted where they are)."""
    from graphops.base.device import to_device

    return to_device(_count(positions >> _ROW_BITS, parts), Device.CPU)


def _offsets(parts: int, *counts: Any) -> Any:
    import numpy as np

    return np.concatenate([[0], np.cumsum(np.sum(counts, axis=0))]).astype(np.int64)


def _origin_order(positions: Any, parts: int) -> tuple[Any, list[int]]:
    """A slice's edges ordered by input partition (``order``) and where each partition's begin."""
    xp = _xp(positions)
    part = positions >> _ROW_BITS
    order = xp.argsort(part, kind="stable")  # the same order if made again (a lost piece), as the rows expect
    starts = xp.searchsorted(part[order], xp.arange(parts + 1), side="left").tolist()
    return order.astype(_index_type(xp, len(order))), starts


def _rows_of(positions: Any, order: tuple[Any, list[int]], j: int) -> Any:
    """The rows of input partition ``j`` among a slice's edges, in the slice's order by partition."""
    index, starts = order
    return positions[index[starts[j]:starts[j + 1]]] & ((1 << _ROW_BITS) - 1)


def _origin_rows(*rows: Any) -> tuple[Any, Any]:
    """A partition's rows from every slice, sorted (int64), and the sort that takes the slices'
    values, put together in slice order, to them."""
    xp = _xp(rows[0])
    joined = xp.concatenate(rows)
    order = xp.argsort(joined)
    largest = int(joined.max()) if len(joined) else 0
    return joined[order].astype(_index_type(xp, largest)), order.astype(_index_type(xp, len(order)))  # kept: small


def _by_origin(values: dict[str, Any], order: tuple[Any, list[int]], groups: list[list[int]]) -> list[dict]:
    """Values cut by input partition (:func:`_origin_order`), on their own device, gathered per
    group of partitions: ``[{partition: {column: values}}]``."""
    index, starts = order
    cols = {k: v[index] for k, v in values.items()}
    return [{j: {k: v[starts[j]:starts[j + 1]] for k, v in cols.items()} for j in js} for js in groups]


def _same(x: Any) -> Any:
    return x


def _origin_frame(j: int, offsets: Any, arrays: tuple[Any, Any], rows: tuple[Any, Any], ends: tuple[str, str],
                  meta: Any, *bundles: dict[int, dict[str, Any]]) -> Any:
    """Input partition ``j``'s distinct edges in input order: their ids from the partition's own
    columns at its sorted ``rows`` (:func:`_origin_rows`), then the values of ``j`` in each
    piece's bundle, in that order; indexed from its offset."""
    from graphops.base.device import to_device
    from graphops.model.frames import new_frame

    device = device_of(meta)
    xp = device.xp
    pieces = [b[j] for b in bundles]
    sorted_rows, order = (to_device(a, device) for a in rows)
    columns = {ends[0]: to_device(arrays[0], device)[sorted_rows], ends[1]: to_device(arrays[1], device)[sorted_rows]}
    for c in pieces[0]:
        columns[c] = xp.concatenate([to_device(p[c], device) for p in pieces])[order]
    frame = new_frame(device, columns, list(meta.columns), take=True)
    start = int(offsets[j])
    frame.index = device.xdf.RangeIndex(start, start + len(frame))
    return frame
