"""One way to time things: GPU work is synchronized before and after each run."""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable

from graphops.base.device import synchronize

__all__ = ["Timing", "timed"]


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
