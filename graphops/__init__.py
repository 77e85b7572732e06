"""graphops: plugin-based graph analytics on pandas/NumPy (CPU) and RAPIDS/CuPy (GPU).

Importing graphops imports no CuPy, cuDF or Numba kernels; plugins load lazily and
their backends are imported only when chosen. The package is a layered core (each folder
imports only the folders before it; ``docs/architecture.md``): ``base`` (devices, chunked
work, loaders) ← ``model`` (graphs) ← ``host`` (plugins) ← ``io`` ← ``engine`` (dispatch,
executors) ← ``kernels`` ← ``pipeline`` ← ``cli``; ``graphops.plugin`` is the API plugins use.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

from graphops import errors  # noqa: F401 - graphops.errors, the exception types
from graphops.errors import BackendUnavailableError, ConfigError, GraphopsError, InputError, PipelineError, PluginError
from graphops.version import __version__

# The public names, each imported from its layer on first use (PEP 562): ``import graphops`` (and
# ``graphops --help``) costs no pandas, NumPy or pydantic until a name that needs them is read.
_LAZY = {
    "graphops.base.device": ("Device", "gpu_available", "rapids_available"),
    "graphops.model.daskgraph": ("DaskGraph",),
    "graphops.model.graph": ("Graph",),
    "graphops.model.graphset": ("GraphSet",),
    "graphops.host.algorithm": ("Algorithm", "Backend", "Command", "Generator", "Gram", "Input", "Params",
                                "ReadOptions", "Reader", "Result"),
    "graphops.host.hookspecs": ("hookimpl",),
    "graphops.io.files": ("read_graph",),
    "graphops.io.molecules": ("read_smiles",),
    "graphops.io.tu": ("read_tu",),
    "graphops.engine.dispatch": ("execute", "execute_call", "run"),
    "graphops.pipeline": ("load_pipeline", "run_pipeline"),
}
_WHERE = {name: module for module, names in _LAZY.items() for name in names}
_MODULES = {"datasets": "graphops.io.datasets", "generate": "graphops.io.generate",
            "functions": "graphops.host.functions"}  # what plugins publish: loads them on first use

__all__ = [
    "Algorithm", "Backend", "Command", "Generator", "Gram", "Input", "Params", "Reader", "ReadOptions", "Result",
    "Device", "Graph", "GraphSet", "DaskGraph",
    "GraphopsError", "ConfigError", "InputError", "PipelineError", "PluginError", "BackendUnavailableError",
    "hookimpl", "run", "execute", "execute_call", "run_pipeline", "load_pipeline", "read_graph", "read_tu", "read_smiles",
    "gpu_available", "rapids_available", "generate", "datasets", "functions", "__version__",
]

# Modules of graphops 0.1's flat layout, now in the layer packages: importing an old name still
# works (the same module object) and warns once, naming the new place. Removed in 0.3.
MOVED = {
    "device": "base.device", "dirs": "base.dirs", "jit": "base.jit", "work": "base.work", "timing": "base.timing",
    "cuda": "base.cuda", "stats": "base.stats", "ids": "model.ids", "frames": "model.frames", "csr": "model.csr",
    "graph": "model.graph", "graphset": "model.graphset", "pairs": "model.pairs", "convert": "model.convert",
    "daskgraph": "model.daskgraph", "algorithm": "host.algorithm", "hookspecs": "host.hookspecs",
    "plugins": "host.manager", "registry": "host.registry", "builtins": "io.builtins",
    "validation": "host.validation", "textio": "io.textio", "tu": "io.tu", "outputs": "io.outputs",
    "generate": "io.generate", "plots": "io.plots", "dispatch": "engine.dispatch", "cluster": "engine.cluster",
    "wire": "engine.wire", "gram": "engine.gram", "testing": "engine.testing", "basekernels": "kernels",
    "sources": "pipeline.sources", "bench": "cli.bench", "datasets": "io.datasets",
}


# Public module names that live in a layer: graphops.functions (what plugins publish) is importable
# by that name too (``from graphops.functions import read_appclass``), without a warning.
ALIASES = {"functions": "host.functions"}


class _Moved(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``graphops.<old>`` as the module now at ``graphops.<new>`` (with a DeprecationWarning),
    and ``graphops.<alias>`` as its module (:data:`ALIASES`)."""

    def find_spec(self, name, path, target=None):  # noqa: ANN001 - importlib's protocol
        old = name[len("graphops."):] if name.startswith("graphops.") else None
        return importlib.util.spec_from_loader(name, self) if old in MOVED or old in ALIASES else None

    def create_module(self, spec):  # noqa: ANN001
        short = spec.name[len("graphops."):]
        if short in ALIASES:
            module = importlib.import_module(f"graphops.{ALIASES[short]}")
            self._spec = module.__spec__
            return module
        new = f"graphops.{MOVED[short]}"
        warnings.warn(f"{spec.name} moved to {new} in graphops 0.2 (plugins: import from graphops.plugin); the old "
                      f"name goes in 0.3", DeprecationWarning, stacklevel=3)
        module = importlib.import_module(new)
        self._spec = module.__spec__
        return module

    def exec_module(self, module):  # noqa: ANN001 - the module is the moved one: give it its own spec back
        module.__spec__ = self._spec


sys.meta_path.append(_Moved())


def __getattr__(name: str):
    if name in _WHERE:  # a public name: imported from its layer once
        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    if name in _MODULES:  # graphops.datasets; graphops.generate (it compiles Numba code: on first use only)
        return importlib.import_module(_MODULES[name])
    if name in MOVED:  # graphops.registry as an attribute, as 0.1's flat modules were
        return importlib.import_module(f"graphops.{name}")
    raise AttributeError(f"module 'graphops' has no attribute {name!r}. What plugins publish (a reader's read_<format>, "
                         f"an algorithm's helpers such as is_euler_circuit) is graphops.functions.<name>; algorithms "
                         f"are run by name: graphops.run('<algorithm>', ...)")


def _meet_dask() -> None:
    # A process that already runs Dask (a worker reading a graphops object it was sent) learns
    # how graphops objects travel before it reads one; elsewhere Dask stays unimported.
    if "distributed" in sys.modules:
        from graphops.engine.wire import register

        register()


_meet_dask()
