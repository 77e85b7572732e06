"""The reference programs' file formats: ``*.Vertex.csv`` and ``*.Edges.csv``.

Both are whitespace-separated token streams: a header ``ROWS COLUMNS`` (COLUMNS counts the
id, or ``src dst``, too), then ROWS rows of COLUMNS numbers. Vertex rows are ``id f_1 ..``
with ``id`` equal to the row number (0-based); edge rows are ``src dst f_1 ..`` with 0-based
vertex ids. Features are read as IEEE doubles exactly as C's ``%lf`` reads them (correctly
rounded). Rows are normally one per line, numbers one space apart: read by Arrow's multi-threaded
CSV parser (correctly rounded too); other spacing by pandas' C parser; a file whose rows are
broken across lines is read token by token, as the reference programs do. Every problem is
reported with the file, the line and what to fix.
"""
from __future__ import annotations

import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from graphops.plugin import (Device, Graph, InputError, InputTypeError, ReadOptions, distinct, host_pandas, to_device,
                             to_family)

from .params import Pattern

pd = host_pandas()  # the real pandas, also under cudf.pandas

# pandas before 3.0 reads doubles correctly rounded only with float_precision="round_trip";
# from 3.0 that is the default and the argument is deprecated.
_EXACT = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}

__all__ = ["read_appclass", "read_vertices", "read_edges", "read_vertex_frame", "read_edge_frame",
           "Table", "sample_pattern", "write_appclass"]


@dataclass(frozen=True)
class Table:
    """One file's rows: ``values`` (rows × columns, float64) and the line each row starts on."""

    path: str
    values: np.ndarray
    lines: Any  # int array of 1-based line numbers, or None: row r is on line r + 2

    def line(self, row: int) -> int:
        return int(self.lines[row]) if self.lines is not None else row + 2


def _header(path: str, first: str, min_columns: int, what: str) -> tuple[int, int]:
    tokens = first.split()
    example = "1000 14" if what == "vertex" else "20135 19"
    if len(tokens) != 2 or not all(t.isdigit() for t in tokens):
        raise InputError(f"{path}:1: the header must be 'ROWS COLUMNS' (two non-negative integers, e.g. "
                         f"{example!r}); found {first.strip()[:60]!r}")
    rows, cols = int(tokens[0]), int(tokens[1])
    if cols < min_columns:
        names = "the id" if what == "vertex" else "src and dst"
        raise InputError(f"{path}:1: {'a vertex' if what == 'vertex' else 'an edge'} file needs at least {min_columns} columns per row "
                         f"({names} plus one feature); the header says {cols}")
    return rows, cols


def _arrow(body: Any, rows: int, cols: int) -> np.ndarray | None:
    """Rows one per line, numbers one space apart: Arrow's CSV parser (threads, the GIL released;
    three times pandas' speed on a 30 MB edge file); ``None`` when the file is not that tidy."""
    import pyarrow as pa
    from pyarrow import csv

    names = [f"c{i}" for i in range(cols)]
    try:
        table = csv.read_csv(pa.BufferReader(body),
                             read_options=csv.ReadOptions(column_names=names),
                             parse_options=csv.ParseOptions(delimiter=" ", quote_char=False),
                             convert_options=csv.ConvertOptions(column_types=dict.fromkeys(names, pa.float64()),
                                                                null_values=[], strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    if table.num_rows != rows or table.num_columns != cols:
        return None
    out = np.empty((rows, cols), order="F")  # column by column; the callers take column slices
    for c, column in enumerate(table.columns):
        out[:, c] = column.to_numpy()
    return out


def _fast(path: str, body: str, rows: int, cols: int) -> np.ndarray | None:
    """Rows one per line, all numeric: pandas' C parser; ``None`` when the file is not that tidy."""
    try:
        frame = pd.read_csv(io.StringIO(body), sep=r"\s+", header=None, dtype=np.float64, engine="c",
                            na_filter=False, **_EXACT)
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError):
        return None
    values = frame.to_numpy()
    return values if values.shape == (rows, cols) else None


def _slow(path: str, body: str, rows: int, cols: int) -> Table:
    """Token by token, as ``fscanf`` reads: every problem named by its line."""
    values, lines, count = np.empty(rows * cols), np.empty(rows, np.int64), 0
    for number, text in enumerate(body.splitlines(), start=2):
        for token in text.split():
            if count == rows * cols:
                raise InputError(f"{path}:{number}: more data than the header's {rows} rows of {cols} "
                                 f"columns (first extra token {token!r}); fix the header or remove the "
                                 f"extra rows")
            try:
                values[count] = float(token)
            except ValueError:
                raise InputError(f"{path}:{number}: {token!r} is not a number (row {count // cols}, "
                                 f"column {count % cols})") from None
            if count % cols == 0:
                lines[count // cols] = number
            count += 1
    if count < rows * cols:
        raise InputError(f"{path}: the file ends early: the header promises {rows} rows of {cols} "
                         f"columns ({rows * cols} numbers) but it holds {count} (row {count // cols} "
                         f"is incomplete or missing); fix the header or restore the missing rows")
    return Table(path, values.reshape(rows, cols), lines)


def _read(path: str | os.PathLike, min_columns: int, what: str) -> Table:
    path = str(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:  # missing, a folder, unreadable: one line naming the file and the fix
        why = "is a folder" if os.path.isdir(path) else "does not exist" if not os.path.exists(path) else \
            f"cannot be read ({exc.strerror or exc})"
        article = "an" if what == "edge" else "a"
        raise InputError(f"{path}: the {what} file {why}; give the path of {article} {what} file "
                         f"(*.{'Vertex' if what == 'vertex' else 'Edges'}.csv)") from None
    cut = data.find(b"\n")
    if b"\r" in data[:cut].rstrip(b"\r"):  # lines ended by a bare CR: as Python's text mode reads them
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        cut = data.find(b"\n")
    cut = len(data) if cut < 0 else cut
    first, raw = data[:cut].decode("utf-8", errors="replace"), memoryview(data)[cut + 1:]
    if not first.strip():
        raise InputError(f"{path}:1: the file is empty or its first line is blank; it must start with "
                         f"the header 'ROWS COLUMNS'")
    rows, cols = _header(path, first, min_columns, what)
    # a header promising more numbers than the bytes could hold (2 a number at the least): said before
    # the table is allocated (a wrong header could ask for terabytes); small files: the readers say where
    if rows * cols > max((len(raw) + 1) // 2, 1 << 20):
        raise InputError(f"{path}:1: the header promises {rows:,} rows of {cols:,} columns ({rows * cols:,} numbers), "
                         f"but the file holds only {len(raw):,} bytes after it; fix the header or restore the "
                         f"missing rows")
    values = _arrow(raw, rows, cols) if rows else None  # no rows: the token reader checks that none follow
    if values is not None:
        table = Table(path, values, None)
    else:
        body = bytes(raw).decode("utf-8", errors="replace")
        values = _fast(path, body, rows, cols) if rows else None
        table = Table(path, values, None) if values is not None else _slow(path, body, rows, cols)
    _check_finite(table)
    return table


def _check_finite(table: Table) -> None:
    bad = ~np.isfinite(table.values)
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        raise InputError(f"{table.path}:{table.line(row)}: value {table.values[row, col]:g} in column {col} "
                         f"is not a finite number ({int(bad.sum())} such values in the file); features "
                         f"and ids must be finite")


def _check_ids(table: Table, col: int, limit: int | None, role: str) -> np.ndarray:
    ids = table.values[:, col]
    bad = (ids != np.floor(ids)) | (ids < 0) | (ids >= (limit if limit is not None else 2.0 ** 53))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        if limit == 0:
            raise InputError(f"{table.path}:{table.line(row)}: {role} id {ids[row]:g} names a vertex, but the vertex "
                             f"file has no rows (its header says 0); fix the vertex file's header or rows")
        allowed = f"integers in 0..{limit - 1}" if limit is not None else "non-negative integers"
        raise InputError(f"{table.path}:{table.line(row)}: {role} id {ids[row]:g} is out of range; ids "
                         f"must be {allowed} (0-based rows of the vertex file)")
    return ids.astype(np.int64)


def read_vertices(path: str | os.PathLike) -> np.ndarray:
    """Features of a vertex file (rows × dn); the id column must be 0, 1, 2, ... in order."""
    table = _read(path, 2, "vertex")
    ids = table.values[:, 0]
    wrong = ids != np.arange(len(ids))
    if wrong.any():
        row = int(np.flatnonzero(wrong)[0])
        raise InputError(f"{table.path}:{table.line(row)}: vertex id {ids[row]:g} on row {row}; ids must be "
                         f"0, 1, 2, ... in file order (row i holds vertex i)")
    return table.values[:, 1:]


def read_edges(path: str | os.PathLike, n_vertices: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(src, dst, features)`` of an edge file; ids checked against ``n_vertices`` when given."""
    table = _read(path, 3, "edge")
    src = _check_ids(table, 0, n_vertices, "src")
    dst = _check_ids(table, 1, n_vertices, "dst")
    return src, dst, table.values[:, 2:]


def _named(features: np.ndarray) -> dict[str, np.ndarray]:
    return {f"f{i}": features[:, i] for i in range(features.shape[1])}


def _vertex_frame(x: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"id": np.arange(len(x), dtype=np.int64), **_named(x)})


def _edge_frame(src: np.ndarray, dst: np.ndarray, a: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"src": src, "dst": dst, **_named(a)})


def read_vertex_frame(path: Path, device: Device, options: ReadOptions) -> Any:
    """Reader hook (node frames): ``id`` plus feature columns ``f0, f1, ...``."""
    return to_family(_vertex_frame(read_vertices(path)), device)


def read_edge_frame(path: Path, device: Device, options: ReadOptions) -> Any:
    """Reader hook (edge frames): ``src``, ``dst`` plus feature columns ``f0, f1, ...``."""
    return to_family(_edge_frame(*read_edges(path)), device)


def read_appclass(vertex_path: str | os.PathLike, edge_path: str | os.PathLike,
                  device: Device | str = "cpu") -> Graph:
    """A directed graph with node and edge features from the reference programs' two files.

    The node frame has ``id`` and ``f0..f{dn-1}``; the edge frame ``src``, ``dst`` and
    ``f0..f{de-1}`` in file order. ``device="gpu"`` gives a cuDF-backed graph.
    """
    x = read_vertices(vertex_path)
    edges = _edge_frame(*read_edges(edge_path, len(x)))
    return Graph.from_edgelist(edges, directed=True, nodes=_vertex_frame(x)).to(device)


def write_appclass(graph: Graph, vertex_path: str | os.PathLike, edge_path: str | os.PathLike,
                   digits: int = 17) -> None:
    """``graph`` in the reference programs' two files, as :func:`read_appclass` reads them back
    (ids as integers, every feature with ``digits`` significant digits, 1 to 17: with 17, the same
    doubles), a vertex row per vertex
    (``id`` then its node feature columns; none without a node frame), an edge row per edge
    (``src dst`` then its edge feature columns)."""
    edges = graph.edges
    ids = np.arange(graph.n_vertices, dtype=np.float64)[:, None]
    node_cols = [c for c in graph.nodes.columns if c != "id"] if graph.nodes is not None else []
    vertex = np.hstack([ids, to_device(graph.nodes[node_cols].to_numpy(np.float64), Device.CPU)]) if node_cols \
        else ids
    ends = np.stack([to_device(graph.src_index, Device.CPU), to_device(graph.dst_index, Device.CPU)], axis=1)
    edge_cols = [c for c in edges.columns if c not in ("src", "dst")]
    edge = np.hstack([ends.astype(np.float64), to_device(edges[edge_cols].to_numpy(np.float64), Device.CPU)])
    if not (isinstance(digits, int) and 1 <= digits <= 17):
        raise InputError(f"write_appclass: digits must be an integer from 1 to 17; got {digits!r}")
    number = f"%.{digits}g"
    for path, rows, ids in ((vertex_path, vertex, 1), (edge_path, edge, 2)):
        with open(path, "w", encoding="ascii") as out:
            out.write(f"{rows.shape[0]} {rows.shape[1]}\n")
            np.savetxt(out, rows, fmt=["%d"] * ids + [number] * (rows.shape[1] - ids), delimiter=" ")  # ids whole


def sample_pattern(graph: Graph, max_nodes: int = 9, seed: int = 42) -> Graph:
    """A pattern from ``graph``: a random vertex q with at least one neighbour other than itself,
    up to ``max_nodes`` (1 or more) of its neighbours (either direction), and every edge among them
    (the induced subgraph, multi-edges and features kept). Vertices are renumbered ``0..k`` with q
    first; node and edge frames keep their feature columns. ``seed``: an integer in 0..2**63-1."""
    max_nodes, seed = _pattern_request(graph, max_nodes, seed)
    src, dst = to_device(graph.src_index, Device.CPU), to_device(graph.dst_index, Device.CPU)
    apart = src != dst
    linked = np.flatnonzero(np.bincount(np.concatenate([src[apart], dst[apart]]), minlength=graph.n_vertices))
    if len(linked) == 0:
        raise InputError(f"sample_pattern: the graph has no edges between two different vertices "
                         f"({graph.n_edges} edge(s), all self-loops or none) to sample a pattern from")
    rng = np.random.default_rng(seed)
    q = int(rng.choice(linked))
    near = distinct(np.concatenate([dst[src == q], src[dst == q]]))
    near = near[near != q]
    chosen = np.concatenate([[q], rng.permutation(near)[:max_nodes]]).astype(np.int64)
    new_id = np.full(graph.n_vertices, -1, np.int64)
    new_id[chosen] = np.arange(len(chosen))
    keep = np.flatnonzero((new_id[src] >= 0) & (new_id[dst] >= 0))
    edges = graph.edges.iloc[keep].reset_index(drop=True)
    edges["src"], edges["dst"] = new_id[src[keep]], new_id[dst[keep]]
    nodes = None
    if graph.nodes is not None:
        nodes = graph.nodes.iloc[chosen].reset_index(drop=True)
        nodes["id"] = np.arange(len(chosen))
    return Graph.from_edgelist(edges, directed=graph.directed, nodes=nodes)


_PATTERN_HELP = {"max_nodes": "max_nodes is the most neighbours of the sampled vertex the pattern takes: an integer, "
                              "1 or more",
                 "seed": "seed is an integer in 0..2**63-1"}


def _pattern_request(graph: Any, max_nodes: Any, seed: Any) -> tuple[int, int]:
    """``max_nodes`` and ``seed`` checked by the :class:`Pattern` model, as a pipeline file's are."""
    if not isinstance(graph, Graph):
        raise InputTypeError(f"sample_pattern: graph must be a graphops Graph; got {type(graph).__name__}")
    try:
        asked = Pattern(of="graph", max_nodes=max_nodes, seed=seed)
    except ValidationError as exc:
        bad = exc.errors()[0]
        name = bad["loc"][0]
        raise InputError(f"sample_pattern: {name}={bad['input']!r}: {bad['msg']}. {_PATTERN_HELP[name]}") from None
    return asked.max_nodes, asked.seed
