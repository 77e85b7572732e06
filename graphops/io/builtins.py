"""graphops' own hook implementations: the built-in file formats and graph generators, registered like
any plugin's, through an entry point of graphops' own distribution (``builtins``), which the plugin
manager always loads (also with ``GRAPHOPS_PLUGINS`` or autoload off). It lives in the io layer, with
the functions its targets name: the host layer names no module above it, by import or by string."""
from __future__ import annotations

from graphops.host.algorithm import Generator, ReadOptions, Reader
from graphops.host.hookspecs import hookimpl


@hookimpl
def graphops_register_readers() -> list[Reader]:
    text, typed, opts = "graphops.io.textio:read_text", "graphops.io.files", ReadOptions.TEXT
    return [
        Reader("csv", (".csv",), text, "delimited text (comma, tab or spaces)", options=opts),
        Reader("tsv", (".tsv",), "graphops.io.textio:read_tsv", "delimited text (tab or spaces; a comma is part of "
               "its field)", options=opts),
        Reader("txt", (".txt",), text, "whitespace edge list, '#'/'%' comments", options=opts),
        Reader("edges", (".edges", ".el"), text, "whitespace edge list", options=opts),
        Reader("parquet", (".parquet", ".pq"), f"{typed}:read_parquet", "Apache Parquet"),
        Reader("mtx", (".mtx",), f"{typed}:read_mtx", "MatrixMarket coordinate format"),
    ]


@hookimpl
def graphops_register_generators() -> list[Generator]:
    params, fn = "graphops.io.generators", "graphops.io.generate"
    return [
        Generator("rmat", f"{params}:RMat", f"{fn}:rmat", gpu=("pylibraft.random",),
                  summary="R-MAT (Graph500 style; on a GPU source drawn by pylibraft)"),
        Generator("gnm", f"{params}:Gnm", f"{fn}:gnm", summary="m uniform random edges among n vertices, features"),
        Generator("grid2d", f"{params}:Grid2D", f"{fn}:grid2d", summary="a 4-neighbour grid"),
        Generator("gnp_set", f"{params}:GnpSet", f"{fn}:gnp_set", makes="graphset",
                  summary="a GraphSet of G(n, p) graphs with labels and attributes"),
    ]
