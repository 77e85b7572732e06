"""The solvers with the base kernels written in: the template's ``$NODE``/``$EDGE`` become the
kernels' own expressions (reading hyperparameters from arrays, so new values reuse the
compiled code). Each distinct pair of kernel shapes becomes a module file in graphops' cache
folder, so Numba caches its compiled form on disk like any other graphops kernel."""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from string import Template
from types import ModuleType
from typing import Any

from graphops.plugin import BaseKernel, cache_dir

__all__ = ["cpu_module"]

_LOADED: dict[str, ModuleType] = {}


def cpu_module(node_kernel: BaseKernel, edge_kernel: BaseKernel, node_widths: dict | None = None,
               edge_widths: dict | None = None) -> ModuleType:
    """The generated CPU solver module for these kernels' shapes (features in ``.features`` order,
    sequence features ``*_widths[name]`` columns wide)."""
    template = Template((Path(__file__).parent / "cpu_solver.tmpl").read_text())
    node, node_grad = node_kernel.row_source("python", node_kernel.features, node_widths)
    edge, edge_grad = edge_kernel.row_source("python", edge_kernel.features, edge_widths)
    helpers = {**node_kernel.helpers("python"), **edge_kernel.helpers("python")}
    source = template.substitute(NODE=node, EDGE=edge, NODE_GRAD=_assignments(node_grad),
                                 EDGE_GRAD=_assignments(edge_grad), HELPERS="\n\n".join(helpers.values()))
    digest = hashlib.sha256(source.encode()).hexdigest()[:20]
    if digest not in _LOADED:
        _LOADED[digest] = _load(f"graphops_mgk_cpu_{digest}", source)
    return _LOADED[digest]


def _assignments(expressions: list[str]) -> str:
    """The body writing each derivative into ``out``."""
    return "\n".join(f"    out[{h}] = {e}" for h, e in enumerate(expressions)) or "    pass"


def _folder() -> Path:
    path = cache_dir("generated")
    try:
        path.mkdir(parents=True, exist_ok=True)
        if os.access(path, os.W_OK):
            return path
    except OSError:
        pass
    return Path(tempfile.mkdtemp(prefix="graphops-generated-"))


def _load(name: str, source: str) -> Any:
    folder = _folder()
    path = folder / f"{name}.py"
    if not path.exists() or path.read_text() != source:
        tmp = folder / f".{name}.{os.getpid()}.tmp"
        tmp.write_text(source)
        os.replace(tmp, path)  # atomic: another process may load the same file
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
