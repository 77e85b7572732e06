"""Layer 4, io: graphs in and results out — edge files by format (:mod:`~graphops.io.files`,
the text reading rule in :mod:`~graphops.io.textio`), TU data sets, the public data-set
catalogue, generators, atomic outputs and pictures. Imports base, model and host.

``read_graph`` and its helpers are importable from here as from the 0.1 module ``graphops.io``.
"""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["read_graph", "read_parquet", "read_mtx", "read_nodes", "infer_format", "format_directedness"]


def __getattr__(name: str) -> Any:
    # imported on first use: graphops.io.generators (what plugins' parameters need) costs no pandas
    if name in __all__:
        return getattr(importlib.import_module("graphops.io.files"), name)
    raise AttributeError(f"module 'graphops.io' has no attribute {name!r}")
