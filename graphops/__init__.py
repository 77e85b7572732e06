"""graphops: plugin-based graph analytics on pandas/NumPy (CPU) and RAPIDS/CuPy (GPU).

Importing graphops imports no CuPy, cuDF or Numba kernels; plugins load lazily and
their backends are imported only when chosen.
"""
from __future__ import annotations

from .algorithm import Algorithm, Backend, Input, Params, Reader
from .device import Device, gpu_available, rapids_available
from .dispatch import execute, run
from .errors import BackendUnavailableError, ConfigError, GraphopsError, PluginError
from .graph import Graph
from .graphset import GraphSet
from .hookspecs import hookimpl
from .io import read_graph
from .pipeline import load_pipeline, run_pipeline
from .tu import read_tu

__version__ = "0.1.0"

__all__ = [
    "Algorithm", "Backend", "Input", "Params", "Reader", "Device", "Graph", "GraphSet",
    "GraphopsError", "ConfigError", "PluginError", "BackendUnavailableError",
    "hookimpl", "run", "execute", "run_pipeline", "load_pipeline", "read_graph", "read_tu",
    "gpu_available", "rapids_available", "generate", "__version__",
]


def __getattr__(name: str):
    # graphops.generate (R-MAT, grids) compiles Numba code: imported on first use only.
    if name == "generate":
        import importlib

        return importlib.import_module(".generate", __name__)
    raise AttributeError(f"module 'graphops' has no attribute {name!r}")
