"""graphops: plugin-based graph analytics on pandas/NumPy (CPU) and RAPIDS/CuPy (GPU).

Importing graphops imports no CuPy, cuDF or Numba kernels; plugins load lazily and
their backends are imported only when chosen.
"""
from __future__ import annotations

from . import datasets
from .algorithm import Algorithm, Backend, Command, Input, Params, Reader, Result
from .daskgraph import DaskGraph
from .device import Device, gpu_available, rapids_available
from .dispatch import execute, execute_call, run
from . import errors
from .errors import BackendUnavailableError, ConfigError, GraphopsError, InputError, PipelineError, PluginError
from .graph import Graph
from .graphset import GraphSet
from .hookspecs import hookimpl
from .io import read_graph
from .pipeline import load_pipeline, run_pipeline
from .tu import read_tu
from .version import __version__


__all__ = [
    "Algorithm", "Backend", "Command", "Input", "Params", "Reader", "Result", "Device", "Graph", "GraphSet", "DaskGraph",
    "GraphopsError", "ConfigError", "InputError", "PipelineError", "PluginError", "BackendUnavailableError",
    "hookimpl", "run", "execute", "execute_call", "run_pipeline", "load_pipeline", "read_graph", "read_tu",
    "gpu_available", "rapids_available", "generate", "datasets", "__version__",
]


def __getattr__(name: str):
    import importlib

    # graphops.generate (R-MAT, grids) compiles Numba code: imported on first use only.
    if name == "generate":
        return importlib.import_module(".generate", __name__)
    if name.startswith("_"):
        raise AttributeError(f"module 'graphops' has no attribute {name!r}")
    from .algorithm import load_target
    from .registry import get_registry

    if name.startswith("read_"):  # a plugin reader's convenience function, e.g. read_appclass
        reader = get_registry().readers.get(name[len("read_"):])
        if reader is not None and reader.function is not None:
            return load_target(reader.function)
    for algo in get_registry().algorithms.values():  # a function an algorithm publishes: is_euler_circuit
        if name in algo.functions:
            return load_target(algo.functions[name])
    raise AttributeError(f"module 'graphops' has no attribute {name!r}")


def _meet_dask() -> None:
    # A process that already runs Dask (a worker reading a graphops object it was sent) learns
    # how graphops objects travel before it reads one; elsewhere Dask stays unimported.
    import sys

    if "distributed" in sys.modules:
        from .wire import register

        register()


_meet_dask()
