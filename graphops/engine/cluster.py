"""The cluster executor: a planned call's parts on a Dask client's workers.

``go.run(name, *inputs, client=client)`` (any ``dask.distributed.Client``: a ``LocalCluster``,
``dask_cuda.LocalCUDACluster`` or a remote scheduler) runs an algorithm that declares
``Algorithm(gram=Gram(...))`` (the core cuts its Gram matrices: :mod:`graphops.engine.gram`) or
``Algorithm(split="pkg.mod:split")``: ``split(inputs, params, workers)`` returns a
:class:`~graphops.engine.parts.Split` (the parts, a module-level ``run(algorithm, inputs, params,
backend, select)`` computing one on a worker from the whole inputs, and a ``merge(values)``) or a
:class:`~graphops.engine.parts.Distributed` for inputs already on the cluster. Dispatch has
validated the call and chosen its backend for every worker (:mod:`graphops.engine.dispatch`);
here the executor

* sends each input to every worker once (``scatter(broadcast=True)``), kept with the input
  object for the next call on the same client; graphs, graph sets and pairs travel field by field
  (:mod:`graphops.engine.wire`), so over ucx their device arrays go GPU to GPU;
* sends the workers the :class:`~graphops.host.algorithm.Algorithm` object itself, so a part
  runs what the caller dispatched (a worker never looks an algorithm up by name);
* submits the parts costliest first (Dask's priorities; idle workers steal queued ones), so
  hub pairs and big graphs do not end up last on one worker;
* gathers the values in part order, with the progress report, and wraps the merged result as a
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
from typing import Any, Callable, Iterator, Mapping

from graphops.base.device import Device
from graphops.engine.parts import Distributed, Split
from graphops.engine.plan import Outcome, Plan, wrap_result
from graphops.errors import InputError
from graphops.host.algorithm import Algorithm, load_target

__all__ = ["run_on_cluster", "worker_status", "connect", "cuda_protocol", "when_closing", "CONNECT_TIMEOUT"]

_SENT: "weakref.WeakKeyDictionary[Any, dict[str, Any]]" = weakref.WeakKeyDictionary()
_PLACED: "weakref.WeakKeyDictionary[Any, dict[tuple, dict[Any, str]]]" = weakref.WeakKeyDictionary()


def worker_status(client: Any) -> dict[str, tuple[bool, str]]:
    """Each worker's address -> whether it has a usable GPU and why not (what the backend choice
    for a cluster reads); an error when there are no workers."""
    status = client.run(_device_status)
    if not status:
        raise InputError("the Dask cluster has no workers; start some (or wait for them) and call again")
    return status


def _device_status() -> tuple[bool, str]:  # runs on each worker
    from graphops.base.device import gpu_status

    return gpu_status()


def _run_part(run: Callable, algorithm: Any, inputs: Mapping[str, Any], params: Any, backend: str, select: Any,
              stop: str, host: bool = False) -> tuple:
    """On a worker: one part's value, its seconds and the worker's address. The work ends at its
    next chunk boundary once the call's stop event is set (Ctrl-C or an error on the client).
    ``host``: a device array value is copied to the host here (the client has no GPU)."""
    from distributed import get_worker

    from graphops.base.device import Device, to_device
    from graphops.engine.parts import stoppable

    t0 = time.perf_counter()
    value = stoppable(stop, run, algorithm, inputs, params, backend, select)
    if host and hasattr(value, "__cuda_array_interface__"):  # a device array
        value = to_device(value, Device.CPU)
    return value, time.perf_counter() - t0, get_worker().address


def _stop_event(client: Any) -> Any:
    """A call's stop event: set on Ctrl-C or an error, read by its running tasks (:func:`stoppable`)."""
    from distributed import Event

    return Event(f"graphops-stop-{uuid.uuid4().hex}", client=client)


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


def run_on_cluster(planned: Plan) -> Outcome:
    """Run a validated plan's parts on its client's workers (its backend was chosen for every
    worker): the algorithm's ``gram`` declaration or its ``split`` cuts the work."""
    from graphops.engine.gram import gram_split
    from graphops.engine.wire import register_on

    algo, client, t0 = planned.algorithm, planned.client, time.perf_counter()
    if algo.backends[planned.backend].cluster:
        return _run_whole(planned)
    register_on(client)  # inputs travel field by field (device buffers over ucx), not pickled whole
    n_workers = max(planned.workers, 1)
    inputs, params, name = dict(planned.inputs), planned.params, planned.backend
    split = gram_split(algo, inputs, params, n_workers) if algo.gram is not None else \
        load_target(algo.split)(inputs, params, n_workers)
    progress = getattr(params, "progress", None)
    if isinstance(split, Distributed):
        result, details = _run_distributed(algo, split, inputs, params, name, client, n_workers, progress)
    else:
        result, details = _run_parts(planned, split, n_workers, progress)
    return Outcome(result, algo.name, name, algo.backends[name].device, time.perf_counter() - t0, planned.reason,
                   0.0, details)


def _run_parts(planned: Plan, split: Split, n_workers: int, progress: bool | None) -> tuple[Any, dict]:
    from graphops.base.work import _Bar

    algo, client, inputs, name = planned.algorithm, planned.client, planned.inputs, planned.backend
    sent, placed = _send(client, inputs), _placed(client, inputs)
    host = algo.backends[name].device != "gpu" or not _usable_gpu_here()
    order = sorted(range(len(split.parts)), key=lambda k: -split.parts[k].cost)
    stop = _stop_event(client)
    futures: dict[Any, int] = {}
    for rank, k in enumerate(order):
        select = split.parts[k].select
        where = placed.get(_hashable(select))
        fut = client.submit(_run_part, split.run, algo, sent, planned.params, name, select, stop.name, host,
                            pure=False, priority=len(order) - rank,
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

    _wait(client, list(futures), stop, _Bar(progress, f"{algo.name} on {n_workers} Dask worker(s)", len(futures)),
          keep)
    details = {"workers": workers, "tasks": len(split.parts), "parts": len(split.parts)}
    return wrap_result(algo, name, split.merge(values), inputs, split.views), details


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


_PREPARED: "weakref.WeakKeyDictionary[Any, dict[int, tuple[Any, Any]]]" = weakref.WeakKeyDictionary()


def _prepared_for(client: Any, obj: Any, target: str) -> Any:
    """A cluster backend's ``prepare(obj, client)``, once per input and client."""
    kept = _PREPARED.setdefault(client, {})
    key = (id(obj), target)
    hit = kept.get(key)
    if hit is not None and hit[0]() is obj:
        return hit[1]
    value = load_target(target)(obj, client)
    kept[key] = (weakref.ref(obj), value)
    return value


def _run_whole(planned: Plan) -> Outcome:
    """A backend that runs the whole call on the cluster itself (``Backend(cluster=True)``, a
    distributed library's own code): ``fn(client, *args, params)``, called here, its arguments
    prepared once per input and client (pair slots as pair indexes on its device), its result
    wrapped as any backend's."""
    from graphops.engine.local import prepare
    from graphops.host.algorithm import Result

    from graphops.model.daskgraph import DaskGraph

    algo, client = planned.algorithm, planned.client
    spec = algo.backends[planned.backend]
    if any(isinstance(obj, DaskGraph) for obj in planned.inputs.values()):
        raise InputError(f"{algo.name}: backend {planned.backend!r} takes graphs held here; a DaskGraph (edge files "
                         f"read by the workers) runs on graphops' own backends: {', '.join(algo.own_backends())}")
    t0 = time.perf_counter()
    args = prepare(planned, lambda obj, spec: obj.csr(Device(spec.device)) if spec.prepare is None
                   else _prepared_for(client, obj, spec.prepare))
    t1 = time.perf_counter()
    raw = load_target(spec.target)(client, *args, planned.params)
    details = dict(raw.details) if isinstance(raw, Result) else {}
    raw = raw.value if isinstance(raw, Result) else raw
    result = wrap_result(algo, planned.backend, raw, planned.inputs, args)
    details.setdefault("note", f"{algo.name} by {planned.backend} on the cluster's {planned.workers} worker(s)")
    return Outcome(result, algo.name, planned.backend, spec.device, time.perf_counter() - t1, planned.reason,
                   t1 - t0, details)


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

_CLOSING: "weakref.WeakKeyDictionary[Any, list[Callable[[], Any]]]" = weakref.WeakKeyDictionary()


def when_closing(client: Any, fn: Callable[[], Any]) -> None:
    """Run ``fn()`` before ``client`` closes, while its workers still answer, when graphops opened
    it (:func:`connect`: pipelines, ``graphops bench``): e.g. a distributed library's communicator
    that a cluster backend started. A caller's own client is the caller's to tidy."""
    _CLOSING.setdefault(client, []).append(fn)


def _closing(client: Any) -> None:
    import logging

    for fn in reversed(_CLOSING.pop(client, [])):
        try:
            fn()
        except Exception as exc:  # tidying up must not hide the run's own outcome
            logging.getLogger("graphops").debug("closing the Dask client: %s: %s", type(exc).__name__, exc)


@contextlib.contextmanager
def connect(kind: str | None = None, workers: int | None = None, address: str | None = None,
            protocol: str | None = None, timeout: float | None = None) -> Iterator[Any]:
    """A ``dask.distributed.Client`` for a pipeline run: to a running scheduler (``address``, which
    must answer within ``timeout`` seconds, default :data:`CONNECT_TIMEOUT`, else a
    :class:`~graphops.errors.ClusterUnavailableError` naming it), or to a cluster started here and
    closed after: ``local`` (CPU worker processes, one thread each; ``workers`` of them, default
    one per core) or ``local-cuda`` (dask-cuda, a worker per GPU, talking :func:`cuda_protocol`;
    ``workers``: the first that many GPUs, default all)."""
    from graphops.base.device import require

    distributed = require("distributed", "running steps on a Dask cluster")
    if address is not None:
        with _client(distributed, address, timeout or CONNECT_TIMEOUT) as client:
            try:
                yield client
            finally:
                _closing(client)
        return
    if kind == "local-cuda":
        dask_cuda = require("dask_cuda", "a local-cuda cluster (a Dask worker per GPU)")
        protocol = cuda_protocol(protocol)
        if protocol == "ucx":
            require("distributed_ucxx", "a local-cuda cluster with protocol ucx")
        cluster = dask_cuda.LocalCUDACluster(dashboard_address=":0", protocol=protocol, n_workers=workers)
    else:
        cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                           dashboard_address=":0")
    with cluster, distributed.Client(cluster) as client:
        try:
            yield client
        finally:
            _closing(client)


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
