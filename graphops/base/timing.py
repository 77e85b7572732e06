"""One way to time things: GPU work is synchronized before and after each run; and the phases of
a cluster call's part (:func:`phase`: a block's seconds, added up by name while :func:`phases`
records, e.g. on a Dask worker running one part; nothing is timed or synchronized otherwise)."""
from __future__ import annotations

import contextlib
import contextvars
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from graphops.base.device import synchronize

__all__ = ["Timing", "timed", "phase", "phases"]

_PHASES: contextvars.ContextVar[dict | None] = contextvars.ContextVar("graphops_phases", default=None)
_OPEN: contextvars.ContextVar[str] = contextvars.ContextVar("graphops_open_phase", default="")


@contextlib.contextmanager
def phase(name: str, sync: bool = False) -> Iterator[None]:
    """The block's seconds added to phase ``name`` of what :func:`phases` records (GPU work queued in
    it waited for with ``sync``); a no-op when nothing records. A phase within another is recorded
    as ``"outer > name"`` (part of the outer's seconds, not beside them)."""
    record = _PHASES.get()
    if record is None:
        yield
        return
    outer = _OPEN.get()
    name = f"{outer} > {name}" if outer else name
    token = _OPEN.set(name)
    t0 = time.perf_counter()
    try:
        yield
    finally:
        try:
            if sync:
                synchronize()
        finally:  # a failed wait still closes the phase: the next ones are not named under it
            _OPEN.reset(token)
            record[name] = record.get(name, 0.0) + time.perf_counter() - t0


@contextlib.contextmanager
def phases() -> Iterator[dict[str, float]]:
    """Record the :func:`phase` blocks run within: {name: seconds}."""
    token, top = _PHASES.set({}), _OPEN.set("")
    try:
        yield _PHASES.get()
    finally:
        _OPEN.reset(top)
        _PHASES.reset(token)


@dataclass(frozen=True)
class Timing:
    """Seconds of each timed run, with the median and the best."""

    times: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def best(self) -> float:
        return min(self.times)


def timed(fn: Callable[[], Any], repeat: int = 1, warmup: int = 0) -> Timing:
    """Run ``fn`` ``warmup`` times untimed, then ``repeat`` times timed (queued GPU work included)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(max(repeat, 1)):
        synchronize()
        t0 = time.perf_counter()
        fn()
        synchronize()
        times.append(time.perf_counter() - t0)
    return Timing(tuple(times))
