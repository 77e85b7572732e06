"""What a cluster call sends its workers and keeps there (:mod:`graphops.engine.cluster`).

* Inputs (or what a split sends instead, :attr:`~graphops.engine.parts.Split.sent`) go to every
  worker once per client (:func:`broadcast`), the futures kept with the object sent
  while it lives, so the next call on the same client sends nothing.
* A part's own data (:attr:`~graphops.engine.parts.Part.data`, e.g. its slice of the pairs) goes
  to one worker, the least loaded (costliest parts first), and stays there for the next call while
  :attr:`~graphops.engine.parts.Split.keep_with` lives; a part whose data was lost with its worker
  has it sent again (:func:`data_lost`).
* Where each part ran last is a hint for the next call (its worker kept what the backend derived).
* :func:`release` drops all of it for a client about to close (else the scheduler reports the loss
  of each worker's scattered data as the cluster stops).

Objects are found by identity (:class:`Kept`): a frozen dataclass of arrays hashes its fields,
which arrays refuse.
"""
from __future__ import annotations

import uuid
import weakref
from typing import Any, Mapping

from graphops.engine.parts import Split

__all__ = ["Kept", "send", "broadcast", "placed", "hashable", "nbytes", "place_data", "data_lost", "on_workers",
           "release", "running", "answers"]


class Kept:
    """What is kept with an object while it lives, the object found by identity (a frozen
    dataclass of arrays hashes its fields, which arrays refuse, so a WeakKeyDictionary cannot hold
    it). ``setdefault`` raises TypeError for an object that cannot be weakly referenced."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[Any, Any]] = {}

    def setdefault(self, obj: Any, default: Any) -> Any:
        key = id(obj)
        hit = self._by_id.get(key)
        if hit is None or hit[0]() is not obj:
            ref = weakref.ref(obj, lambda _, key=key: self._forget(key, ref))
            hit = self._by_id[key] = (ref, default)
        return hit[1]

    def get(self, obj: Any, default: Any = None) -> Any:
        hit = self._by_id.get(id(obj))
        return hit[1] if hit is not None and hit[0]() is obj else default

    def _forget(self, key: int, ref: Any) -> None:
        hit = self._by_id.get(key)
        if hit is not None and hit[0] is ref:
            del self._by_id[key]


SENT = Kept()  # input object -> {client id: its future on every worker}
PLACED = Kept()  # first input -> {(client id, other inputs): {part select: worker address}}


def send(client: Any, inputs: Mapping[str, Any], moved: dict[str, int] | None = None) -> dict[str, Any]:
    """Each input on every worker once per client (futures kept with the input object); the bytes
    sent this call counted in ``moved["to_workers"]`` (once per worker)."""
    futures = {}
    for slot, obj in inputs.items():
        try:
            kept = SENT.setdefault(obj, {})
        except TypeError:  # not weak-referenceable: sent for this call only
            kept = {}
        key = client.id
        if key not in kept or kept[key].status != "finished":
            _keep_copies(client)
            name = f"{_sent_prefix()}{type(obj).__name__}-{uuid.uuid4().hex}"
            kept[key], reached = broadcast(client, obj, name)
            if moved is not None:
                moved["to_workers"] += nbytes(obj) * reached
        futures[slot] = kept[key]
    return futures


def broadcast(client: Any, obj: Any, name: str) -> tuple[Any, int]:
    """``obj`` under the key ``name`` on every running worker, sent to one worker after another
    through the scheduler (one copy in flight there at a time), each within a deadline; its future
    and the number of workers reached. Not Dask's ``scatter(broadcast=True)``: its scheduler copies
    the value from worker to worker in a loop that never ends when a worker it copies to dies
    meanwhile (a call hung). A worker gone, not running, or not taking its copy within
    :func:`send_deadline` is skipped (a task that runs there later fetches the key from another).
    In a task on a worker Dask keeps a scatter on that worker: one copy, there. None reached: the
    workers listed again, :data:`PLACING_TRIES` times, then
    :class:`~graphops.errors.ClusterWorkerLostError`."""
    import asyncio

    if _in_task():
        return client.scatter({name: obj}, hash=False)[name], 1
    deadline = send_deadline(nbytes(obj))

    async def every(live: list[str]) -> list[Any]:
        out: list[Any] = []
        for where in live:
            try:
                sent = client.scatter({name: obj}, workers=[where], hash=False, timeout=SCATTER_WAIT,
                                      asynchronous=True)
                out.append((await asyncio.wait_for(sent, deadline))[name])
            except (KeyError, TimeoutError, OSError) as exc:  # gone, not running or not answering, connection closed
                out.append(exc)
        return out

    gone: list[str] = []
    for _ in range(PLACING_TRIES):
        live = running(client) or _waited_workers(client)
        got = client.sync(every, live)
        reached = [f for f in got if not isinstance(f, BaseException)]
        if reached:
            return reached[0], len(reached)
        gone = [f"{w} ({type(e).__name__}: {e})" for w, e in zip(live, got)]
    from graphops.errors import ClusterWorkerLostError

    raise ClusterWorkerLostError(
        f"an input could not be sent to any Dask worker, {PLACING_TRIES} times (the last: {'; '.join(gone)}); "
        f"check the workers' logs (out of memory?) and call again", worker=gone[-1].split(" ")[0] if gone else None)


SCATTER_WAIT = 5.0  # seconds the scheduler waits for a worker to be running before its copy is skipped
SEND_DEADLINE = 60.0  # seconds a worker has to take its copy of an input, plus its bytes at SEND_RATE
SEND_RATE = 100e6  # bytes a second: a slow network's


def send_deadline(size: int) -> float:
    """Seconds a worker has to take its copy of an input of ``size`` bytes before it is skipped."""
    return SEND_DEADLINE + size / SEND_RATE


def _in_task() -> bool:
    from distributed import get_worker

    try:
        get_worker()
    except ValueError:
        return False
    return True


def running(client: Any, listed: Mapping[str, Any] | None = None) -> list[str]:
    """The workers that take tasks now (not paused by memory, not closing), of ``listed`` (the
    scheduler's workers, one round trip of a call) or of the scheduler's list asked now."""
    info = client.scheduler_info(n_workers=-1)["workers"] if listed is None else listed
    return [addr for addr, w in info.items() if w.get("status", "running") == "running"]


def answers(client: Any, fn: Any, *args: Any) -> dict[str, Any]:
    """``client.run(fn, *args)``: each worker's answer, of the workers that could be reached (one
    that dies meanwhile, or has died since the scheduler last listed it, is left out: Dask runs its
    tasks elsewhere); an error ``fn`` raised on a worker is raised here."""
    import asyncio

    got = client.run(fn, *args, on_error="return")
    for value in got.values():
        if isinstance(value, BaseException) and not isinstance(value, (OSError, asyncio.TimeoutError)):
            raise value  # the function's own error (a worker without graphops, ...): not a lost worker
    return {addr: value for addr, value in got.items() if not isinstance(value, BaseException)}


def _sent_prefix() -> str:
    from graphops.engine.replicas import SENT_PREFIX

    return SENT_PREFIX


KEEPING: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()  # client -> what keep_sent said


def _keep_copies(client: Any) -> None:
    """Once per client: the scheduler's Active Memory Manager told to leave graphops' broadcast
    copies alone (:mod:`graphops.engine.replicas`). A scheduler that cannot import graphops keeps
    Dask's policy: logged once, each call then may send its inputs again."""
    if client in KEEPING:
        return
    from graphops.engine.replicas import keep_sent

    try:
        KEEPING[client] = client.run_on_scheduler(keep_sent)
    except Exception as exc:  # e.g. a remote scheduler without graphops installed
        import logging

        KEEPING[client] = f"not kept: {type(exc).__name__}: {exc}"
        logging.getLogger("graphops").warning(
            "the Dask scheduler could not be told to keep the inputs graphops sends every worker (%s: %s); its "
            "Active Memory Manager may drop them between calls, which then send them again. Install graphops where "
            "the scheduler runs, or start it with distributed.scheduler.active-memory-manager.start: false",
            type(exc).__name__, exc)


def placed(client: Any, inputs: Mapping[str, Any]) -> dict[Any, str]:
    """Where each part of a call on these inputs ran last (a hint: the next call's part over the
    same rows goes there first, to find the slices that worker kept); kept with the inputs."""
    objs = list(inputs.values())
    key = (client.id, tuple(id(o) for o in objs[1:]))
    try:
        return PLACED.setdefault(objs[0], {}).setdefault(key, {})
    except TypeError:
        return {}


def hashable(select: Any) -> Any:
    try:
        hash(select)
        return select
    except TypeError:
        return repr(select)


def nbytes(obj: Any) -> int:
    """Bytes of an array, a frame, or a collection or object of them (what Dask moves of it)."""
    from dask.sizeof import sizeof

    if hasattr(obj, "__dict__") and not hasattr(obj, "nbytes") and not hasattr(obj, "memory_usage"):
        return sum(nbytes(v) for v in vars(obj).values() if v is not None and not isinstance(v, (dict, str)))
    return int(sizeof(obj))


# The data of a split's parts, sent to one worker each: kept with the split's keep_with object,
# per client and part, as (future, worker address).
DATA = Kept()


def kept_data(client: Any, split: Split) -> dict[tuple, tuple[Any, str]]:
    try:
        return DATA.setdefault(split.keep_with, {}) if split.keep_with is not None else {}
    except TypeError:  # not weak-referenceable: sent for this call only
        return {}


def place_data(client: Any, split: Split, moved: dict[str, int],
               listed: Mapping[str, Any] | None = None) -> dict[int, tuple[Any, str]]:
    """Part k -> (its data's future, the worker holding it). The parts sent before stay where they
    went while those workers live and leave none idle; else (a worker lost, replaced or added)
    every part is placed anew, on the least loaded worker, costliest first. Data of
    another cut of the same object (another worker count) is dropped. ``listed``: the
    scheduler's workers as the call asked for them (else asked here)."""
    with_data = [k for k, p in enumerate(split.parts) if p.data is not None]
    if not with_data:
        return {}
    live = list(client.scheduler_info(n_workers=-1)["workers"] if listed is None else listed)
    if not live:  # e.g. the nannies are restarting the workers that died
        live = _waited_workers(client)
    kept = kept_data(client, split)
    mine = {(client.id, hashable(split.parts[k].select)): k for k in with_data}
    for key in [key for key in kept if key[0] == client.id and key not in mine]:
        del kept[key]  # another cut's
    hits = {k: kept[key] for key, k in mine.items() if key in kept and kept[key][0].status == "finished"}
    used = {where for _, where in hits.values()}
    if len(hits) == len(with_data) and used <= set(live) and len(used) == min(len(live), len(with_data)):
        return hits
    gone = ""
    for _ in range(PLACING_TRIES):
        try:
            out = _scatter_parts(client, split, with_data, live, kept)
        except _WorkerGone as exc:  # a worker died between the listing and the scatter
            gone = exc.address
            live = [w for w in client.scheduler_info(n_workers=-1)["workers"] if w != gone] or _waited_workers(client)
            continue
        moved["to_workers"] += sum(nbytes(split.parts[k].data) for k in out)
        return out
    from graphops.errors import ClusterWorkerLostError

    raise ClusterWorkerLostError(
        f"the parts' data could not be placed: the workers chosen died {PLACING_TRIES} times while it was being "
        f"sent (the last: {gone or 'unknown'}); check the workers' logs (out of memory?) and call again",
        worker=gone or None)


PLACING_TRIES = 3  # placements tried when a chosen worker dies while the parts' data is sent to it


class _WorkerGone(Exception):
    def __init__(self, address: str):
        super().__init__(address)
        self.address = address


def _scatter_parts(client: Any, split: Any, with_data: list[int], live: list[str],
                   kept: dict) -> dict[int, tuple[Any, str]]:
    """Each part's data sent to one of ``live``, costliest first to the least loaded; a worker that
    is gone when its share is sent (the scheduler's KeyError, no valid workers, a comm closed):
    :class:`_WorkerGone`."""
    load = dict.fromkeys(live, 0.0)
    new: dict[str, list[int]] = {}
    for k in sorted(with_data, key=lambda k: -split.parts[k].cost):
        where = min(load, key=load.__getitem__)
        load[where] += split.parts[k].cost
        new.setdefault(where, []).append(k)
    out: dict[int, tuple[Any, str]] = {}
    for where, ks in new.items():
        try:
            futures = client.scatter([split.parts[k].data for k in ks], workers=[where], hash=False)
        except (KeyError, TimeoutError, OSError) as exc:
            raise _WorkerGone(where) from exc
        for k, fut in zip(ks, futures):
            out[k] = kept[(client.id, hashable(split.parts[k].select))] = (fut, where)
    return out


WAIT_FOR_WORKERS = 30.0  # seconds a call waits for a worker when there is none (restarting)


def _waited_workers(client: Any) -> list[str]:
    from graphops.errors import InputError

    try:
        client.wait_for_workers(1, timeout=WAIT_FOR_WORKERS)
    except TimeoutError:
        listed = client.scheduler_info(n_workers=-1)["workers"]
        if listed:  # there are workers, none running
            raise InputError(f"none of the Dask cluster's {len(listed)} worker(s) took work within "
                             f"{WAIT_FOR_WORKERS:g} s: all are paused (their memory past "
                             f"distributed.worker.memory.pause) or closing; free their memory (restart them), "
                             f"give them more, or add workers, and call again") from None
        raise InputError(f"the Dask cluster has no workers (none came within {WAIT_FOR_WORKERS:g} s); start some "
                         f"and call again") from None
    return list(client.scheduler_info(n_workers=-1)["workers"])


def data_lost(client: Any, split: Split, cancelled: bool = False) -> set[str]:
    """The workers that held some of this split's part data and lost it (they left); those
    entries forgotten. Empty: nothing of this call's was lost. ``cancelled``: Dask cancelled a
    part for its lost data, which this client may not have heard of yet: all of this split's
    data is forgotten (sent again), the workers named as far as known."""
    kept = kept_data(client, split)
    keys = [(client.id, hashable(p.select)) for p in split.parts if p.data is not None]
    lost = {key: kept[key][1] for key in keys if key in kept and kept[key][0].status != "finished"}
    if cancelled and not lost:
        lost = {key: "" for key in keys if key in kept}
    for key in lost:
        del kept[key]
    return set(lost.values())


def _sent(client: Any, obj: Any) -> Any:
    """The future of ``obj`` as an earlier call on ``client`` sent it to the workers, or ``None``."""
    try:
        return SENT.get(obj, {}).get(client.id)
    except TypeError:  # not weak-referenceable: never kept
        return None


def sent_lost(client: Any, objs: Any) -> bool:
    """Whether one of ``objs`` that a call sent to ``client``'s workers is gone from them (every
    worker that held it died): the next :func:`send` sends it again."""
    return any(sent is not None and sent.status != "finished" for sent in (_sent(client, obj) for obj in objs))


def on_workers(client: Any, obj: Any) -> bool:
    """Whether an earlier call on ``client`` sent ``obj`` to its workers (and they still hold it)."""
    sent = _sent(client, obj)
    return sent is not None and sent.status == "finished"


def release(client: Any) -> None:
    """Drop the futures of what graphops sent ``client``'s workers (before a cluster it opened
    closes: else the scheduler reports their loss as each worker leaves)."""
    for kept in (SENT, DATA):
        for _, mine in list(kept._by_id.values()):
            for key in [k for k in mine if k == client.id or (isinstance(k, tuple) and k[0] == client.id)]:
                del mine[key]
