"""graphops' own hook implementations: the built-in file formats, registered like any plugin's."""
from __future__ import annotations

from graphops.host.algorithm import Reader
from graphops.host.hookspecs import hookimpl


@hookimpl
def graphops_register_readers() -> list[Reader]:
    text, typed = "graphops.io.textio:read_text", "graphops.io.files"
    return [
        Reader("csv", (".csv",), text, "delimited text (comma, tab or spaces)"),
        Reader("tsv", (".tsv",), text, "delimited text (tab or spaces)"),
        Reader("txt", (".txt",), text, "whitespace edge list, '#'/'%' comments"),
        Reader("edges", (".edges", ".el"), text, "whitespace edge list"),
        Reader("parquet", (".parquet", ".pq"), f"{typed}:read_parquet", "Apache Parquet"),
        Reader("mtx", (".mtx",), f"{typed}:read_mtx", "MatrixMarket coordinate format"),
    ]
