"""What made a run's results: graphops' and the plugins' versions, Python and the array, frame and
GPU libraries loaded (NumPy, pandas, Numba, PyArrow; CuPy, cuDF, cuGraph, Dask where loaded), the GPU
model and driver, the command line, and each input's content digest. The run summary records it
(``provenance``, and each step's ``cache_key``); a step's Parquet output carries it in its file
metadata (key ``graphops``)."""
from __future__ import annotations

import functools
import platform
import sys
from typing import Any

from graphops.version import __version__

__all__ = ["versions", "inputs"]

PACKAGES = ("numpy", "pandas", "numba", "pyarrow", "scipy", "sklearn", "networkx", "cupy", "cudf", "cugraph", "rmm",
            "pylibraft", "dask", "distributed", "dask_cuda")


def versions(loaded: Any) -> dict[str, Any]:
    """graphops, Python, the libraries loaded now, the plugins of the file's steps, the GPU, the command line."""
    packages = {name: str(getattr(sys.modules[name], "__version__", "?")) for name in PACKAGES
                if name in sys.modules}
    plugins = {algo.plugin: algo.distribution or None for algo in
               (loaded.registry.algorithms.get(step.algorithm) for step in loaded.model.steps) if algo is not None}
    return {"graphops": __version__, "python": platform.python_version(), "platform": platform.platform(),
            "packages": packages, "plugins": plugins, "gpu": _gpu(), "command": list(sys.argv)}


def _gpu() -> dict[str, Any] | None:
    """The GPU in use, asked once per process once CuPy is loaded (a run that never loads it: None)."""
    return _gpu_now() if "cupy" in sys.modules else None


@functools.cache
def _gpu_now() -> dict[str, Any] | None:
    """The GPU in use (model, driver, runtime), when one is usable; else None."""
    from graphops.base.device import gpu_available

    if not gpu_available():
        return None
    try:
        import cupy

        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        name = props["name"]
        return {"model": name.decode() if isinstance(name, bytes) else str(name),
                "driver": cupy.cuda.runtime.driverGetVersion(), "runtime": cupy.cuda.runtime.runtimeGetVersion()}
    except Exception as exc:  # a GPU that cannot answer: said, not fatal
        return {"model": None, "error": f"{type(exc).__name__}: {exc}"}


def inputs(loaded: Any, names: list[str] | None = None) -> dict[str, str]:
    """Each graph the run loaded (or those of ``names``): its content digest (or why it has none)."""
    from graphops.engine.digest import Undigestible, digest

    out = {}
    for name, graph in loaded.sources.graphs.items():
        if names is not None and name not in names:
            continue
        try:
            out[name] = digest(graph)
        except Undigestible as exc:
            out[name] = f"none: {exc}"
        except Exception as exc:  # provenance never stops a run's summary from being written
            out[name] = f"none: {type(exc).__name__}: {exc}"
    return out
