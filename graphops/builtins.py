"""graphops' own hook implementations: the built-in file formats, registered like any plugin's."""
from __future__ import annotations

from .algorithm import Reader
from .hookspecs import hookimpl


@hookimpl
def graphops_register_readers() -> list[Reader]:
    text = "graphops.io"
    return [
        Reader("csv", (".csv",), f"{text}:read_text", "delimited text (comma, tab or spaces)"),
        Reader("tsv", (".tsv",), f"{text}:read_text", "delimited text (tab or spaces)"),
        Reader("txt", (".txt",), f"{text}:read_text", "whitespace edge list, '#'/'%' comments"),
        Reader("edges", (".edges", ".el"), f"{text}:read_text", "whitespace edge list"),
        Reader("parquet", (".parquet", ".pq"), f"{text}:read_parquet", "Apache Parquet"),
        Reader("mtx", (".mtx",), f"{text}:read_mtx", "MatrixMarket coordinate format"),
    ]
