"""How an algorithm's work cuts into tasks for a Dask cluster: the contract between a plugin's
``split`` and the core's cluster executor (:mod:`graphops.engine.cluster`), and the helpers a
split and its tasks use. Importing this module imports no Dask."""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

__all__ = ["Part", "Split", "Distributed", "Here", "Shipped", "rows_by_cost", "kept_slice", "stoppable",
           "PARTS_PER_WORKER"]


class Shipped:
    """Base of a plugin's objects that a split sends to workers (:attr:`Split.sent`, a part's
    data): Dask sends such an object field by field (its ``__dict__``), each array by the
    connection's own serializers (over ucx a CuPy array goes GPU to GPU), as it sends graphops'
    graphs and pairs (:mod:`graphops.engine.wire`); pickled whole, a device array would go through
    host memory."""


@dataclass(frozen=True)
class Part:
    """One task: ``select`` (picklable, small) tells ``Split.run`` what to compute; ``cost`` is
    its estimated work in any unit (only the ratios matter). ``data``: what only this part needs
    (e.g. its slice of the pairs): sent to one worker, the one the part is given to, once per
    client while :attr:`Split.keep_with` lives, and passed to ``Split.run`` as ``data=`` (a part
    without it is run without that argument)."""

    select: Any
    cost: float = 1.0
    data: Any = None


@dataclass(frozen=True)
class Split:
    """How a call cuts into tasks. ``run(algorithm, inputs, params, backend, select)`` computes one
    part on a worker from the whole inputs, with the :class:`~graphops.host.algorithm.Algorithm`
    the caller dispatched (sent along: a worker never looks an algorithm up by name) and the
    backend chosen for every worker; it must be a module-level function (a worker imports it by
    name). ``merge`` makes, here, what a backend returns (an array, or a dict of columns) from
    the parts' values in order; graphops wraps it as it wraps a backend's result, with ``views``
    as the backend's arguments (e.g. a :class:`~graphops.model.pairs.PairIndex` whose arrays are
    result columns: they become the caller's ids without a search). A ``merge`` with an ``add(k,
    value)`` method is also given each part's value as it arrives (e.g. to copy it into place while
    other parts still run); when it returns True it has kept the value, and ``merge`` gets ``None``
    in its place. A ``merge`` with ``landing`` (``(length, dtype)``: the parts' values make one
    array) and ``lands(select)`` (a part's ``(start, count)`` in it) has GPU workers on this
    machine write their values straight into this process's GPU memory
    (:mod:`graphops.engine.landing`); it gets each as its own array all the same. ``sent``: what every worker
    gets (each object once per client, as the inputs are) when the parts need less than the whole
    inputs, e.g. jaccard's set adjacency instead of the graph with its edge frame and ids; ``run``
    then receives it as ``inputs``."""

    parts: Sequence[Part]
    run: Callable[..., Any]
    merge: Callable[[list[Any]], Any]
    views: tuple = ()
    sent: Mapping[str, Any] | None = None  # what every worker is sent instead of the call's inputs
    keep_with: Any = None  # the parts' data is kept on the workers while this object lives
    reason: str = ""  # why the cluster is used (e.g. a cost estimate): the outcome's details["cluster"]


@dataclass(frozen=True)
class Distributed:
    """How a call on inputs that are already distributed (a :class:`~graphops.model.daskgraph.DaskGraph`)
    runs: ``submit(client, inputs, params, backend, workers, stop)`` submits the plugin's own tasks
    and returns ``(futures, finish)``; the core waits for the futures (progress bar; Ctrl-C cancels
    them and sets the event named ``stop``, which long tasks submitted through :func:`stoppable`
    read at their chunk boundaries) and returns ``finish()``, e.g. a Dask frame on those futures."""

    submit: Callable[..., tuple[list[Any], Callable[[], Any]]]


@dataclass(frozen=True)
class Here:
    """A split's answer "run this call in the calling process: the cluster would not pay" (e.g.
    :func:`~graphops.engine.gram.gram_split` when the cost estimate of
    :mod:`graphops.engine.gramcost` says one device is faster). The executor runs the call here,
    with the backend chosen for the workers, and says ``cluster not used: <reason>`` in the
    outcome's ``details["cluster"]`` and in the run summary's step reason."""

    reason: str


def rows_by_cost(row_cost: Any, pieces: int, shares: Sequence[float] | None = None) -> list[Part]:
    """Items ``0..n-1`` (rows, pairs) of given costs (NumPy or CuPy) cut into at most ``pieces``
    ranges of about equal cost (or, given ``shares``, one a piece, of costs about in proportion
    to them), as parts selecting ``(r0, r1)``."""
    from graphops.base.device import Device, device_of, to_device
    from graphops.base.work import even_ranges

    xp = device_of(row_cost).xp  # NumPy or CuPy: a GPU's costs are summed and cut there
    cost = xp.concatenate([xp.zeros(1), xp.cumsum(xp.asarray(row_cost, dtype=xp.float64))])
    ranges = even_ranges(len(row_cost), pieces, cost, shares)
    at = to_device(cost[[r for rng in ranges for r in rng]], Device.CPU) if ranges else []
    return [Part(rng, float(at[2 * k + 1] - at[2 * k])) for k, rng in enumerate(ranges)]


# Tasks per worker: enough that idle workers can steal from busy ones, few enough that the
# per-task overhead (milliseconds) stays small.
PARTS_PER_WORKER = 4

# On a worker: the slices its parts took of each input it was sent (on the device they ran on),
# kept while the input lives, so the next call's part over the same rows finds what the backend
# derived from them the first time (prepared arrays, launch plans) instead of deriving it again.
_SLICES: "weakref.WeakKeyDictionary[Any, dict[tuple, Any]]" = weakref.WeakKeyDictionary()


def kept_slice(obj: Any, runs: tuple[tuple[int, int], ...] | None = None, device: str | None = None) -> Any:
    """The graphs of ``runs`` (ranges ``(a, b)`` of ``obj``, in order; ``None``: all of it), moved
    to ``device`` when given: the same object for the same runs while ``obj`` lives."""
    def make() -> Any:
        if runs is None:
            part = obj
        elif len(runs) == 1:
            part = obj[runs[0][0]:runs[0][1]]
        else:
            part = obj[np.concatenate([np.arange(a, b, dtype=np.int64) for a, b in runs])]
        return part if device is None else part.to(device)
    try:
        kept = _SLICES.setdefault(obj, {})
    except TypeError:  # not weak-referenceable: a new slice
        return make()
    if (runs, device) not in kept:
        kept[(runs, device)] = make()
    return kept[(runs, device)]


def stoppable(stop: str, fn: Callable, *args: Any) -> Any:
    """On a worker: ``fn(*args)``, ended at its next chunk boundary once the Dask event ``stop``
    is set (submit long tasks of a :class:`Distributed` call through it). Running out of memory
    raises a :class:`~graphops.errors.DeviceMemoryError` naming the task, the worker and the fix."""
    from distributed import Event, get_worker

    from graphops.base.work import stop_when
    from graphops.engine.faults import describe_task, reported_memory, task_owner

    with reported_memory(task_owner(fn), lambda: describe_task(fn, get_worker().get_current_task()),
                         lambda: get_worker().address), stop_when(Event(stop).is_set):
        return fn(*args)
