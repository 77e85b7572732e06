"""Faults of a cluster call said in one line, with the fix: a part that ran out of memory on its
worker (:class:`~graphops.errors.DeviceMemoryError`, raised there: CuPy's ``OutOfMemoryError``
does not even survive the trip back to the client) and a task Dask gave up on because the
workers running it died (:class:`~graphops.errors.ClusterWorkerLostError`, raised on the
client). Imports neither Dask nor CuPy: their errors are recognized by class name and message."""
from __future__ import annotations

import contextlib
import functools
import re
from typing import Any, Callable, Iterator

from graphops.errors import ClusterWorkerLostError, DeviceMemoryError

__all__ = ["is_out_of_memory", "requested_bytes", "describe_part", "describe_task", "task_owner", "memory_error",
           "reported_memory", "worker_lost", "dropped_by_dask"]

# CuPy: "Out of memory allocating 1,073,741,824 bytes (allocated so far: ...)"; RMM / cuDF:
# "std::bad_alloc: out_of_memory: CUDA error at: ...: cudaErrorMemoryAllocation out of memory";
# CuPy's runtime calls: "cudaErrorMemoryAllocation: out of memory"; Numba: CUDA_ERROR_OUT_OF_MEMORY.
_OOM_TEXT = re.compile(r"std::bad_alloc|out_of_memory|CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation|"
                       r"Out of memory allocating")
_GPU_TEXT = re.compile(r"std::bad_alloc|CUDA|cuda|Out of memory allocating")
_BYTES = re.compile(r"allocat\w*\s+([\d,]+)\s*(?:bytes|B)\b", re.IGNORECASE)
_SIZE = re.compile(r"Unable to allocate (\d[\d.]* [KMGTPE]?i?B)")  # NumPy's host arrays

MEMORY_FIX = ("Give the call more workers, which cuts it into smaller parts (a pipeline's cluster: {workers: N}, "
              "or a cluster with more GPUs: local-cuda starts one worker per GPU), or workers with more memory")
LOST_FIX = ("A task that kills its worker most often ran out of memory (the nanny ends a worker past its memory "
            "limit) or crashed in native code: see that worker's log. Give the call more workers, which cuts it "
            "into smaller parts (a pipeline's cluster: {workers: N}), or workers with more memory; if workers die "
            "for other reasons, let Dask retry more (distributed.scheduler.allowed-failures)")


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # a broken __str__ says nothing
        return ""


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` says memory ran out: a ``MemoryError`` (CuPy's ``OutOfMemoryError``,
    RMM's ``std::bad_alloc``, NumPy's), or a CUDA call's out-of-memory status."""
    if not isinstance(exc, Exception):  # Ctrl-C, a task stopped: never memory
        return False
    return isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError" or \
        bool(_OOM_TEXT.search(_text(exc)))


def requested_bytes(exc: BaseException) -> int | None:
    """The bytes the failed allocation asked for, when its message says (CuPy's does)."""
    found = _BYTES.search(_text(exc))
    return int(found.group(1).replace(",", "")) if found else None


def _asked(exc: BaseException) -> str:
    n = requested_bytes(exc)
    if n is not None:
        units = ((30, "GiB"), (20, "MiB"), (10, "KiB"))
        size = next((f" ({n / 2**k:.2f} {unit})" for k, unit in units if n >= 2**k), "")
        return f", asked for {n:,} bytes{size}"
    found = _SIZE.search(_text(exc))
    return f", asked for {found.group(1)}" if found else ""


def _on_gpu(exc: BaseException) -> bool:
    return type(exc).__module__.startswith(("cupy", "rmm", "cudf", "numba.cuda")) or bool(_GPU_TEXT.search(_text(exc)))


def _span(r0: Any, r1: Any) -> str:
    return f"{r0:,}:{r1:,}" if isinstance(r1, int) else f"{r0:,}:"


def _are_runs(runs: Any) -> bool:
    return isinstance(runs, tuple) and all(isinstance(r, tuple) and len(r) == 2 for r in runs)


def describe_part(select: Any, algorithm: Any = None) -> str:
    """A part's ``select`` for people: ``Gram rows 0:250``, ``pairs 1,000,000:2,000,000`` (a
    range of an algorithm with a pairs slot), ``part 0:250``, else the select itself."""
    if isinstance(select, tuple) and len(select) == 3 and _are_runs(select[2]):
        kind, slot, runs = select
        what = {"rows": "Gram rows", "cols": "Gram columns"}.get(kind, f"Gram {kind} of {slot!r}")
        if len(runs) <= 3:
            return f"{what} {', '.join(_span(a, b) for a, b in runs)}"
        graphs = sum(b - a for a, b in runs)
        return f"{what} {_span(*runs[0])}, {_span(*runs[1])}, ... ({len(runs):,} ranges, {graphs:,} graphs)"
    if isinstance(select, tuple) and len(select) == 2 and all(isinstance(r, int) for r in select):
        slots = getattr(algorithm, "slot_names", ())
        return f"{'pairs' if 'pairs' in slots else 'part'} {_span(*select)}"
    text = repr(select)
    return f"part {text if len(text) <= 80 else text[:77] + '...'}"


def _unwrapped(fn: Any) -> Any:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return fn


def describe_task(fn: Any, key: Any) -> str:
    """A task for people: ``task 'stoppable-8f3a...' (_shared)``."""
    fn = _unwrapped(fn)
    return f"task {key!r} ({getattr(fn, '__qualname__', type(fn).__name__)})"


def task_owner(fn: Any) -> str:
    """The algorithm a task function belongs to, by its plugin's package (``graphops_jaccard.dist``
    -> ``jaccard``), else the function's own name."""
    fn = _unwrapped(fn)
    module = getattr(fn, "__module__", None) or ""
    top = module.split(".")[0]
    if top.startswith("graphops_"):
        return top.removeprefix("graphops_")
    return f"{module}.{getattr(fn, '__qualname__', fn)!s}".lstrip(".")


def _origin(exc: BaseException) -> BaseException:
    """The allocation's own error, under a DeviceMemoryError an inner guard already raised."""
    while isinstance(exc, DeviceMemoryError) and exc.__cause__ is not None:
        exc = exc.__cause__
    return exc


def memory_error(exc: BaseException, algorithm: str, part: str, worker: str) -> DeviceMemoryError:
    """The one-line :class:`DeviceMemoryError` for ``exc`` (out of memory) in ``part`` on ``worker``."""
    origin = _origin(exc)
    kind = type(origin).__name__ + (" std::bad_alloc" if "std::bad_alloc" in _text(origin) else "")
    message = (f"{algorithm} ran out of {'GPU ' if _on_gpu(origin) else ''}memory on Dask worker {worker} "
               f"computing {part} ({kind}{_asked(origin)}). {MEMORY_FIX}")
    requested = getattr(origin, "requested", None) or requested_bytes(origin)
    return DeviceMemoryError(message, algorithm=algorithm, part=part, worker=worker, requested=requested)


@contextlib.contextmanager
def reported_memory(algorithm: str, part: str | Callable[[], str],
                    worker: str | Callable[[], str]) -> Iterator[None]:
    """On a worker: an out-of-memory error within the block becomes :func:`memory_error`'s
    (``part``, ``worker``: the strings, or functions giving them, asked only then)."""
    try:
        yield
    except Exception as exc:
        if not is_out_of_memory(exc):
            raise
        part, worker = (x() if callable(x) else x for x in (part, worker))
        raise memory_error(exc, algorithm, part, worker) from _origin(exc)


def worker_lost(exc: BaseException, what: str) -> ClusterWorkerLostError | None:
    """On the client: the one-line :class:`ClusterWorkerLostError` for Dask's ``KilledWorker``
    (``what``: the call, e.g. ``jaccard on 2 Dask worker(s)``), else ``None``."""
    if type(exc).__name__ != "KilledWorker":
        return None
    args = tuple(exc.args) + (None, None, None)
    task, last, allowed = args[0], getattr(args[1], "address", args[1]), args[2]
    tries = f"{allowed + 1} " if isinstance(allowed, int) else ""
    message = (f"{what} failed: Dask gave up on task {task!r} after the {tries}worker(s) that ran it died "
               f"(the last: {last or 'unknown'}). {LOST_FIX}")
    return ClusterWorkerLostError(message, task=task, worker=None if last is None else str(last))


def dropped_by_dask(exc: BaseException, what: str, workers: Callable[[], int | None]) -> ClusterWorkerLostError | None:
    """On the client: the one-line :class:`ClusterWorkerLostError` for a task Dask cancelled on its
    own (``FutureCancelledError``: e.g. "already forgotten" once the workers holding the call's
    inputs all died, whose data Dask cannot make again), else ``None``; ``workers()``: how many the
    scheduler has now (``None``: it could not be asked), called only for such an error (it is a
    round trip to the scheduler)."""
    if type(exc).__name__ != "FutureCancelledError":
        return None
    task, reason = getattr(exc, "key", None), getattr(exc, "reason", None) or "no reason given"
    if workers() == 0:
        why = ("every worker of the Dask cluster died while it ran, and what it had sent them went with them; "
               "start workers (or let a nanny restart them) and call again")
    else:
        why = ("the workers that held its inputs died, or the task was cancelled from elsewhere (another "
               "client, a restart of the cluster); call again, which sends the inputs anew")
    message = f"{what} failed: Dask dropped task {task!r} ({reason}): {why}. {LOST_FIX}"
    return ClusterWorkerLostError(message, task=task)
