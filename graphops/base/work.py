"""Chunked, interruptible work with one progress report: how every long loop in graphops runs.

A Numba kernel holds its thread until it returns, and a CUDA wait blocks in C, so Python
sees Ctrl-C only between calls. Long work is therefore cut into chunks that each take
about :data:`TARGET_SECONDS`: :func:`chunks` yields ranges ``[lo, hi)`` of the work and
sizes the next one from how long the last one took (by item count, or by a cumulative
cost when items cost differently: hub pairs, big graphs), so an interrupt stops a step
within about a second, and the progress report advances by the same ranges: a bar on a terminal
(for jobs lasting over a second), a plain line every fifteen seconds elsewhere (a log or CI,
after ten seconds of work), nothing under :func:`quiet` (``graphops --quiet``) or
``GRAPHOPS_PROGRESS=off``::

    for lo, hi in chunks(len(pairs), what="jaccard", cost=np.cumsum(work)):
        kernel(pairs[lo:hi], out[lo:hi])

GPU loops pass ``sync=`` (e.g. :func:`graphops.base.cuda.wait_idle`) so each chunk is timed to
its end; the last chunk is not waited for, so the caller can queue or build what follows (a
result frame) while the GPU finishes it. ``GRAPHOPS_CHUNK_SECONDS`` changes the target.

While graphops runs a backend (:func:`holding_interrupts`, entered by dispatch), Ctrl-C is
held and raised at the next chunk boundary or when the backend returns; a second Ctrl-C
raises at once. Raised inside Numba while it compiles a kernel, a KeyboardInterrupt is
swallowed (the compile and then the whole job carry on) or leaves Numba broken ("no compiled
object yet"), so it must only be raised between calls.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Iterator

import numpy as np

__all__ = ["chunks", "even_ranges", "holding_interrupts", "stop_when", "Stopped", "TARGET_SECONDS",
           "target_seconds", "quiet"]

TARGET_SECONDS = 0.2
_SHOW_AFTER = 1.0  # seconds of work before a progress bar appears (when not asked for)
_GROWTH = 4.0  # a chunk is at most this many times the last one's cost


def target_seconds() -> float:
    """Seconds one chunk should take (``GRAPHOPS_CHUNK_SECONDS``, default 0.2)."""
    try:
        return max(float(os.environ.get("GRAPHOPS_CHUNK_SECONDS", TARGET_SECONDS)), 1e-6)
    except ValueError:
        return TARGET_SECONDS


_QUIET: contextvars.ContextVar[bool] = contextvars.ContextVar("graphops_quiet", default=False)
_PLAIN_AFTER = 10.0  # seconds of work before the first plain progress line (stderr not a terminal)
_PLAIN_EVERY = 15.0  # seconds between two plain progress lines


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """No progress bars or lines while the block runs (``graphops --quiet``); the environment
    switch ``GRAPHOPS_PROGRESS=off`` does the same for a whole process."""
    token = _QUIET.set(True)
    try:
        yield
    finally:
        _QUIET.reset(token)


def _silenced() -> bool:
    return _QUIET.get() or os.environ.get("GRAPHOPS_PROGRESS", "").lower() in ("0", "off", "no", "false")


class _Bar:
    """Progress of one job, shown the way its stderr can take it: on a terminal a rich bar, at once
    when asked for, else after a second of work; elsewhere (a log, CI) a plain line after
    ten seconds of work and then every fifteen (done/total, rate, ETA). Never when ``show`` is
    False or progress is silenced (:func:`quiet`)."""

    def __init__(self, show: bool | None, what: str, total: int):
        self.show, self.what, self.total = show, what, total
        self.progress = self.task = None
        self.started = time.perf_counter()
        self.next_line = self.started + _PLAIN_AFTER
        self.lines = 0

    def advance(self, done: int) -> None:
        if self.show is False or _silenced():
            return
        if self.progress is None and self._wanted():
            from rich.progress import Progress

            self.progress = Progress(transient=True)
            self.progress.start()
            self.task = self.progress.add_task(self.what, total=self.total)
        if self.progress is not None:
            self.progress.update(self.task, completed=done)
        elif self.show is None and time.perf_counter() >= self.next_line:
            self._line(done)

    def _wanted(self) -> bool:
        if self.show is not None:
            return bool(self.show)
        return sys.stderr.isatty() and time.perf_counter() - self.started > _SHOW_AFTER

    def _line(self, done: int) -> None:
        now = time.perf_counter()
        took = now - self.started
        rate = done / took if took > 0 else 0.0
        eta = f"ETA {_clock((self.total - done) / rate)}" if 0 < rate and done < self.total else "finishing"
        pct = 100.0 * done / self.total if self.total else 100.0
        print(f"graphops: {self.what}: {done:,}/{self.total:,} ({pct:.0f}%), {rate:,.1f}/s, {eta}, "
              f"{_clock(took)} so far", file=sys.stderr, flush=True)
        self.lines += 1
        self.next_line = now + _PLAIN_EVERY

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
        elif self.lines and not _silenced():
            print(f"graphops: {self.what}: done in {_clock(time.perf_counter() - self.started)}", file=sys.stderr,
                  flush=True)


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else \
        f"{seconds // 60}:{seconds % 60:02d}"


class _HeldInterrupt:
    """A SIGINT handler that notes the first Ctrl-C (raised later, between calls) and raises on
    the second."""

    def __init__(self) -> None:
        self.pending = False

    def __call__(self, signum: int, frame: Any) -> None:
        if self.pending:
            raise KeyboardInterrupt
        self.pending = True

    def check(self) -> None:
        """Raise the held Ctrl-C, if any (the place must be safe: between kernel calls)."""
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt


@contextlib.contextmanager
def holding_interrupts() -> Iterator[None]:
    """Hold Ctrl-C while the block runs (main thread, default handler only); a held one is raised
    by :func:`chunks` at a chunk boundary, or when the block ends."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield  # another thread, an outer hold, or someone else's handler: leave it as it is
        return
    held = _HeldInterrupt()
    signal.signal(signal.SIGINT, held)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    held.check()


def _held_check() -> None:
    handler = signal.getsignal(signal.SIGINT)
    if isinstance(handler, _HeldInterrupt):
        handler.check()


class Stopped(Exception):
    """Work ended at a chunk boundary because its :func:`stop_when` check said so."""


_STOP = threading.local()
_STOP_EVERY = 0.5  # seconds between two asks of a stop check (it may cost a round trip)


@contextlib.contextmanager
def stop_when(check: Callable[[], bool]) -> Iterator[None]:
    """Within the block, on this thread, :func:`chunks` ends the work by raising :class:`Stopped`
    at a chunk boundary once ``check()`` is true (asked at most every half second): how a Dask
    task of a call cancelled by Ctrl-C stops on its worker instead of running to its end."""
    before = getattr(_STOP, "entry", None)
    _STOP.entry = (check, [time.monotonic()])
    try:
        yield
    finally:
        _STOP.entry = before


def _stop_check() -> None:
    entry = getattr(_STOP, "entry", None)
    if entry is None:
        return
    check, last = entry
    now = time.monotonic()
    if now - last[0] >= _STOP_EVERY:
        last[0] = now
        if check():
            raise Stopped("stopped: the call this work belongs to was cancelled")


def _next_hi(lo: int, budget: float, cost: Any, total: int, max_items: int | None) -> int:
    if cost is None:
        hi = lo + max(1, int(budget))
    else:
        hi = int(np.searchsorted(cost, cost[lo] + budget, side="right")) - 1
        hi = max(hi, lo + 1)
    if max_items is not None:
        hi = min(hi, lo + max_items)
    return min(hi, total)


def chunks(total: int, *, what: str = "working", cost: Any = None, first: float | None = None,
           max_items: int | None = None, progress: bool | None = None,
           sync: Callable[[], Any] | None = None, target: float | None = None) -> Iterator[tuple[int, int]]:
    """Ranges ``[lo, hi)`` covering ``[0, total)``, each sized to take about ``target`` seconds.

    :param cost: optional cumulative cost, ``len(total + 1)``, non-decreasing (host array):
        chunks are cut by cost instead of by count
    :param first: cost (or item count) of the first chunk, before any timing is known
        (default: 1/1000 of the whole, at least 1 item)
    :param max_items: no chunk longer than this (e.g. the rows a buffer holds)
    :param progress: show a progress bar (``None``: a bar for jobs lasting over a second on a terminal,
        plain lines for jobs of over ten seconds elsewhere; ``False``: nothing)
    :param sync: called at the end of each chunk but the last, before it is timed (GPU: wait for
        the queue); a caller that needs the last chunk done waits for it itself
    """
    if total <= 0:
        return
    target = target or target_seconds()
    whole = float(cost[total] - cost[0]) if cost is not None else float(total)
    budget = max(first if first is not None else whole / 1000.0, 1e-12)
    bar = _Bar(progress, what, total)
    lo = 0
    try:
        while lo < total:
            hi = _next_hi(lo, budget, cost, total, max_items)
            start = time.perf_counter()
            yield lo, hi
            if sync is not None and hi < total:  # the last chunk is not waited for: nothing is sized after it
                sync()
            _held_check()
            _stop_check()
            took = time.perf_counter() - start
            spent = float(cost[hi] - cost[lo]) if cost is not None else float(hi - lo)
            rate = spent / max(took, 1e-6)
            budget = max(min(rate * target, max(spent, 1e-12) * _GROWTH), 1e-12)
            lo = hi
            bar.advance(lo)
    finally:
        bar.close()


def even_ranges(total: int, pieces: int, cost: Any = None, shares: Any = None) -> list[tuple[int, int]]:
    """``[0, total)`` cut into at most ``pieces`` ranges of about equal cost (cumulative, as in
    :func:`chunks`), for work queued ahead of time (a GPU's share of a hybrid call); with
    ``shares`` (one a piece, with ``cost``), of costs about in proportion to them instead."""
    if total <= 0:
        return []
    pieces = max(1, min(int(pieces), total))
    if cost is None:
        bounds = np.linspace(0, total, pieces + 1).round().astype(np.int64)
    else:  # on the cost's own device (a GPU's cumulative costs stay there; only the cuts come back)
        from graphops.base.device import Device, device_of, to_device

        xp = device_of(cost).xp
        weights = None if shares is None else np.asarray(shares, dtype=np.float64)
        if weights is not None and not (np.all(np.isfinite(weights)) and np.all(weights > 0)):
            raise ValueError(f"even_ranges: shares must be finite and positive, got {list(shares)}")
        if weights is None or len(weights) != pieces:  # no shares, or fewer items than pieces: equal ones
            marks = xp.linspace(float(cost[0]), float(cost[total]), pieces + 1)
        else:
            at = np.concatenate([[0.0], np.cumsum(weights)]) / float(weights.sum())
            marks = xp.asarray(float(cost[0]) + at * (float(cost[total]) - float(cost[0])))
        bounds = to_device(xp.searchsorted(cost, marks, side="left"), Device.CPU).astype(np.int64)
        bounds[0], bounds[-1] = 0, total
    bounds = np.unique(np.clip(bounds, 0, total))
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]
