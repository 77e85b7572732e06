"""Dask's small messages of a cluster call sent within a millisecond, not held for a batch.

Dask batches the messages between a client, its scheduler and the workers: the client's stream to
the scheduler sends at most one batch every 10 ms, the scheduler's to each worker every 5 ms, and
a worker's to the scheduler and the scheduler's to each client every 2 ms. A message that comes
within that time of the stream's last one waits for it. A graphops call submits a few large tasks,
each right after the last call's releases went out, so its tasks waited for the client's 10 ms and
then the worker's stream (jaccard of R-MAT 12 on 2 CPU worker processes: 11.3 ms from submitting to
a part starting, 5.4 ms with every stream prompt; on 4 GPUs, R-MAT 22's calls spent 9.7 ms there).

:func:`prompt_client` (every client graphops calls with, once) sets :data:`PROMPT_INTERVAL` on the
two streams that belong to that client alone: its stream to the scheduler and the scheduler's to
it. :func:`prompt_cluster` (the clusters graphops starts itself, ``cluster: {kind: ...}``) sets it
on the scheduler's streams to the workers and theirs to it too, workers that join later included,
through a scheduler and a worker plugin. A cluster a user started keeps its shared streams as they
are (other clients' work shares them); ``prompt_cluster(client)`` makes them prompt on request
(graphops installed where the scheduler and workers run). A user's client keeps the 1 ms for its
later work too (set ``PROMPT_INTERVAL = None`` before the first call to leave Dask's intervals).
Batches still form within the interval, so a burst of messages is not sent one by one. This
module imports Dask: only a client's caller, the scheduler and the workers load it.
"""
from __future__ import annotations

import logging
import weakref
from typing import Any

from distributed.diagnostics.plugin import SchedulerPlugin, WorkerPlugin

__all__ = ["PROMPT_INTERVAL", "PromptScheduler", "PromptWorker", "prompt_client", "prompt_cluster"]

PROMPT_INTERVAL = 0.001  # seconds a stream holds a message to batch it with the next ones

_PROMPTED: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()  # client -> its stream made prompt


def _set(stream: Any, interval: float) -> None:
    if stream is not None and hasattr(stream, "interval"):
        stream.interval = min(stream.interval, interval)


def _client_stream_on_scheduler(dask_scheduler: Any = None, client_id: str = "", interval: float = 0.0) -> bool:
    """On the scheduler: its stream to one client made prompt."""
    stream = getattr(dask_scheduler, "client_comms", {}).get(client_id)
    _set(stream, interval)
    return stream is not None


def prompt_client(client: Any) -> None:
    """Once per client: its stream to the scheduler and the scheduler's to it send within
    :data:`PROMPT_INTERVAL`. A scheduler that cannot run this (no graphops there) keeps its own:
    logged, and the calls only wait a few milliseconds longer."""
    if PROMPT_INTERVAL is None or getattr(client, "asynchronous", False):
        return
    stream = getattr(client, "scheduler_comm", None)
    try:  # the stream made prompt: a client that reconnects gets a new one from Dask, made prompt again
        if stream is None or _PROMPTED.get(client) is stream:
            return
        _PROMPTED[client] = stream
    except TypeError:  # not weakly referenceable (a stand-in client): nothing to keep
        return
    _set(stream, PROMPT_INTERVAL)
    try:
        client.run_on_scheduler(_client_stream_on_scheduler, client_id=client.id, interval=PROMPT_INTERVAL)
    except Exception as exc:  # e.g. a remote scheduler without graphops installed
        logging.getLogger("graphops").debug("the scheduler's stream to this client keeps Dask's batching (%s: %s)",
                                            type(exc).__name__, exc)


class PromptScheduler(SchedulerPlugin):
    """A scheduler plugin: the scheduler's streams to its workers, now and joining, made prompt."""

    name = "graphops-prompt"
    idempotent = True

    def __init__(self, interval: float):
        self.interval = interval

    async def start(self, scheduler: Any) -> None:
        for stream in list(scheduler.stream_comms.values()):
            _set(stream, self.interval)

    def add_worker(self, scheduler: Any, worker: str) -> None:
        _set(scheduler.stream_comms.get(worker), self.interval)


class PromptWorker(WorkerPlugin):
    """A worker plugin: the worker's stream to the scheduler made prompt."""

    name = "graphops-prompt"
    idempotent = True

    def __init__(self, interval: float):
        self.interval = interval

    def setup(self, worker: Any) -> None:
        _set(getattr(worker, "batched_stream", None), self.interval)


def prompt_cluster(client: Any) -> None:
    """Every stream of ``client``'s cluster sends within :data:`PROMPT_INTERVAL`: the client's
    (:func:`prompt_client`), the scheduler's to each worker and each worker's to the scheduler,
    for the workers there now and those that join later."""
    prompt_client(client)
    if PROMPT_INTERVAL is None:
        return
    try:
        client.register_plugin(PromptScheduler(PROMPT_INTERVAL))
        client.register_plugin(PromptWorker(PROMPT_INTERVAL))
    except Exception as exc:  # a scheduler or worker without graphops cannot load the plugins
        logging.getLogger("graphops").warning(
            "the Dask cluster's streams keep Dask's batching (%s: %s): install graphops where the scheduler and "
            "the workers run for prompt messages (calls then wait a few milliseconds less)", type(exc).__name__, exc)
