"""Layer 4, io: graphs in and results out — edge files by format (:mod:`~graphops.io.files`,
the text reading rule in :mod:`~graphops.io.textio`), TU data sets, the public data-set
catalogue, generators, atomic outputs and pictures. Imports base, model and host.

``read_graph`` and its helpers are importable from here as from the 0.1 module ``graphops.io``.
"""
from graphops.io.files import format_directedness, infer_format, read_graph, read_mtx, read_nodes, read_parquet

__all__ = ["read_graph", "read_parquet", "read_mtx", "read_nodes", "infer_format", "format_directedness"]
