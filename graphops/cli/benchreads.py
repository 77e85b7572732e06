"""``graphops bench``'s file-reading cases (a file's ``bench.reads``): a graph of the file written to
a temporary file, then read back by :func:`graphops.read_graph` (the reading rule, every check
included) and by pyarrow (its reader, then ``Graph.from_edgelist`` on the frame it gives), side by
side in one process. The memory floor is the file's bytes read once at this machine's copy rate."""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Callable

from graphops.base.device import Device, to_device
from graphops.base.timing import timed
from graphops.errors import GraphopsError
from graphops.io.files import read_graph
from graphops.model.graph import Graph

__all__ = ["time_reads", "PEER"]

PEER = "pyarrow"  # the reader each case is compared with


def _write(graph: Graph, path: Path, fmt: str) -> None:
    """The graph's edges as a file: ``src`` and ``dst`` columns, the user's ids, a header line."""
    import pandas as pd

    frame = pd.DataFrame({c: to_device(graph.edges[c].to_numpy(), Device.CPU) for c in ("src", "dst")})
    if fmt == "parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False, sep="\t" if fmt == "tsv" else ",")


def _pyarrow_read(path: Path, fmt: str) -> Graph:
    """pyarrow's reader (all cores), its frame as pandas, then the graph built on it."""
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    if fmt == "parquet":
        table = pq.read_table(path)
    else:
        table = pcsv.read_csv(path, parse_options=pcsv.ParseOptions(delimiter="\t" if fmt == "tsv" else ","))
    return Graph.from_edgelist(table.to_pandas(), "src", "dst")


def time_reads(loaded: Any, settings: Any, repeat: int, warmup: int, make_row: Callable[..., Any]) -> list[Any]:
    """One pair of rows per read case: ``graphops`` (``read_graph``) and ``pyarrow``."""
    rows = []
    for name, case in (settings.reads or {}).items():
        with tempfile.TemporaryDirectory(prefix="graphops-bench-") as tmp:
            path = Path(tmp) / f"{case.graph}.{case.format}"
            try:
                graph = loaded.sources.get(case.graph)
                _write(graph, path, case.format)
            except (GraphopsError, OSError) as exc:
                rows.append(make_row(loaded.file, f"read {name}", name, "graphops", False, "cpu",
                                     note=f"skipped: {str(exc).splitlines()[0]}"))
                continue
            size = path.stat().st_size
            label = f"read {name}: {case.format}, {graph.n_edges:,} edges, {size / 1e6:.0f} MB"
            for backend, read in (("graphops", lambda: read_graph(path)), (PEER, lambda: _pyarrow_read(path, case.format))):
                row = make_row(loaded.file, label, name, backend, backend == PEER, "cpu")
                timing = timed(read, repeat=repeat, warmup=warmup)
                row.times, row.median = list(timing.times), timing.median
                row.floor, row.note = float(size), f"{size / row.median / 1e6:.0f} MB/s of file"
                rows.append(row)
    return rows
