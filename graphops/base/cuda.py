"""GPU helpers every plugin's ``gpu.py`` shares: loading its CUDA source, the launch grid, waiting.

* :func:`load_module` compiles ``kernels/<name>.cu`` of a package with CuPy (cached by
  CuPy per device), passing constants the Python side also uses as ``-D`` macros, so each
  cost constant or size limit is written once, in Python.
* :func:`grid` is the one grid rule: enough blocks for the work, at most a few waves of the
  device's multiprocessors (kernels loop grid-stride over the rest).
* :func:`wait` and :func:`wait_idle` wait for queued GPU work. Backends run with Ctrl-C held
  (:func:`graphops.base.work.holding_interrupts`), so a plain blocking CUDA wait is fine: the held
  interrupt is raised at the next chunk boundary, and chunks keep every wait short.

Imported only by GPU backends: it imports CuPy at the top.
"""
from __future__ import annotations

import contextlib
import functools
from importlib import resources
from typing import Any, Iterator, Mapping

import cupy as cp
import numpy as np

from graphops.base.device import gpu_attribute

__all__ = ["load_module", "grid", "wait", "wait_idle", "interleave", "pooled_allocations", "random_read_rate",
           "gram_tile", "THREADS"]

THREADS = 256


def load_module(package: str, name: str, options: tuple[str, ...] = (),
                defines: Mapping[str, Any] | None = None, prefix: str = "", suffix: str = "") -> Any:
    """``cupy.RawModule`` of ``<package>/kernels/<name>.cu``, C++17, with ``defines`` as ``-D`` macros.

    A ``.cu`` file that needs a macro should stop with ``#error`` when it is missing, so the value
    is never written a second time in CUDA; to check the file alone, pass any values with ``-D``.
    ``prefix``/``suffix``: source text put before and after the file's, for what a ``-D`` cannot
    carry (macros with arguments: generated code; template instantiations chosen in Python).
    """
    code = prefix + resources.files(package).joinpath(f"kernels/{name}.cu").read_text() + suffix
    macros = tuple(f"-D{key}={_literal(value)}" for key, value in (defines or {}).items())
    return cp.RawModule(code=code, options=("--std=c++17", *options, *macros))


def _unpooled_rmm() -> bool:
    """Whether CuPy allocates through RMM and RMM's resource is the plain, unpooled one.

    Importing cuDF points CuPy's allocator at RMM, whose default resource calls cudaMalloc and
    cudaFree (which synchronises) for every array: a backend making a hundred temporaries then
    spends milliseconds per call allocating. A resource the user configured (a pool, managed
    memory, a limit) is left alone."""
    allocator = getattr(cp.cuda.get_allocator(), "__name__", "")
    if "rmm" not in allocator:
        return False
    try:
        import rmm

        return type(rmm.mr.get_current_device_resource()).__name__ == "CudaMemoryResource"
    except Exception:  # noqa: BLE001 - an RMM we do not know: leave it alone
        return False


@contextlib.contextmanager
def pooled_allocations() -> Iterator[None]:
    """Within: CuPy allocations come from CuPy's memory pool when they would otherwise be
    cudaMalloc calls through an unpooled RMM (see :func:`_unpooled_rmm`); else nothing changes."""
    if _unpooled_rmm():
        with cp.cuda.using_allocator(cp.get_default_memory_pool().malloc):
            yield
    else:
        yield


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value) if "." in repr(value) or "e" in repr(value) else f"{value}.0"
    return str(int(value))


def grid(work: int, threads: int = THREADS, per_sm: int = 32) -> tuple[int]:
    """Blocks for ``work`` items of ``threads`` per block (one item per block: ``threads=1``),
    at most ``per_sm`` blocks per multiprocessor; at least one."""
    sms = gpu_attribute("MultiProcessorCount")
    return (max(1, min((work + threads - 1) // threads, sms * per_sm)),)


def wait(event: Any) -> None:
    """Wait for a recorded ``cupy.cuda.Event``."""
    event.synchronize()


def wait_idle(stream: Any = None) -> None:
    """Wait for the work queued so far on ``stream`` (default: the current one)."""
    (stream or cp.cuda.get_current_stream()).synchronize()


def interleave(gpu_ranges: list[tuple[int, int]], launch: Any, cpu_ranges: Any, run_cpu: Any) -> None:
    """Run a hybrid call's two shares side by side, in ranges short enough for a timely Ctrl-C.

    ``launch(lo, hi)`` queues one GPU range (asynchronously); ``run_cpu(lo, hi)`` computes one
    CPU range (e.g. from :func:`graphops.base.work.chunks`). Between CPU ranges the next GPU range
    is queued once the GPU has no more than one range ahead of it, so at most two GPU ranges
    are ever queued: Ctrl-C waits for them and one CPU range, not for the whole call.
    """
    queued: list[Any] = []
    todo = list(gpu_ranges)

    def queue_one() -> None:
        launch(*todo.pop(0))
        event = cp.cuda.Event(block=False, disable_timing=True)
        event.record()
        queued.append(event)

    for lo, hi in cpu_ranges:
        queued[:] = [e for e in queued if not e.done]
        while todo and len(queued) < 2:
            queue_one()
        run_cpu(lo, hi)
    while todo:
        if len(queued) >= 2:
            wait(queued.pop(0))
        queue_one()
    for event in queued:
        wait(event)


def random_read_rate(table_bytes: int = 16 << 20, rounds: int = 256) -> float:
    """4-byte reads per second at random positions of a table of ``table_bytes`` (a power of two;
    the default stays in an H100's 50 MB L2), measured with kernels/probe.cu: the rate of the
    lookups a hash set or bitmap outside shared memory makes, for benchmark work floors."""
    from graphops.base.timing import timed

    words = table_bytes // 4
    table = cp.arange(words, dtype=cp.uint32)
    threads = 256
    blocks = gpu_attribute("MultiProcessorCount") * 64
    out = cp.empty(blocks * threads, cp.uint32)
    fn = load_module("graphops.base", "probe").get_function("random_reads")
    run = lambda: fn((blocks,), (threads,), (table, cp.uint64(words - 1), cp.int32(rounds), out))  # noqa: E731
    best = timed(run, repeat=5, warmup=1).best
    return blocks * threads * rounds / best


@functools.cache
def _gram_tile_kernels() -> dict[Any, Any]:
    """kernels/gram.cu's two kernels, by the dtype of the tile they read."""
    module = load_module("graphops.base", "gram")
    return {np.dtype(np.float32): module.get_function("gram_tile_f32"),
            np.dtype(np.float64): module.get_function("gram_tile_f64")}


def gram_tile(src: Any, out: Any, drow: Any = None, dcol: Any = None) -> None:
    """``out[...] = src`` (float32 or float64 rows, unit column stride), or with the diagonals
    ``src / sqrt(drow dcolᵀ)`` (0 where that product is not positive), in one pass over the tile
    (kernels/gram.cu); ``src`` may be ``out``. Bit for bit :func:`graphops.engine.gram.normalize`."""
    rows, cols = out.shape
    if rows == 0 or cols == 0:
        return
    if drow is not None:
        drow, dcol = (cp.ascontiguousarray(d, dtype=cp.float64) for d in (drow, dcol))
    blocks = (-(-cols // THREADS), min(rows, 65535))
    _gram_tile_kernels()[src.dtype](blocks, (THREADS,), (src, cp.int64(src.strides[0] // src.itemsize), out,
                                                         cp.int64(out.strides[0] // 8), drow, dcol, cp.int32(rows),
                                                         cp.int32(cols)))

