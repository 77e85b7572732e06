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

* runs the call in this process instead when the split answers :class:`~graphops.engine.parts.Here`
  (a Gram call whose cost estimate says the cluster would not pay: :mod:`graphops.engine.gramcost`),
  the outcome's ``details["cluster"]`` saying ``cluster not used: <why>`` (``cluster used: <why>``
  when an estimate chose the cluster);
* sends each input (or what the split sends instead) to every worker once, and each part's own
  data to one worker, kept for the next call on the same client (:mod:`graphops.engine.placing`);
  graphs, graph sets, pairs and a split's :class:`~graphops.engine.parts.Shipped` objects travel
  field by field (:mod:`graphops.engine.wire`), so over ucx their device arrays go GPU to GPU;
* sends the workers the :class:`~graphops.host.algorithm.Algorithm` object itself, so a part
  runs what the caller dispatched (a worker never looks an algorithm up by name);
* submits the parts costliest first (Dask's priorities; idle workers steal queued ones), so
  hub pairs and big graphs do not end up last on one worker;
* takes each part's answer as the part ends where a worker on this machine posted it
  (:mod:`graphops.engine.mailbox`), else fetches the values as they finish, several at a time,
  with the progress report (a merge with an
  ``add`` takes each as it comes), and wraps the merged result as a
  backend's result is wrapped (the caller's frame family and ids); Ctrl-C cancels the tasks, and the
  parts already running stop at their next chunk boundary (a stop event they poll);
* sends a repeated call's parts to the workers that ran them before (a hint: they keep the
  slices of the inputs the parts took, and what the backend derived from them); a GPU worker's
  device arrays go to a caller with a GPU device to device, else through the host;
* reports the tasks each worker ran and their seconds in the outcome's ``details["workers"]``
  (``{address: {"tasks": n, "seconds": s, "phases_s": {...}}}``; a part is one task; ``phases_s``: the
  parts' own phases, :func:`graphops.base.timing.phase`, added up), the same for both kinds of
  call; a call cut into parts also reports its phases (``phases_s``: split, send, parts, merge,
  wrap, and the busiest worker's part seconds) and the bytes it moved each way.

A worker lost mid-run is Dask's to survive: its tasks run again elsewhere, and a part's value
does not depend on where it ran (a part whose own data was lost with the worker gets it sent
again, once); when Dask gives up, one line names the lost worker, and a part out of device memory
is reported with its part, worker and the bytes it asked for (:mod:`graphops.engine.faults`).
Nothing here imports Dask until a client is given.
"""
from __future__ import annotations

import contextlib
import functools
import os
import time
import uuid
import weakref
from typing import Any, Callable, Iterator, Mapping

from graphops.base.device import Device, free_pooled_device_memory, gpu_available
from graphops.engine.landing import Landed, confirmed, done, landed_value, landings
from graphops.engine.landing import release as release_staging
from graphops.engine.mailbox import mailbox
from graphops.engine.parts import Distributed, Here, Split
from graphops.engine.placing import (answers, data_lost, hashable, nbytes, on_workers, place_data, placed, release,
                                     running, send)
from graphops.engine.plan import Outcome, Plan, wrap_result
from graphops.errors import InputError, PluginError
from graphops.host.algorithm import Algorithm, load_target

__all__ = ["run_on_cluster", "worker_status", "connect", "cuda_protocol", "when_closing", "CONNECT_TIMEOUT"]

_STATUS: "weakref.WeakKeyDictionary[Any, tuple[frozenset, dict]]" = weakref.WeakKeyDictionary()


def worker_status(client: Any, listed: Mapping[str, Any] | None = None) -> dict[str, tuple[bool, str]]:
    """Each worker's address -> whether it has a usable GPU and why not (what the backend choice
    for a cluster reads); an error when there are no workers. Asked of the workers once while the
    client's list of workers (``listed``: the scheduler's, else asked here) stays the same (a
    worker's devices do not change while it lives; the question is a round trip to every worker:
    3 ms of an 8 ms call on two CPU workers)."""
    known = frozenset(client.scheduler_info(n_workers=-1).get("workers", ()) if listed is None else listed)
    hit = _STATUS.get(client)
    if hit is not None and hit[0] == known and known:
        return hit[1]
    status = answers(client, _device_status)
    if not status:
        raise InputError("the Dask cluster has no workers; start some (or wait for them) and call again")
    _STATUS[client] = (frozenset(status), status)
    return status


def _device_status() -> tuple[bool, str]:  # runs on each worker
    from graphops.base.device import gpu_status

    return gpu_status()


def _run_part(run: Callable, algorithm: Any, inputs: Mapping[str, Any], params: Any, backend: str, select: Any,
              stop: str, host: bool = False, into: Any = None, post: Any = None, **data: Any) -> tuple:
    """On a worker: one part's value, its seconds, the worker's address, its own phases and when
    it started and ended (wall clock: the caller's timeline of the call, :func:`_timeline`). The work ends at its
    next chunk boundary once the call's stop event is set (Ctrl-C or an error on the client).
    ``host``: a device array value is copied to the host here (the client has no GPU). ``into``:
    where the value lands in the caller's GPU memory when it can (:mod:`graphops.engine.landing`).
    ``post``: ``(where, part)``, the caller's mailbox on this machine, which gets the answer as
    soon as it is made when it is small (:mod:`graphops.engine.mailbox`); Dask gets it all the
    same. ``data``: the part's own data (its ``data=`` argument), when it has some."""
    from distributed import get_worker

    from graphops.base.device import Device, to_device
    from graphops.engine.faults import describe_part, reported_memory
    from graphops.engine.parts import stoppable

    from graphops.base.timing import phase, phases

    t0, started = time.perf_counter(), time.time()
    with phases() as spent:
        with reported_memory(algorithm.name, lambda: describe_part(select, algorithm), lambda: get_worker().address):
            value = stoppable(stop, functools.partial(run, **data), algorithm, inputs, params, backend, select)
        if host and hasattr(value, "__cuda_array_interface__"):  # a device array
            with phase("to host"):
                value = to_device(value, Device.CPU)
        elif into is not None:
            with phase("into the caller's memory"):
                value = into.receive(value)
    answer = (value, time.perf_counter() - t0, get_worker().address, dict(spent), (started, time.time()))
    if post is not None:
        post[0].send(post[1], answer)
    return answer


def _stop_event(client: Any) -> Any:
    """A call's stop event: set on Ctrl-C or an error, read by its running tasks (:func:`stoppable`)."""
    from distributed import Event

    return Event(f"graphops-stop-{uuid.uuid4().hex}", client=client)


def run_on_cluster(planned: Plan) -> Outcome:
    """Run a validated plan's parts on its client's workers (its backend was chosen for every
    worker): the algorithm's ``gram`` declaration or its ``split`` cuts the work."""
    from graphops.engine.gram import gram_split
    from graphops.engine.wire import register_on

    from graphops.engine.prompt import prompt_client

    algo, client, t0 = planned.algorithm, planned.client, time.perf_counter()
    prompt_client(client)  # once per client: its messages sent within a millisecond, not batched
    if algo.backends[planned.backend].cluster:
        return _run_whole(planned)
    register_on(client)  # inputs travel field by field (device buffers over ucx), not pickled whole
    n_workers = max(planned.workers, 1)
    inputs, params, name = dict(planned.inputs), planned.params, planned.backend
    split = gram_split(algo, inputs, params, n_workers, _site(planned)) if algo.gram is not None else \
        _split(algo, inputs, params, n_workers, name)
    if isinstance(split, Here):  # the cluster would not pay: this process runs the call
        return _instead_here(planned, split)
    free_pooled_device_memory()  # what this process's pool keeps is not held from a worker sharing its GPU
    progress = getattr(params, "progress", None)
    t_split = _synchronized() - t0
    if isinstance(split, Distributed):
        result, details = _run_distributed(algo, split, inputs, params, name, client, n_workers, progress)
    else:
        result, details = _run_parts(planned, split, n_workers, progress)
        if split.reason:
            details["cluster"] = f"cluster used: {split.reason}"
        details["phases_s"] = {"split": t_split, **details["phases_s"]}
    return Outcome(result, algo.name, name, algo.backends[name].device, time.perf_counter() - t0, planned.reason,
                   0.0, details)


def _site(planned: Plan) -> Any:
    """What a Gram call's cost estimate knows of the cluster (:class:`~graphops.engine.gramcost.Site`),
    or ``None`` (no estimate: the call is cut) when the algorithm declares none or its backend
    cannot run in this process (e.g. GPU workers, no usable GPU here)."""
    from graphops.engine.choose import _usable  # this process's check of one backend
    from graphops.engine.gramcost import Site, protocol_of

    algo, client = planned.algorithm, planned.client
    if algo.gram.seconds is None or not _usable(algo.backends[planned.backend])[0]:
        return None
    unsent = sum(nbytes(obj) for obj in planned.inputs.values() if not on_workers(client, obj))
    return Site(protocol_of(client), planned.backend, unsent)


def _instead_here(planned: Plan, here: Here) -> Outcome:
    """A call whose split answered :class:`Here`: run in this process by the backend chosen for the
    workers; the outcome's ``details["cluster"]`` and reason say why the cluster was not used."""
    import dataclasses

    from graphops.engine.choose import _usable  # this process's check of one backend
    from graphops.engine.local import run_here

    algo, line = planned.algorithm, f"cluster not used: {here.reason}"
    ok, why = _usable(algo.backends[planned.backend])
    if not ok:
        raise PluginError(f"{algo.name}: its split answered Here ({here.reason}), but backend {planned.backend!r} "
                          f"cannot run in this process: {why}. A split answers Here only for a backend that runs "
                          f"here too", plugin=algo.plugin)
    return run_here(dataclasses.replace(planned, client=None, workers=0, kept=line))


def _split(algo: Algorithm, inputs: dict, params: Any, n_workers: int, backend: str) -> Any:
    """The algorithm's ``split(inputs, params, workers)``, given ``backend=`` when it takes it (what
    the workers receive may depend on the backend chosen for them)."""
    import inspect

    fn = load_target(algo.split)
    try:
        takes = "backend" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        takes = False
    return fn(inputs, params, n_workers, backend=backend) if takes else fn(inputs, params, n_workers)


def _run_parts(planned: Plan, split: Split, n_workers: int, progress: bool | None) -> tuple[Any, dict]:
    """The parts on the workers, gathered in order and merged. A part's own data lost with its
    worker (its only copy: Dask cancels the parts that needed it), or an input lost with every
    worker that held it (Dask forgets the parts that needed it), is sent again and the call run
    again, once; lost a second time, one line names the workers and the fix. A part Dask dropped
    for another reason is said in one line too."""
    from distributed import CancelledError

    from graphops.engine.faults import LOST_FIX, dropped_by_dask
    from graphops.engine.placing import sent_lost
    from graphops.errors import ClusterWorkerLostError

    what = f"{planned.algorithm.name} on {n_workers} Dask worker(s)"
    for attempt in (0, 1):
        try:
            return _parts_once(planned, split, n_workers, progress, fresh=attempt > 0)
        except (CancelledError, OSError) as exc:  # OSError: a worker's connection closed while sending it data
            lost = data_lost(planned.client, split, cancelled="lost dependencies" in str(exc))
            sent = planned.inputs if split.sent is None else split.sent  # what _parts_once sends
            gone = isinstance(exc, CancelledError) and sent_lost(planned.client, sent.values())
            if not lost and not gone and not isinstance(exc, OSError):
                dropped = dropped_by_dask(exc, what, lambda: _workers_now(planned.client))
                if dropped is None:
                    raise
                raise dropped from exc
            held = "parts' data" if lost or not gone else "inputs"  # (lost {""}: a part's data, its worker unknown)
            lost.discard("")
            if attempt:
                last = ", ".join(sorted(lost)) or (f"a connection closed: {exc}" if isinstance(exc, OSError) else
                                                    "workers whose data was lost")
                raise ClusterWorkerLostError(f"{what} failed: the workers holding its {held} died twice (the last: "
                                             f"{last}). {LOST_FIX}", worker=max(lost, default=None)) from exc
    raise AssertionError("unreachable")


def _parts_once(planned: Plan, split: Split, n_workers: int, progress: bool | None,
                fresh: bool = False) -> tuple[Any, dict]:
    """One try of :func:`_run_parts`. The scheduler's workers are the plan's list (asked moments
    before), asked again when ``fresh`` (a second try: a worker was lost since) or when inputs were
    sent first (that took time, and a worker may have left meanwhile)."""
    from graphops.base.work import _Bar

    algo, client, inputs, name = planned.algorithm, planned.client, planned.inputs, planned.backend
    moved = {"to_workers": 0, "from_workers": 0}
    t0 = time.perf_counter()
    sent, where_ran = send(client, inputs if split.sent is None else split.sent, moved), placed(client, inputs)
    listed = None if fresh or moved["to_workers"] else planned.listed  # one round trip a call, as a rule
    if listed is None:
        listed = client.scheduler_info(n_workers=-1)["workers"]
    data = place_data(client, split, moved, listed)
    t1, submitted = time.perf_counter(), time.time()
    host = algo.backends[name].device != "gpu" or not gpu_available()  # the workers' device arrays: host copies
    order = sorted(range(len(split.parts)), key=lambda k: -split.parts[k].cost)
    stop = _stop_event(client)
    futures: dict[Any, int] = {}
    start = getattr(split.merge, "start", None)  # a merge that prepares while the parts run (before they are
    if start is not None:                          # submitted: a failure here leaves no part running)
        start()
    homes = _homes(split, order, data, where_ran, running(client, listed))
    staging, lands = landings(client, split.merge, split.parts, host)
    box = mailbox()  # small answers posted here by the workers on this machine as their parts end
    post = None if box is None else box.post()
    for rank, k in enumerate(order):
        select = split.parts[k].select
        where = homes.get(k)
        extra = {"data": data[k][0]} if k in data else {}
        if k in lands:
            extra["into"] = lands[k]
        if post is not None:
            extra["post"] = (post, k)
        fut = client.submit(_run_part, split.run, algo, sent, planned.params, name, select, stop.name, host,
                            pure=False, priority=len(order) - rank, **extra,
                            **({} if where is None else {"workers": [where], "allow_other_workers": True}))
        futures[fut] = k
    values: list[Any] = [None] * len(split.parts)
    workers: dict[str, dict[str, float]] = {}
    add = getattr(split.merge, "add", None)  # a merge that takes each value as it comes
    stamps: list[tuple[float, float, float]] = []  # each part's (start, end) on its worker and its value's arrival
    landed: list[int] = []  # the parts whose values the workers wrote into this process's memory
    missed: list[int] = []  # the parts whose values could have, but came as messages

    def keep(fut: Any, got: tuple) -> None:
        value, seconds, where, spent, (started, ended) = got
        stamps.append((started, ended, time.time()))
        if isinstance(value, Landed):
            landed.append(futures[fut])
            value = landed_value(staging, lands[futures[fut]], value)
        elif futures[fut] in lands and lands[futures[fut]].fits(value):
            missed.append(futures[fut])  # could have landed, came as a message
        moved["from_workers"] += nbytes(value)
        values[futures[fut]] = None if add is not None and add(futures[fut], value) else value  # placed: not kept twice
        where_ran[hashable(split.parts[futures[fut]].select)] = where
        mine = workers.setdefault(where, {"tasks": 0, "seconds": 0.0})
        mine["tasks"] += 1
        mine["seconds"] += seconds
        if spent:  # the parts' own phases (graphops.base.timing.phase), per worker
            own = mine.setdefault("phases_s", {})
            for name, took in spent.items():
                own[name] = own.get(name, 0.0) + took

    try:
        posted = _wait(client, list(futures), stop,
                       _Bar(progress, f"{algo.name} on {n_workers} Dask worker(s)", len(futures)), keep, box,
                       {k: fut for fut, k in futures.items()})
    finally:
        if box is not None:
            box.close()
    t2 = time.perf_counter()
    try:
        merged = split.merge(values)
        t3 = _synchronized()
    finally:
        if staging is not None:  # every part has ended and the values are copied out: the next call may write,
            unconfirmed = [fut for fut in futures if fut.status != "finished"]  # once Dask has them all done
            futures.clear()  # released: a finished part is not run again (into the array) if its worker dies now
            done(staging, len(landed), client, len(missed), len(unconfirmed))
            if staging.confirming:
                _once_done(unconfirmed, functools.partial(confirmed, staging))
    result = wrap_result(algo, name, merged, inputs, split.views)
    t4 = _synchronized()
    details = {"workers": workers, "tasks": len(split.parts), "parts": len(split.parts), "landed_parts": len(landed),
               "posted_parts": posted,
               "sent_to_workers_bytes": moved["to_workers"], "gathered_from_workers_bytes": moved["from_workers"],
               # send: inputs and part data not yet on the workers; parts: submitted to the last value here
               "phases_s": {"send": t1 - t0, "parts": t2 - t1, **_timeline(submitted, stamps), "merge": t3 - t2,
                            "wrap": t4 - t3,
                            "busiest worker's parts": max((w["seconds"] for w in workers.values()), default=0.0)}}
    return result, details


def _homes(split: Split, order: list[int], data: dict[int, tuple[Any, str]], where_ran: dict, live: list[str]) -> dict:
    """Part k -> the worker asked to run it: where its data is; else where it ran before (that
    worker keeps the slices it took and what the backend derived from them) while that worker's
    estimated work stays within its share, else the least loaded worker, costliest parts first.
    A part with neither data nor a worker it ran on is left to Dask (unrestricted, it may wait in
    the scheduler's queue for whichever worker frees up first; a restricted one is assigned at
    once and stays there). The check of shares is what the hints need: Dask once queued all the
    parts of a Gram call on one of two GPU workers, and the next calls followed them there."""
    load = dict.fromkeys(live, 0.0)
    share = sum(split.parts[k].cost for k in order) / max(len(live), 1)
    homes: dict[int, str] = {}
    for k in order:
        cost = split.parts[k].cost
        if k in data:
            where = data[k][1]
        else:
            where = where_ran.get(hashable(split.parts[k].select))
            if where is None:
                continue  # Dask's to place
            if where not in load or (load[where] + cost > share * 1.05 and load[where] > 0):
                where = min(load, key=load.__getitem__, default=None)  # gone, or it would overload its worker
        if where is not None:
            homes[k] = where
            if where in load:
                load[where] += cost
    return homes


def _timeline(submitted: float, stamps: list[tuple[float, float, float]]) -> dict[str, float]:
    """Where the parts phase went, from the parts' wall-clock stamps (one host's clock for a local
    cluster; a remote one's clocks may differ by their skew): from submitting to the first part
    starting on a worker (Dask's scheduling), from then to the last part ending (the workers'
    span), and from that end to its value being here (the last transfer and Dask's bookkeeping)."""
    if not stamps:
        return {}
    first = min(s for s, _, _ in stamps)
    last = max(e for _, e, _ in stamps)
    arrived = max(a for _, _, a in stamps)
    return {"until a part started": max(first - submitted, 0.0), "parts running": max(last - first, 0.0),
            "after the last part ended": max(arrived - last, 0.0)}


def _synchronized() -> float:
    """The time once this process's device work is done (phases of a call measured here)."""
    from graphops.base.device import synchronize

    synchronize()
    return time.perf_counter()


def _wait(client: Any, futures: list[Any], stop: Any, bar: Any, each: Callable[[Any, Any], None] | None = None,
          box: Any = None, keys: Mapping[Any, Any] | None = None) -> int:
    """Wait for a call's futures, advancing ``bar``; ``each(future, value)`` as they finish (a
    task's error is raised here): posted to ``box`` (a :class:`~graphops.engine.mailbox.Mailbox`;
    ``keys``: a post's key -> its future) where the worker did, else fetched from Dask. Returns how
    many came by post. On Ctrl-C or an error: set the call's stop event (running tasks end at
    their next chunk boundary), cancel the futures, re-raise."""
    from distributed import as_completed

    from graphops.engine.faults import worker_lost

    try:
        if each is None:  # the values stay on the workers (a Dask frame's partitions): only errors come here
            for done, fut in enumerate(as_completed(futures), 1):
                _raise_if_failed(fut)
                bar.advance(done)
        elif box is not None:
            return _posted_or_fetched(client, futures, bar, each, box, keys or {})
        else:  # values fetched as they finish, several at a time (one fetch after another was 16 round trips)
            for done, (fut, value) in enumerate(as_completed(futures, with_results=True), 1):
                _raise_if_failed(fut, value)
                each(fut, value)
                bar.advance(done)
        return 0
    except BaseException as exc:
        stop.set()
        client.cancel(futures)
        lost = worker_lost(exc, getattr(bar, "what", "a call on the Dask cluster"))
        if lost is not None:  # Dask gave up on a task whose workers died: one line, and the fix
            raise lost from exc
        raise
    finally:
        bar.close()


def _workers_now(client: Any) -> int | None:
    """How many workers the scheduler has now; ``None`` when it cannot be asked."""
    try:
        return len(client.scheduler_info(n_workers=-1)["workers"])
    except Exception:
        return None


def _once_done(futures: list[Any], fn: Callable[[], None]) -> None:
    """``fn()`` once Dask reports every one of ``futures`` done (finished, failed or cancelled),
    on Dask's callback thread. A future whose worker died after it finished ("lost") is Dask's to
    run again: it is looked at again every half second, for a minute at most (then ``fn`` is never
    called: what it frees stays held, as after a failed call)."""
    import threading

    left, lock, looks = [len(futures)], threading.Lock(), {}

    def one(fut: Any) -> None:
        if fut.status in ("pending", "lost"):
            looks[fut.key] = looks.get(fut.key, 0) + 1
            if looks[fut.key] <= 120:
                timer = threading.Timer(0.5, fut.add_done_callback, (one,))
                timer.daemon = True
                timer.start()
            return
        with lock:
            left[0] -= 1
            last = left[0] == 0
        if last:
            fn()

    for fut in futures:
        fut.add_done_callback(one)


# How often a call waiting on its mailbox looks at its futures without a wake-up (a future whose
# worker was lost after it finished is finished again without one).
SCAN_S = 0.05


def _posted_or_fetched(client: Any, futures: list[Any], bar: Any, each: Callable[[Any, Any], None], box: Any,
                       keys: Mapping[Any, Any]) -> int:
    """:func:`_wait`'s values as they come: a posted answer at once, any other once Dask has its
    future done (several fetched at a time; a done future rings the mailbox); a failed or
    cancelled future raises here. Returns how many were posted."""
    pending, posted = set(futures), 0

    def took(fut: Any, value: Any) -> None:
        pending.discard(fut)
        each(fut, value)
        bar.advance(len(futures) - len(pending))

    def take(posts: list[tuple[Any, Any]]) -> None:  # the posts of parts still waited for (not a second time)
        nonlocal posted
        for key, answer in posts:
            if keys.get(key) in pending:
                posted += 1
                took(keys[key], answer)

    for fut in futures:
        fut.add_done_callback(box.knock)
    while pending:
        take(box.wait(SCAN_S))
        done = [fut for fut in futures if fut in pending and fut.status not in ("pending", "lost")]
        for fut in done:
            _raise_if_failed(fut)
        take(box.take())  # posted before their tasks returned: here by now
        rest = [fut for fut in done if fut in pending]
        if rest:
            for fut, value in zip(rest, client.gather(rest)):
                took(fut, value)
    return posted


def _raise_if_failed(fut: Any, value: Any = None) -> None:
    """A finished future's error, or its cancellation (Dask hands a cancelled one back, with the
    ``CancelledError`` as its value, instead of raising), raised here; nothing fetched."""
    from distributed import CancelledError

    if isinstance(value, CancelledError):
        raise value
    if fut.status in ("error", "cancelled"):
        fut.result()  # raises the task's own error, or the cancellation and its reason
        raise CancelledError(fut.key)  # (it always raises: never a silent pass)


def _run_distributed(algo: Algorithm, split: Distributed, inputs: Mapping[str, Any], params: Any, backend: str,
                     client: Any, n_workers: int, progress: bool | None) -> tuple[Any, dict]:
    """A plugin's own task graph on distributed inputs: waited for with the progress bar, the
    per-worker task seconds read from the scheduler's task stream."""
    from distributed import get_task_stream

    from graphops.base.work import _Bar

    from graphops.engine.faults import dropped_by_dask

    stop = _stop_event(client)
    what = f"{algo.name} on {n_workers} Dask worker(s)"
    with get_task_stream(client=client) as stream:
        futures, finish = split.submit(client, dict(inputs), params, backend, n_workers, stop.name)
        try:
            _wait(client, futures, stop, _Bar(progress, what, len(futures)))
        except Exception as exc:  # a task Dask dropped on its own (what it needed died with every worker holding it)
            dropped = dropped_by_dask(exc, what, lambda: _workers_now(client))
            if dropped is None:
                raise
            raise dropped from exc
    from dask.utils import key_split

    workers: dict[str, dict[str, Any]] = {}
    for task in stream.data:
        mine = workers.setdefault(task["worker"], {"tasks": 0, "seconds": 0.0, "phases_s": {}})
        mine["tasks"] += 1
        own = mine["phases_s"]
        for s in task.get("startstops", ()):  # its computing by the task's function, its inputs' transfers
            name = key_split(task["key"]) if s["action"] == "compute" else s["action"]
            own[name] = own.get(name, 0.0) + s["stop"] - s["start"]
            if s["action"] == "compute":
                mine["seconds"] += s["stop"] - s["start"]
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


# How the processes of a ucx cluster graphops starts (and a calling process that joins one over
# ucx) progress UCX, unless the environment already says (either variable set). distributed-ucxx's
# default, "blocking", keeps each process's event loop thread busy while idle (a whole core, taking
# the interpreter lock from the process's own work): on 2 x H200 a one-GPU sp_kernel call of
# 1,000 x 20,000 took 13.4 ms with a 2-worker ucx cluster up in the process (6.9 ms without one),
# and 7.8 ms with UCX progressed on its own thread and completions handed over by a notifier
# thread, whose event loop then idles at 0.04 of a core (docs/guide/dask.md).
UCX_PROGRESS = {"UCXPY_PROGRESS_MODE": "thread", "UCXPY_ENABLE_PYTHON_FUTURE": "1"}


def ucx_progress() -> None:
    """Put :data:`UCX_PROGRESS` in this process's environment before a ucx cluster starts here or a
    client joins one, unless it sets either variable already (its own choice is kept). They stay:
    UCX reads them once per process, at its first connection, and a worker process started later
    (one a nanny restarts, or a cluster scaled up) takes the environment as it is then."""
    if not any(name in os.environ for name in UCX_PROGRESS):
        os.environ.update(UCX_PROGRESS)


CONNECT_TIMEOUT = 10.0  # seconds a pipeline waits for a running scheduler to answer

_CLOSING: "weakref.WeakKeyDictionary[Any, list[Callable[[], Any]]]" = weakref.WeakKeyDictionary()


def when_closing(client: Any, fn: Callable[[], Any]) -> None:
    """Run ``fn()`` before ``client`` closes, while its workers still answer, when graphops opened
    it (:func:`connect`: pipelines, ``graphops bench``): e.g. a distributed library's communicator
    that a cluster backend started. A caller's own client is the caller's to tidy."""
    _CLOSING.setdefault(client, []).append(fn)


def _closing(client: Any) -> None:
    import logging

    release(client)
    release_staging(client)
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

    if isinstance(workers, (list, tuple)):
        raise InputError(f"connect: workers={list(workers)!r} is a list of cluster sizes, which graphops bench sweeps "
                         f"(a cluster of each size in turn); a cluster has one size: give one count "
                         f"(workers={max(workers, default=1)})")
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
        _check_gpu_count(workers)
        protocol = cuda_protocol(protocol)
        if protocol == "ucx":
            require("distributed_ucxx", "a local-cuda cluster with protocol ucx")
            ucx_progress()
        cluster = dask_cuda.LocalCUDACluster(dashboard_address=":0", protocol=protocol, n_workers=workers,
                                             silence_logs=_workers_log_level())
    else:
        _check_cpu_count(workers)
        cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                           dashboard_address=":0", silence_logs=_workers_log_level())
    with cluster, distributed.Client(cluster) as client:
        from graphops.engine.prompt import prompt_cluster

        prompt_cluster(client)  # graphops' own cluster: its workers' streams prompt too
        try:
            yield client
        finally:
            _closing(client)


def _check_gpu_count(workers: int | None) -> None:
    """A local-cuda cluster of ``workers`` needs that many GPUs here (dask-cuda would put two workers
    on one GPU and the speed-up per worker would be a fiction)."""
    if workers is None:
        return
    from dask_cuda.utils import get_n_gpus

    have = get_n_gpus()
    if workers > have:
        raise InputError(f"cluster workers: {workers}, but this machine has {have} GPU(s) and a local-cuda cluster "
                         f"starts one worker per GPU: give workers: {have} or fewer (or leave workers out: all GPUs)")


# A local cluster's worker processes per core at most: each is a Python process with its own
# imports (about 0.5 s and 150 MB to start); 4,096 of them on 2 cores ran past two minutes
# without a line and left thousands of semaphores behind.
PROCESSES_PER_CORE = 4


def local_worker_limit() -> tuple[int, int]:
    """This machine's cores, and the most workers a local cluster may start here (:data:`PROCESSES_PER_CORE`)."""
    cores = os.cpu_count() or 1
    return cores, PROCESSES_PER_CORE * cores


def _check_cpu_count(workers: int | None) -> None:
    """A local cluster of ``workers`` processes fits this machine's cores (:func:`local_worker_limit`)."""
    cores, most = local_worker_limit()
    if workers is not None and workers > most:
        raise InputError(f"cluster workers: {workers}, but a local cluster starts one process per worker and this "
                         f"machine has {cores} core(s): give workers: {most} or fewer (leave "
                         f"workers out: one per core), or use a larger cluster (cluster: {{address: ...}})")


# Seconds past the connect timeout that a client waits for the scheduler's answer: a service that
# takes the connection and never speaks held Dask's Client forever (it times out the connect only).
ANSWER_GRACE = 2.0


class _NoAnswer(Exception):
    pass


def _within(make: Callable[[], Any], seconds: float) -> Any:
    """``make()`` on a daemon thread, its value or its error; :class:`_NoAnswer` when it has not ended
    after ``seconds`` (the thread is left to end on its own: daemon, it does not hold the exit; a value
    it makes after that, a client, is closed there)."""
    import threading

    box: dict[str, Any] = {}
    lock = threading.Lock()

    def run() -> None:
        try:
            value = make()
        except BaseException as exc:  # handed to the caller
            with lock:
                box["error"] = exc
            return
        with lock:
            if not box.get("abandoned"):
                box["value"] = value
                return
        with contextlib.suppress(Exception):
            value.close()

    worker = threading.Thread(target=run, name="graphops-connect", daemon=True)
    worker.start()
    worker.join(seconds)
    with lock:
        if "value" not in box and "error" not in box:
            box["abandoned"] = True
            raise _NoAnswer()
    if "error" in box:
        raise box["error"]
    return box["value"]


def _workers_log_level() -> int:
    """The level from which the workers of a cluster started here print Dask's records: a part that
    fails is graphops' one line (Dask's "Compute Failed" block with the task's traceback, on every
    worker, came before it); with graphops' own records at INFO or below (-v), Dask's warnings too."""
    import logging

    return logging.WARNING if logging.getLogger("graphops").getEffectiveLevel() <= logging.INFO else logging.CRITICAL


def _client(distributed: Any, address: str, timeout: float) -> Any:
    """A client of the scheduler at ``address``; one line naming it and the fix when it does not answer."""
    from graphops.base.address import address_problem
    from graphops.errors import ClusterUnavailableError

    bad = address_problem(address)
    if bad:
        raise ClusterUnavailableError(f"{address!r} is not a Dask scheduler's address: {bad}")
    scheme = address.partition("://")[0]
    if scheme == "ucx":
        from graphops.base.device import require

        require("distributed_ucxx", f"a scheduler at a ucx:// address ({address})")
        ucx_progress()
    try:
        return _within(lambda: distributed.Client(address, timeout=timeout), timeout + ANSWER_GRACE)
    except _NoAnswer:
        raise ClusterUnavailableError(
            f"something at {address!r} took the connection but did not answer as a Dask scheduler within "
            f"{timeout + ANSWER_GRACE:g} s (another service on that port?). Check the address (the scheduler's "
            f"log prints it: Scheduler at: tcp://host:port), or leave the cluster out to run every step here") from None
    except TypeError as exc:  # the protocol needs what was not given (tls: a security context)
        raise ClusterUnavailableError(
            f"cannot connect to {address!r}: {exc}. For tls:// pass a Client you made with its security "
            f"settings (go.run(..., client=Client(address, security=...))), or use a tcp:// address") from None
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterUnavailableError(
            f"cannot reach a Dask scheduler at {address!r} within {timeout:g} s ({type(exc).__name__}: {exc}). "
            f"Start one there (dask scheduler), check the address (tcp://host:8786), wait longer with "
            f"--cluster-timeout SECONDS (YAML: cluster: {{address: ..., timeout: 30}}), or leave the cluster out "
            f"to run every step here") from None
