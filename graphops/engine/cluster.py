"""A call on a Dask cluster: the plugin says how its work cuts into tasks, the core does the rest.

``go.run(name, *inputs, client=client)`` (any ``dask.distributed.Client``: a ``LocalCluster``,
``dask_cuda.LocalCUDACluster`` or a remote scheduler) runs an algorithm that declares
``Algorithm(split="pkg.mod:split")``. That function, ``split(inputs, params, workers)``, returns
a :class:`Split`: the parts (what each task computes, a small value such as a row range, and
its estimated cost), a ``run(inputs, params, backend, select)`` that computes one part on a
worker from the whole inputs, and a ``merge(values)`` that makes the result from the parts'
values in order. The core

* validates parameters and inputs here, before any work, and asks every worker what it can run:
  ``backend="gpu"`` with a worker that has no usable GPU is an error naming the worker;
  ``auto`` is ``gpu`` when every worker has one, else ``cpu``;
* sends each input to every worker once (``scatter(broadcast=True)``), kept with the input
  object for the next call on the same client; graphs, graph sets and pairs travel field by field
  (:mod:`graphops.engine.wire`), so over ucx their device arrays go GPU to GPU;
* submits the parts costliest first (Dask's priorities; idle workers steal queued ones), so
  hub pairs and big graphs do not end up last on one worker;
* gathers the values in part order, with the progress bar, and wraps the merged result as a
  backend's result is wrapped (the caller's frame family and ids); Ctrl-C cancels the tasks, and the
  parts already running stop at their next chunk boundary (a stop event they poll);
* sends a repeated call's parts to the workers that ran them before (a hint: they keep the
  slices of the inputs the parts took, and what the backend derived from them); a GPU worker's
  device arrays go to a caller with a GPU device to device, else through the host;
* reports the tasks each worker ran and their seconds in the outcome's ``details["workers"]``
  (``{address: {"tasks": n, "seconds": s}}``; a part is one task), the same for both kinds of
  call.

A worker lost mid-run is Dask's to survive: its tasks run again elsewhere, and a part's value
does not depend on where it ran. Nothing here imports Dask until a client is given.
"""
from __future__ import annotations

import contextlib
import time
import uuid
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence

from graphops.host.algorithm import Algorithm, load_target
from graphops.errors import BackendUnavailableError, InputError

__all__ = ["Part", "Split", "Distributed", "stoppable", "run_on_cluster", "rows_by_cost", "gram_split", "gram_part", "connect",
           "cuda_protocol"]


@dataclass(frozen=True)
class Part:
    """One task: ``select`` (picklable, small) tells ``Split.run`` what to compute; ``cost`` is
    its estimated work in any unit (only the ratios matter)."""

    select: Any
    cost: float = 1.0


@dataclass(frozen=True)
class Split:
    """How a call cuts into tasks; ``run`` must be a module-level function (a worker imports it
    by name). ``merge`` makes, here, what a backend returns (an array, or a dict of columns) from
    the parts' values in order; graphops wraps it as it wraps a backend's result, with ``views``
    as the backend's arguments (e.g. a :class:`~graphops.model.pairs.PairIndex` whose arrays are
    result columns: they become the caller's ids without a search)."""

    parts: Sequence[Part]
    run: Callable[[Mapping[str, Any], Any, str, Any], Any]
    merge: Callable[[list[Any]], Any]
    views: tuple = ()


@dataclass(frozen=True)
class Distributed:
    """How a call on inputs that are already distributed (a :class:`~graphops.model.daskgraph.DaskGraph`)
    runs: ``submit(client, inputs, params, backend, workers, stop)`` submits the plugin's own tasks
    and returns ``(futures, finish)``; the core waits for the futures (progress bar; Ctrl-C cancels
    them and sets the event named ``stop``, which long tasks submitted through :func:`stoppable`
    read at their chunk boundaries) and returns ``finish()``, e.g. a Dask frame on those futures."""

    submit: Callable[..., tuple[list[Any], Callable[[], Any]]]


def rows_by_cost(row_cost: Any, pieces: int) -> list[Part]:
    """Items ``0..n-1`` (rows, pairs) of given costs (NumPy or CuPy) cut into at most ``pieces``
    ranges of about equal cost, as parts selecting ``(r0, r1)``."""
    from graphops.base.device import Device, device_of, to_device
    from graphops.base.work import even_ranges

    xp = device_of(row_cost).xp  # NumPy or CuPy: a GPU's costs are summed and cut there
    cost = xp.concatenate([xp.zeros(1), xp.cumsum(xp.asarray(row_cost, dtype=xp.float64))])
    ranges = even_ranges(len(row_cost), pieces, cost)
    at = to_device(cost[[r for rng in ranges for r in rng]], Device.CPU) if ranges else []
    return [Part(rng, float(at[2 * k + 1] - at[2 * k])) for k, rng in enumerate(ranges)]


# Tasks per worker: enough that idle workers can steal from busy ones, few enough that the
# per-task overhead (milliseconds) stays small.
PARTS_PER_WORKER = 4

_SENT: "weakref.WeakKeyDictionary[Any, dict[str, Any]]" = weakref.WeakKeyDictionary()
_PLACED: "weakref.WeakKeyDictionary[Any, dict[tuple, dict[Any, str]]]" = weakref.WeakKeyDictionary()
# On a worker: the slices its parts took of each input it was sent (on the device they ran on),
# kept while the input lives, so the next call's part over the same rows finds what the backend
# derived from them the first time (prepared arrays, launch plans) instead of deriving it again.
_SLICES: "weakref.WeakKeyDictionary[Any, dict[tuple, Any]]" = weakref.WeakKeyDictionary()


def kept_slice(obj: Any, r0: int = 0, r1: int | None = None, device: str | None = None) -> Any:
    """``obj[r0:r1]`` (moved to ``device`` when given), the same object for the same rows while
    ``obj`` lives."""
    def make() -> Any:
        part = obj if (r0, r1) == (0, None) else obj[r0:r1]
        return part if device is None else part.to(device)
    try:
        kept = _SLICES.setdefault(obj, {})
    except TypeError:  # not weak-referenceable: a new slice
        return make()
    if (r0, r1, device) not in kept:
        kept[(r0, r1, device)] = make()
    return kept[(r0, r1, device)]


def _device_status() -> tuple[bool, str]:  # runs on each worker
    from graphops.base.device import gpu_status

    return gpu_status()


def stoppable(stop: str, fn: Callable, *args: Any) -> Any:
    """On a worker: ``fn(*args)``, ended at its next chunk boundary once the Dask event ``stop``
    is set (submit long tasks of a :class:`Distributed` call through it)."""
    from distributed import Event

    from graphops.base.work import stop_when

    with stop_when(Event(stop).is_set):
        return fn(*args)


def _run_part(run: Callable, inputs: Mapping[str, Any], params: Any, backend: str, select: Any,
              stop: str, host: bool = False) -> tuple:
    """On a worker: one part's value, its seconds and the worker's address. The work ends at its
    next chunk boundary once the call's stop event is set (Ctrl-C or an error on the client).
    ``host``: a device array value is copied to the host here (the client has no GPU)."""
    from distributed import get_worker

    from graphops.base.device import Device, to_device

    t0 = time.perf_counter()
    value = stoppable(stop, run, inputs, params, backend, select)
    if host and hasattr(value, "__cuda_array_interface__"):  # a device array
        value = to_device(value, Device.CPU)
    return value, time.perf_counter() - t0, get_worker().address


def _stop_event(client: Any) -> Any:
    """A call's stop event: set on Ctrl-C or an error, read by its running tasks (:func:`stoppable`)."""
    from distributed import Event

    return Event(f"graphops-stop-{uuid.uuid4().hex}", client=client)


def _backend(algo: Algorithm, requested: str, status: Mapping[str, tuple[bool, str]]) -> tuple[str, str]:
    requested = str(requested).lower()
    no_gpu = {addr: why for addr, (ok, why) in status.items() if not ok}
    if requested == "auto":
        if "gpu" in algo.backends and not no_gpu:
            return "gpu", "auto: every worker has a usable GPU"
        return "cpu", "auto: " + ("no gpu backend offered" if "gpu" not in algo.backends else
                                  f"{len(no_gpu)} worker(s) without a usable GPU")
    from graphops.engine.dispatch import check_backend_name

    check_backend_name(algo, requested)
    if algo.backends[requested].device == "gpu" and no_gpu:
        shown = "; ".join(f"{addr}: {why}" for addr, why in sorted(no_gpu.items())[:4])
        raise BackendUnavailableError(
            f"{algo.name}: backend {requested!r} was requested on the cluster, but {len(no_gpu)} of "
            f"{len(status)} worker(s) have no usable GPU ({shown}). To remedy this: start the workers "
            f"with dask_cuda (LocalCUDACluster or dask-cuda-worker), or ask for backend='cpu' or 'auto'")
    return requested, "requested"


def _send(client: Any, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Each input on every worker once per client (futures kept with the input object)."""
    futures = {}
    for slot, obj in inputs.items():
        try:
            kept = _SENT.setdefault(obj, {})
        except TypeError:  # not weak-referenceable: sent for this call only
            kept = {}
        key = client.id
        if key not in kept or kept[key].status != "finished":
            kept[key] = client.scatter(obj, broadcast=True, hash=False)
        futures[slot] = kept[key]
    return futures


def _usable_gpu_here() -> bool:
    """Whether this process can take the workers' device arrays (else parts send host arrays)."""
    from graphops.base.device import gpu_status

    return gpu_status()[0]


def _placed(client: Any, inputs: Mapping[str, Any]) -> dict[Any, str]:
    """Where each part of a call on these inputs ran last (a hint: the next call's part over the
    same rows goes there first, to find the slices that worker kept); kept with the inputs."""
    objs = list(inputs.values())
    key = (client.id, tuple(id(o) for o in objs[1:]))
    try:
        return _PLACED.setdefault(objs[0], {}).setdefault(key, {})
    except TypeError:
        return {}


def _hashable(select: Any) -> Any:
    try:
        hash(select)
        return select
    except TypeError:
        return repr(select)


def run_on_cluster(algo: Algorithm, inputs: Mapping[str, Any], backend: str, params: Any, client: Any,
                   progress: bool | None = None) -> tuple[Any, str, str, dict]:
    """Run a validated call's parts on ``client``'s workers; ``(result, backend, reason, details)``."""
    from graphops.engine.wire import register_on
    from graphops.base.work import _Bar

    register_on(client)  # inputs travel field by field (device buffers over ucx), not pickled whole
    status = client.run(_device_status)
    if not status:
        raise InputError("the Dask cluster has no workers; start some (or wait for them) and call again")
    name, reason = _backend(algo, backend, status)
    split = load_target(algo.split)(dict(inputs), params, len(status))
    reason = f"{reason} (Dask, {len(status)} worker(s))"
    if isinstance(split, Distributed):
        result, details = _run_distributed(algo, split, inputs, params, name, client, len(status), progress)
        return result, name, reason, details
    sent = _send(client, inputs)
    placed = _placed(client, inputs)
    host = algo.backends[name].device != "gpu" or not _usable_gpu_here()
    order = sorted(range(len(split.parts)), key=lambda k: -split.parts[k].cost)
    stop = _stop_event(client)
    futures: dict[Any, int] = {}
    for rank, k in enumerate(order):
        select = split.parts[k].select
        where = placed.get(_hashable(select))
        fut = client.submit(_run_part, split.run, sent, params, name, select, stop.name, host, pure=False,
                            priority=len(order) - rank,
                            **({} if where is None else {"workers": [where], "allow_other_workers": True}))
        futures[fut] = k
    values: list[Any] = [None] * len(split.parts)
    workers: dict[str, dict[str, float]] = {}

    def keep(fut: Any, got: tuple) -> None:
        value, seconds, where = got
        values[futures[fut]] = value
        placed[_hashable(split.parts[futures[fut]].select)] = where
        mine = workers.setdefault(where, {"tasks": 0, "seconds": 0.0})
        mine["tasks"] += 1
        mine["seconds"] += seconds

    _wait(client, list(futures), stop, _Bar(progress, f"{algo.name} on {len(status)} Dask worker(s)", len(futures)),
          keep)
    details = {"workers": workers, "tasks": len(split.parts), "parts": len(split.parts)}
    from graphops.engine.dispatch import wrap_result

    return wrap_result(algo, name, split.merge(values), inputs, split.views), name, reason, details


def _wait(client: Any, futures: list[Any], stop: Any, bar: Any, each: Callable[[Any, Any], None] | None = None) -> None:
    """Wait for a call's futures, advancing ``bar``; ``each(future, value)`` as they finish (a
    task's error is raised here). On Ctrl-C or an error: set the call's stop event (running tasks
    end at their next chunk boundary), cancel the futures, re-raise."""
    from distributed import as_completed

    try:
        for done, fut in enumerate(as_completed(futures), 1):
            value = fut.result()
            if each is not None:
                each(fut, value)
            bar.advance(done)
    except BaseException:
        stop.set()
        client.cancel(futures)
        raise
    finally:
        bar.close()


def _run_distributed(algo: Algorithm, split: Distributed, inputs: Mapping[str, Any], params: Any, backend: str,
                     client: Any, n_workers: int, progress: bool | None) -> tuple[Any, dict]:
    """A plugin's own task graph on distributed inputs: waited for with the progress bar, the
    per-worker task seconds read from the scheduler's task stream."""
    from distributed import get_task_stream

    from graphops.base.work import _Bar

    stop = _stop_event(client)
    with get_task_stream(client=client) as stream:
        futures, finish = split.submit(client, dict(inputs), params, backend, n_workers, stop.name)
        _wait(client, futures, stop, _Bar(progress, f"{algo.name} on {n_workers} Dask worker(s)", len(futures)))
    workers: dict[str, dict[str, float]] = {}
    for task in stream.data:
        mine = workers.setdefault(task["worker"], {"tasks": 0, "seconds": 0.0})
        mine["tasks"] += 1
        mine["seconds"] += sum(s["stop"] - s["start"] for s in task.get("startstops", ()) if s["action"] == "compute")
    return finish(), {"workers": workers, "tasks": len(stream.data)}


# Gram matrices ---------------------------------------------------------------------------
# K[a, b] over one set (square) or a set against another: blocks of rows (or of columns), each
# on a worker from the whole sets; raw values (normalize=False) put together, the lower triangle
# mirrored from the upper (as one process does), then normalized here with the raw diagonals
# (of a test × train matrix: from diagonal parts when the algorithm has a ``diagonal`` mode, else
# each part normalizes its own block). Each pair is solved by the same code on the same two
# graphs as in one process, so the values are equal.

def gram_split(name: str, inputs: Mapping[str, Any], params: Any, workers: int, second: str,
               weight: Callable[[Any], Any], cut_larger: bool = False) -> Split:
    """The :class:`Split` of a Gram-matrix algorithm ``name`` whose inputs are ``graphs`` and,
    optionally, ``second`` (the other set). A pair's work is taken as ``w_a w_b + 1``, with
    ``w = weight(node counts)`` per graph (e.g. the node counts themselves: a product graph's size).

    A test × train matrix is cut into blocks of rows (test graphs), each against the whole
    training set: right for an algorithm that prepares the training set once per worker and keeps
    it. ``cut_larger`` cuts the larger set instead (blocks of columns when the training set is
    the larger): right for one that derives each part's sets anew (sp_kernel's path features),
    where row blocks would derive the whole training set in every part."""
    import numpy as np

    from graphops.base.device import Device, to_device

    graphs, other = inputs["graphs"], inputs.get(second)
    w = [np.asarray(weight(np.diff(to_device(s.node_ptr, Device.CPU)).astype(np.float64)), dtype=np.float64)
         for s in (graphs, other) if s is not None]
    wa = w[0]
    kind = "rows"
    if other is None:  # row i: the pairs (i, j >= i)
        per_row = wa * np.cumsum(wa[::-1])[::-1] + np.arange(len(wa), 0, -1)
    elif cut_larger and len(w[1]) > len(wa):  # column j: the pairs (i, j) of every test graph i
        kind, per_row = "cols", w[1] * wa.sum() + len(wa)
    else:
        per_row = wa * w[1].sum() + len(w[1])
    parts = [Part((kind, name, second, *p.select), p.cost) for p in rows_by_cost(per_row, workers * PARTS_PER_WORKER)]
    normalize_here = bool(getattr(params, "normalize", False)) and not _self_normalized(params, other)
    if other is not None and normalize_here:  # the diagonals of both sets, in parts of their own
        for slot, ws in (("graphs", w[0]), (second, w[1])):
            parts += [Part(("diagonal", name, slot, *p.select), p.cost) for p in rows_by_cost(ws * ws + 1, workers)]
    shape = (len(wa), len(wa) if other is None else len(w[1]))
    merge = _GramMerge(tuple(p.select for p in parts), shape, other is None, normalize_here, graphs.device is Device.CPU)
    return Split(parts, gram_part, merge)


def _self_normalized(params: Any, other: Any) -> bool:
    """Whether a test × train part normalizes its own block: an algorithm without a ``diagonal``
    mode computes each of its graphs' K[a, a] in the part (a graph's own value, the same in any
    set), where diagonal parts would need a call per graph."""
    return other is not None and bool(getattr(params, "normalize", False)) and "diagonal" not in type(params).model_fields


def gram_part(inputs: Mapping[str, Any], params: Any, backend: str, select: tuple) -> Any:
    """On a worker: a block of raw Gram rows (or columns), or raw diagonal entries of one set."""
    from graphops.engine.dispatch import execute
    from graphops.host.registry import get_registry

    kind, name, slot, r0, r1 = select
    algo = get_registry().algorithm(name)
    raw = params.model_copy(update={"normalize": False})
    # a GPU backend works on sets kept on the worker's GPU: its block stays there (the client
    # takes it device to device, or the core copies it to the host: _run_part)
    device = "gpu" if algo.backends[backend].device == "gpu" else None
    if kind in ("rows", "cols"):
        other = inputs.get(slot)
        graphs = inputs["graphs"]
        if kind == "cols":
            both = {"graphs": kept_slice(graphs, device=device), slot: kept_slice(other, r0, r1, device)}
        elif other is None:  # rows r0:r1 of a square matrix: their pairs (i, j >= i)
            both = {"graphs": kept_slice(graphs, r0, r1, device), slot: kept_slice(graphs, r0, None, device)}
        else:
            both = {"graphs": kept_slice(graphs, r0, r1, device), slot: kept_slice(other, device=device)}
        return execute(algo, both, backend, params if _self_normalized(params, other) else raw).result
    subset = kept_slice(inputs[slot], r0, r1, device)
    return execute(algo, {"graphs": subset}, backend, raw.model_copy(update={"diagonal": True})).result


@dataclass(frozen=True)
class _GramMerge:
    selects: tuple
    shape: tuple[int, int]
    square: bool
    normalize: bool
    host: bool  # the caller's sets live on the host: so does the result

    def __call__(self, values: list[Any]) -> Any:
        from graphops.base.device import Device, to_device

        K = self._merged(values)
        return to_device(K, Device.CPU) if self.host else K

    def _merged(self, values: list[Any]) -> Any:
        from graphops.base.device import device_of
        from graphops.engine.gram import mirror_upper, normalize

        xp = device_of(values[0]).xp
        K = xp.empty(self.shape, dtype=xp.float64)
        diag: dict[str, Any] = {"graphs": xp.empty(self.shape[0]), "other": xp.empty(self.shape[1])}
        for (kind, _, slot, r0, r1), v in zip(self.selects, values):
            if kind == "cols":
                K[:, r0:r1] = v
            elif kind == "rows":
                if self.square:
                    K[r0:r1, r0:] = v
                else:
                    K[r0:r1] = v
            else:
                diag["graphs" if slot == "graphs" else "other"][r0:r1] = xp.asarray(v)
        if self.square:
            K = mirror_upper(K)
        if not self.normalize:
            return K
        if self.square:
            d = xp.diag(K).copy()
            return normalize(xp, K, d, d)
        return normalize(xp, K, diag["graphs"], diag["other"])


def cuda_protocol(protocol: str | None = None) -> str:
    """How a local GPU cluster's processes move data: ``ucx`` (NVLink / CUDA IPC between GPUs, no
    copy through host sockets) when asked, or when not said and ``distributed-ucxx`` is installed;
    else ``tcp``. On one H100, jaccard on R-MAT 22 (64 M pairs) took 0.91 s without Dask, 1.05 s
    through a ucx worker and 1.36 s through a tcp one."""
    import importlib.util

    if protocol in (None, "auto"):
        return "ucx" if importlib.util.find_spec("distributed_ucxx") is not None else "tcp"
    return protocol


CONNECT_TIMEOUT = 10.0  # seconds a pipeline waits for a running scheduler to answer


@contextlib.contextmanager
def connect(kind: str | None = None, workers: int | None = None, address: str | None = None,
            protocol: str | None = None, timeout: float | None = None) -> Iterator[Any]:
    """A ``dask.distributed.Client`` for a pipeline run: to a running scheduler (``address``, which
    must answer within ``timeout`` seconds, default :data:`CONNECT_TIMEOUT`, else a
    :class:`~graphops.errors.ClusterUnavailableError` naming it), or to a cluster started here and
    closed after: ``local`` (CPU worker processes, one thread each; ``workers`` of them, default
    one per core) or ``local-cuda`` (dask-cuda, a worker per GPU, talking :func:`cuda_protocol`)."""
    from graphops.base.device import require

    distributed = require("distributed", "running steps on a Dask cluster")
    if address is not None:
        with _client(distributed, address, timeout or CONNECT_TIMEOUT) as client:
            yield client
        return
    if kind == "local-cuda":
        dask_cuda = require("dask_cuda", "a local-cuda cluster (a Dask worker per GPU)")
        protocol = cuda_protocol(protocol)
        if protocol == "ucx":
            require("distributed_ucxx", "a local-cuda cluster with protocol ucx")
        cluster = dask_cuda.LocalCUDACluster(dashboard_address=":0", protocol=protocol)
    else:
        cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                           dashboard_address=":0")
    with cluster, distributed.Client(cluster) as client:
        yield client


def _client(distributed: Any, address: str, timeout: float) -> Any:
    """A client of the scheduler at ``address``; one line naming it and the fix when it does not answer."""
    from graphops.errors import ClusterUnavailableError

    try:
        return distributed.Client(address, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterUnavailableError(
            f"cannot reach a Dask scheduler at {address!r} within {timeout:g} s ({type(exc).__name__}: {exc}). "
            f"Start one there (dask scheduler), check the address (tcp://host:8786), wait longer with "
            f"--cluster-timeout SECONDS (YAML: cluster: {{address: ..., timeout: 30}}), or leave the cluster out "
            f"to run every step here") from None
