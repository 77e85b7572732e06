"""The peak device memory of each Dask worker during a block of code.

    with peak_device_memory(client) as peaks:
        out = go.run("jaccard", g, backend="gpu", client=client).persist()
        wait(out)
    peaks    # {worker address: peak bytes in use on its GPU, or None where it has no usable GPU}

On entry, ``client.run`` starts a sampler thread on every worker (a daemon, so it never keeps a
worker alive); it reads the bytes in use on the worker's GPU (total − free, from
``cudaMemGetInfo``: every allocation on the device, CuPy's pool, cuDF's RMM and other processes'
included) when it starts, every ``interval`` seconds, and when it stops, so a short block still
gets a number. On exit (also when the block raises) the samplers stop and ``peaks`` is filled.

The sampler's state lives in this module on the worker, keyed by the worker's address, so that
every later ``client.run`` of a function of this module finds it: a function defined in a script's
``__main__`` is pickled by value and gets fresh globals on each call. That is the one piece of
module state here, and it belongs to the worker process, not to a call: a second ``with`` stops a
sampler left running and starts afresh, and a stop without a start returns None. The reading is
the module-level :func:`device_bytes_in_use`, looked up at each sample, so a test can put a fake
reader in its place on a worker. Nothing from Dask or CuPy is imported until a function runs.
"""
from __future__ import annotations

import contextlib
import math
import threading
from typing import Any, Iterator

from graphops.base.device import gpu_status

__all__ = ["device_bus_id", "device_bytes_in_use", "peak_device_memory", "start_sampling", "stop_sampling"]

THREAD_NAME = "graphops-devmem"

# On a worker: its address -> its running sampler. Module state by design (see the docstring):
# the sampler outlives the ``client.run`` call that started it. Keyed by address because workers
# of a threaded cluster (``processes=False``) share one process.
_RUNNING: dict[str, "_Sampler"] = {}


def device_bytes_in_use(device: int | None) -> int | None:
    """Bytes in use on CUDA device ``device`` (total − free), or None when there is no device or
    CUDA cannot answer."""
    if device is None:
        return None
    import cupy

    try:
        with cupy.cuda.Device(device):
            free, total = cupy.cuda.runtime.memGetInfo()
    except Exception:  # a CUDA error makes this sample unknown, not the run a failure
        return None
    return int(total - free)


def device_bus_id() -> str | None:
    """The PCI bus id of the GPU this process uses (e.g. ``0000:1B:00.0``), or None without a usable
    GPU: which workers share a GPU with the calling process (``client.run(device_bus_id)``), whose
    readings then count that process's memory too."""
    device = _worker_device()
    if device is None:
        return None
    import cupy

    try:
        return str(cupy.cuda.Device(device).pci_bus_id)
    except Exception:  # a CUDA error leaves it unknown, not the run a failure
        return None


def _worker_device() -> int | None:
    """The CUDA device this process uses (dask-cuda gives each worker its own as device 0), or
    None when it has no usable GPU."""
    if not gpu_status()[0]:
        return None
    import cupy

    return int(cupy.cuda.runtime.getDevice())


class _Sampler:
    """A daemon thread keeping the highest reading of :func:`device_bytes_in_use`."""

    def __init__(self, device: int | None, interval: float) -> None:
        self.device, self.interval = device, interval
        self.peak: int | None = None
        self.done = threading.Event()
        self.read()  # the value at start
        self.thread = threading.Thread(target=self._poll, name=THREAD_NAME, daemon=True)
        self.thread.start()

    def read(self) -> None:
        value = device_bytes_in_use(self.device)  # the module's name, looked up now: a test may replace it
        if value is not None:
            self.peak = value if self.peak is None else max(self.peak, int(value))

    def _poll(self) -> None:
        while not self.done.wait(self.interval):  # wakes at once on stop, not after a full interval
            self.read()

    def stop(self) -> int | None:
        self.done.set()
        self.thread.join()
        self.read()  # the value at stop
        return self.peak


def _key(dask_worker: Any) -> str:
    return "" if dask_worker is None else str(dask_worker.address)


def start_sampling(interval: float = 0.01, dask_worker: Any = None) -> None:
    """On a worker (``client.run(start_sampling, interval)``; Dask passes ``dask_worker``): start
    its sampler, stopping one left running first."""
    old = _RUNNING.pop(_key(dask_worker), None)
    if old is not None:
        old.stop()
    _RUNNING[_key(dask_worker)] = _Sampler(_worker_device(), interval)


def stop_sampling(dask_worker: Any = None) -> int | None:
    """On a worker: stop its sampler and return the peak bytes in use on its GPU; None when it has
    no usable GPU or no sampler was started."""
    sampler = _RUNNING.pop(_key(dask_worker), None)
    return None if sampler is None else sampler.stop()


@contextlib.contextmanager
def peak_device_memory(client: Any, interval: float = 0.01) -> Iterator[dict[str, int | None]]:
    """Sample every worker's device memory while the block runs; the yielded dict is filled on
    exit with ``{worker address: peak bytes in use on its GPU, or None}``.

    :param client: a ``dask.distributed.Client``.
    :param interval: seconds between samples (besides the ones at start and stop), > 0.
    """
    if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not 0 < interval < math.inf:
        raise ValueError(f"peak_device_memory: interval must be a finite number of seconds > 0; got {interval!r}")
    peaks: dict[str, int | None] = {}
    client.run(start_sampling, float(interval))
    try:
        yield peaks
    finally:
        peaks.update(client.run(stop_sampling))
