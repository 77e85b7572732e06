"""Devices, GPU detection and array/frame families.

Nothing here imports CuPy or cuDF at module import. ``gpu_available()`` imports
CuPy only when asked and never raises; ``device_of`` looks at ``sys.modules``
before any ``isinstance`` test, so asking about a NumPy array never imports CuPy.
"""
from __future__ import annotations

import contextlib
import enum
import functools
import importlib
import importlib.util
import logging
import os
import sys
from typing import Any, Iterator

from graphops.errors import InputError, MissingDependencyError

log = logging.getLogger("graphops")

__all__ = [
    "Device",
    "gpu_available",
    "gpu_status",
    "rapids_available",
    "device_of",
    "require",
    "synchronize",
    "to_device",
    "host_pandas",
    "host_memory",
    "unproxy",
    "as_proxy",
]

_INSTALL_HINT = {
    "cupy": "pip install 'graphops[gpu]' (or cupy-cuda13x)",
    "cudf": "pip install 'graphops[gpu]' (or cudf-cu13)",
    "cugraph": "pip install 'graphops[gpu]' (or cugraph-cu13)",
    "networkx": "pip install 'graphops[peers]' (or networkx)",
    "scipy": "pip install 'graphops[peers]' (or scipy)",
    "distributed": "pip install 'graphops[dask]' (or distributed)",
    "dask_cuda": "pip install 'graphops[gpu,dask]' (or dask-cuda)",
    "distributed_ucxx": "pip install 'graphops[gpu,dask]' (or distributed-ucxx-cu13), or leave protocol out (tcp)",
    "rdkit": "pip install 'graphops[chem]' (or rdkit)",
}


def require(module: str, purpose: str) -> Any:
    """Import ``module`` or raise :class:`MissingDependencyError` naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        hint = _INSTALL_HINT.get(module.split(".")[0], f"pip install {module.split('.')[0]}")
        raise MissingDependencyError(
            f"{purpose} needs the package {module!r}, which could not be imported ({exc}). "
            f"To remedy this: {hint}."
        ) from exc


class Device(str, enum.Enum):
    """Where arrays live: ``Device.CPU`` (NumPy/pandas) or ``Device.GPU`` (CuPy/cuDF)."""

    CPU = "cpu"
    GPU = "gpu"

    @property
    def xp(self) -> Any:
        """The array module of this device (numpy or cupy)."""
        if self is Device.CPU:
            import numpy

            return numpy
        return require("cupy", "GPU arrays")

    @property
    def xdf(self) -> Any:
        """The frame module of this device (pandas or cudf)."""
        if self is Device.CPU:
            return host_pandas()
        return require("cudf", "GPU frames")

    @classmethod
    def parse(cls, value: "Device | str") -> "Device":
        """Accept ``Device`` or ``"cpu"``/``"gpu"``; anything else is a ``ValueError``."""
        if isinstance(value, Device):
            return value
        try:
            return cls(str(value).lower())
        except ValueError:
            raise InputError(f"device must be 'cpu' or 'gpu'; got {value!r}") from None


@functools.lru_cache(maxsize=None)
def host_memory() -> int:
    """Bytes of memory this machine has (physical), or a very large number where it cannot tell."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # not a POSIX system
        return 2 ** 62


@functools.lru_cache(maxsize=None)
def gpu_status() -> tuple[bool, str]:
    """Return ``(usable, reason)``: whether CuPy imports and sees a CUDA device, and why not."""
    if importlib.util.find_spec("cupy") is None:
        return False, "the package 'cupy' is not installed"
    try:
        import cupy

        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # any CUDA/driver failure means "not usable"
        return False, f"cupy could not reach a CUDA device ({type(exc).__name__}: {exc})"
    if count < 1:
        return False, "cupy sees no CUDA device (check nvidia-smi and CUDA_VISIBLE_DEVICES)"
    return True, f"cupy sees {count} CUDA device(s)"


def gpu_available() -> bool:
    """True when CuPy imports and at least one CUDA device is visible. Never raises."""
    return gpu_status()[0]


@functools.lru_cache(maxsize=None)
def module_available(name: str) -> bool:
    """True when ``name`` imports cleanly. Never raises."""
    try:
        importlib.import_module(name)
    except Exception:
        return False
    return True


def rapids_available(cugraph: bool = False) -> bool:
    """True when a GPU is usable and cuDF (and, if asked, cuGraph) import. Never raises."""
    if not gpu_available() or not module_available("cudf"):
        return False
    return module_available("cugraph") if cugraph else True


def device_of(obj: Any) -> Device:
    """Device of an array or frame: GPU for CuPy/cuDF objects, CPU otherwise; a ``cudf.pandas``
    proxy is where the object it wraps now is."""
    root = type(obj).__module__.split(".")[0]
    if root in ("cupy", "cudf") and root in sys.modules:
        return Device.GPU
    if _proxy_api() is not None:  # proxies name the module of the pandas type they stand for
        inner, proxied = unproxy(obj)
        if proxied:
            return device_of(inner)
    return Device.CPU


# cudf.pandas ---------------------------------------------------------------------------
# Under ``python -m cudf.pandas`` (or ``cudf.pandas.install()``), ``import pandas`` gives a module
# of proxy types, each wrapping a cuDF object (data on the GPU) or a pandas one (on the host), and
# moving the data between them on demand. graphops takes a proxy frame apart at the door: a cuDF
# frame inside stays on the GPU and makes a GPU graph, a pandas one a CPU graph; results go back
# out as proxies around what graphops computed (see dispatch). Inside, graphops uses the real
# pandas (host_pandas), so that its own host frames never wander to the GPU behind its back.

def host_pandas() -> Any:
    """The real pandas module, also when ``cudf.pandas`` has put its proxy module in its place."""
    import pandas

    return getattr(pandas, "_fsproxy_slow", pandas)  # the proxy module keeps the real one there


def _proxy_api() -> Any:
    return sys.modules.get("cudf.pandas") if "cudf.pandas.fast_slow_proxy" in sys.modules else None


def unproxy(obj: Any) -> tuple[Any, bool]:
    """``(the object a cudf.pandas proxy wraps, True)`` (a cuDF object, or a pandas one, without
    copying either), or ``(obj, False)`` for anything that is no proxy."""
    api = _proxy_api()
    if api is None or not api.is_proxy_object(obj):
        return obj, False
    inner = getattr(obj, "_fsproxy_wrapped", None)  # the object wrapped now, wherever it is
    if inner is None:  # a proxy of another make: ask for the GPU object (cudf.pandas' public call)
        inner = obj.as_gpu_object()
    return inner, True


def as_proxy(obj: Any) -> Any:
    """A cuDF or pandas result wrapped as the cudf.pandas proxy a caller under cudf.pandas expects
    (no copy: GPU data stays on the GPU); ``obj`` itself when cudf.pandas is not active."""
    api = _proxy_api()
    return obj if api is None else api.as_proxy_object(obj)


def to_device(arr: Any, device: "Device | str") -> Any:
    """``arr`` as a NumPy (CPU) or CuPy (GPU) array; the same object when already there."""
    device = Device.parse(device)
    if arr is None or device_of(arr) is device:
        return arr
    return device.xp.asarray(arr) if device is Device.GPU else arr.get()


def free_pooled_device_memory() -> None:
    """Give back to the device what CuPy's memory pool holds unused here, if CuPy is in use and a
    device is visible (e.g. before a cluster call: the first worker of a local GPU cluster shares
    this process's GPU); a no-op otherwise."""
    cupy = sys.modules.get("cupy")
    if cupy is not None and gpu_available():
        cupy.get_default_memory_pool().free_all_blocks()


def synchronize() -> None:
    """Wait for queued GPU work, if CuPy is already in use; a no-op otherwise."""
    cupy = sys.modules.get("cupy")
    if cupy is not None and gpu_available():  # CuPy imported where no device is visible: nothing queued
        cupy.cuda.Device().synchronize()


@contextlib.contextmanager
def spare_one_core() -> Iterator[None]:
    """Numba parallel work on all cores but one while this block runs (for hybrid backends).

    The core left drives the GPU, and is not slowed by Numba's worker threads, which keep
    spinning for a while after each parallel region ends.
    """
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(max(1, numba.config.NUMBA_NUM_THREADS - 1))
    try:
        yield
    finally:
        numba.set_num_threads(before)


@functools.cache
def _gpu_attributes(device_id: int) -> dict[str, int]:
    import cupy

    return dict(cupy.cuda.Device(device_id).attributes)


def gpu_attribute(name: str) -> int:
    """An attribute of the current CUDA device, e.g. ``"MultiProcessorCount"`` (read once per
    device: CuPy's ``Device.attributes`` queries every attribute on each access)."""
    import cupy

    return int(_gpu_attributes(cupy.cuda.Device().id)[name])
