"""Reading graphs from files: formats by suffix (plugins add more), columns by name or position.

Text formats (.csv/.tsv/.txt/.edges) are read by :mod:`graphops.io.textio` (delimiter and
header detection, checked id and weight columns). Without a header, columns are named
``"0"``, ``"1"``, ...; ``src``/``dst``/``weight`` pick columns by name or position
(default: the first two columns, unweighted). A file without edge rows is an error.
Results are written by :mod:`graphops.io.outputs`.
"""
from __future__ import annotations

import errno
import os
import re
import stat
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from graphops.host.algorithm import ReadOptions, load_target
from graphops.host.contract import check_reader_result
from graphops.base.device import Device, host_pandas
from graphops.errors import InputError, choices, did_you_mean
from graphops.io.textcheck import field as shown_field
from graphops.io.textio import TextLayout, resolve_column

pd = host_pandas()  # the real pandas, also under cudf.pandas
_DIGITS = re.compile("[0-9]+")  # ASCII digits only (str.isdigit and int() take any script's)

__all__ = ["read_graph", "read_parquet", "read_mtx", "file_path", "special_file"]


def file_path(value: Any, param: str = "path", where: str = "read_graph") -> Path:
    """``value`` as a :class:`~pathlib.Path`: a ``str`` or ``os.PathLike`` naming a file or folder."""
    from graphops.errors import InputTypeError

    if isinstance(value, (str, os.PathLike)):
        if not os.fspath(value):
            raise InputError(f"{where}: {param} is empty; give the path of a file")
        return Path(value)
    raise InputTypeError(f"{where}: {param} must be a file path (a str or pathlib.Path); got "
                         f"{type(value).__name__} {value!r}")

def _local(frame: pd.DataFrame, device: Device) -> Any:
    frame.columns = [str(c) for c in frame.columns]
    return frame if device is Device.CPU else device.xdf.from_pandas(frame)


def read_parquet(path: Path, device: Device, options: ReadOptions) -> Any:
    """A Parquet file as a pandas (CPU) or cuDF (GPU) frame."""
    names = options.columns
    try:
        frame = device.xdf.read_parquet(path)
    except (OSError, ValueError, TypeError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise InputError(f"{path}: cannot read as Parquet ({type(exc).__name__}: {exc}); is it a Parquet "
                         f"file? Other formats: name the file by its suffix or pass format=") from None
    if names:
        if len(names) > len(frame.columns):
            raise InputError(f"{path}: columns={list(names)} names {len(names)} columns; the file has "
                             f"{len(frame.columns)} ({[str(c) for c in frame.columns]})")
        frame = frame.iloc[:, :len(names)]
        frame.columns = list(names)
    return frame


def _mtx_banner(path: Path, banner: list[str]) -> str:
    if banner[:3] != ["%%matrixmarket", "matrix", "coordinate"] or len(banner) < 5:
        raise InputError(f"{path}, line 1: not a MatrixMarket coordinate file (the first line should start with "
                         f"'%%MatrixMarket matrix coordinate'); dense 'array' files are not edge lists")
    if banner[3] not in ("real", "integer", "pattern"):
        raise InputError(f"{path}, line 1: MatrixMarket field {banner[3]!r} is not supported; use real, integer "
                         f"or pattern")
    return banner[3]


def _mtx_header(path: Path) -> tuple[str, int, tuple[int, int, int]]:
    """Field, lines before the entries, and the size line (rows, columns, entries)."""
    with open(path, "r", encoding="utf-8-sig", errors="replace") as fh:
        field = _mtx_banner(path, fh.readline().lower().split())
        skip = 1
        for line in fh:
            skip += 1
            size = line.split("%", 1)[0].split()
            if size:
                if len(size) != 3 or not all(_DIGITS.fullmatch(t) for t in size):
                    raise InputError(f"{path}, line {skip}: the size line must be 'rows columns entries' (three "
                                     f"whole numbers); got {line.strip()!r}")
                return field, skip, _mtx_size(path, skip, size)
    raise InputError(f"{path}: MatrixMarket file has no size line")


def _mtx_size(path: Path, line: int, size: list[str]) -> tuple[int, int, int]:
    """The size line's numbers; a graph's matrix is square (row i and column i are vertex i)."""
    if any(len(t.lstrip("0")) > 18 for t in size):
        raise InputError(f"{path}, line {line}: the size line's numbers must be below 10**18; got {' '.join(size)!r}")
    n_rows, n_cols, nnz = map(int, size)
    if n_rows != n_cols:
        raise InputError(f"{path}, line {line}: a {n_rows} x {n_cols} matrix; graphops reads a square matrix as a "
                         f"graph (row i and column i are vertex i), and the rows and columns of a rectangular one "
                         f"are two vertex sets. Read it as a bipartite graph with scipy.io.mmread and "
                         f"Graph.from_edgelist, numbering the columns after the rows")
    return n_rows, n_cols, nnz


def _one_triangle(path: Path) -> None:
    """A symmetric MatrixMarket file stores one triangle of an undirected graph: read as directed, the
    other triangle's arcs would be silently missing."""
    with open(path, "r", encoding="utf-8-sig", errors="replace") as fh:
        banner = fh.readline().lower().split()
    if banner[4:5] and banner[4] in ("symmetric", "skew-symmetric", "hermitian"):
        raise InputError(f"{path}, line 1: a {banner[4]} MatrixMarket matrix stores one triangle of an undirected "
                         f"graph; read it with directed=False (YAML: directed: false)")


def read_mtx(path: Path, device: Device, options: ReadOptions) -> Any:
    """A MatrixMarket coordinate file as a frame with columns ``row``, ``col`` [, ``value``]:
    indices from 1 up to the size line's, values finite numbers, the promised number of entries."""
    names = options.columns
    field, skip, (n_rows, n_cols, nnz) = _mtx_header(path)
    cols = ["row", "col"] + ([] if field == "pattern" else ["value"])
    layout = TextLayout(path, comment="%", skip=skip, sep=r"\s+")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(path, sep=r"\s+", header=None, skiprows=skip, comment="%", names=cols,
                                index_col=False, engine="c", keep_default_na=False, na_values=[""])
    except (pd.errors.ParserError, pd.errors.ParserWarning, ValueError):
        frame = None
    if frame is None or bool(frame.isna().to_numpy().any()):
        for row, (_, fields) in enumerate(layout.data_lines()):
            if len(fields) != len(cols):
                raise InputError(f"{layout.where(row)}: a {field} entry has {len(cols)} fields ({' '.join(cols)}); "
                                 f"this line has {len(fields)}")
        raise InputError(f"{path}: cannot parse the MatrixMarket entries")
    if len(frame) != nnz:
        raise InputError(f"{path}, line {skip}: the size line promises {nnz} entries; the file holds {len(frame)}")
    frame["row"], frame["col"] = (_mtx_index(frame, layout, c, n) for c, n in (("row", n_rows), ("col", n_cols)))
    if field != "pattern":
        frame["value"] = _mtx_values(frame, layout, field)
    if names:
        frame.columns = list(names)[:len(cols)] + cols[len(names):]
    return _local(frame, device)


# The most vertices a MatrixMarket file's size line may name: isolated ones become a node frame.
MTX_VERTICES_PER_ENTRY, MTX_VERTICES_FREE = 16, 1 << 24


def _mtx_vertices(path: Path, frame: Any, src: str, dst: str, node_id: str, device: Device) -> Any:
    """The vertices 1..n of a MatrixMarket file whose size line names vertices no entry does (row i
    and column i are vertex i: ``100 100 1`` / ``1 2`` is 100 vertices, 98 of them isolated), as a
    node frame; ``None`` when every vertex is in an entry (the graph needs no node frame then)."""
    _, skip, (n_rows, n_cols, _) = _mtx_header(path)
    n = max(n_rows, n_cols)
    most = MTX_VERTICES_PER_ENTRY * len(frame) + MTX_VERTICES_FREE
    if n > most:  # a node frame of n ids would not fit, or a size line that is not the matrix's
        raise InputError(f"{path}, line {skip}: the size line names {n:,} vertices for {len(frame):,} entries; "
                         f"graphops keeps the vertices no entry names as isolated vertices, at most "
                         f"{MTX_VERTICES_PER_ENTRY} an entry plus {MTX_VERTICES_FREE:,} ({most:,} here): give the "
                         f"matrix's true size")
    ends = np.concatenate([np.asarray(frame[c].to_numpy(), np.int64) for c in (src, dst)])  # (cuDF: to the host)
    seen = np.zeros(n + 1, bool)
    seen[ends] = True
    if seen[1:].all():
        return None
    return _local(pd.DataFrame({node_id: np.arange(1, n + 1, dtype=np.int64)}), device)


def _mtx_index(frame: pd.DataFrame, layout: TextLayout, col: str, n: int) -> Any:
    series = frame[col]
    if series.dtype.kind == "i":
        values = series.to_numpy()
        ok = (values >= 1) & (values <= n)
    else:
        values = series.astype(str).to_numpy(dtype=object)
        ok = np.fromiter((bool(_DIGITS.fullmatch(t)) and len(t.lstrip("0")) <= 19 and 1 <= int(t) <= n
                          for t in values), bool, len(values))
    if not ok.all():
        row = int(np.flatnonzero(~ok)[0])
        raise InputError(f"{layout.where(row, 0 if col == 'row' else 1)}: {col} index {str(values[row])!r} is not a "
                         f"whole number in 1..{n} (the size line's {col}s); MatrixMarket indices count from 1")
    return values.astype("int64")


def _mtx_values(frame: pd.DataFrame, layout: TextLayout, field: str) -> Any:
    values = pd.to_numeric(frame["value"], errors="coerce").to_numpy(dtype="float64")
    bad = ~np.isfinite(values)
    if field == "integer":
        with np.errstate(invalid="ignore"):
            bad |= (values != np.round(values)) | (np.abs(values) >= 2.0 ** 63)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        kind = "an integer" if field == "integer" else "a finite number"
        raise InputError(f"{layout.where(row, 2)}: value {shown_field(frame['value'].iloc[row])} is not {kind} (field "
                         f"{field!r})")
    return values.astype("int64") if field == "integer" else values


def _check_file(path: Path) -> None:
    if not path.exists():
        raise FileNotFoundError(errno.ENOENT, f"graph file not found (resolved to {str(path.resolve())!r})", str(path))
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a folder; for a TU dataset use read_tu()", str(path))
    kind = special_file(path)
    if kind:
        raise InputError(f"{path}: is {kind}, not a regular file; graphops reads graphs from files (reading "
                         f"it could wait forever or never end). Copy the data to a file first")
    if not os.access(path, os.R_OK):
        raise PermissionError(errno.EACCES, "graph file is not readable; check its permissions", str(path))


def special_file(path: str | os.PathLike) -> str | None:
    """What ``path`` is when it exists and is neither a regular file nor a folder (a FIFO, a device,
    a socket), or ``None``."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    for test, name in ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return None


def infer_format(path: Path, registry: Any) -> str:
    """Format name from the file suffix; a clear error listing known suffixes otherwise."""
    reader = registry.reader_for_suffix(path.suffix)
    if reader is None:
        raise InputError(f"cannot tell the format of {str(path)!r} from its suffix {path.suffix!r}. "
                         f"Known suffixes: {', '.join(registry.suffixes())}; or pass format= "
                         f"({choices(registry.readers)})")
    return reader.name


def read_graph(path: str | os.PathLike, format: str | None = None, *, src: Any = None, dst: Any = None,
               weight: Any = None, directed: bool | None = None, dedupe: bool = False,
               columns: Sequence[str] | None = None, header: Any = "auto", ids: str = "auto",
               device: Device | str = "cpu", registry: Any = None, nodes: str | os.PathLike | None = None,
               node_id: str = "id"):
    """Read an edge-list file into a :class:`Graph` (pandas on ``cpu``, cuDF on ``gpu``).

    :param src: the source column: a name or 0-based position (default: column 0)
    :param dst: the destination column (default: column 1)
    :param weight: the weight column (default: none, unweighted)
    :param columns: names for the columns of a file without a header row
    :param header: text files: ``"auto"`` (the first line is a header only when it cannot be
        data), ``True`` or ``False``
    :param ids: text files: ``"auto"`` (integers, or strings when a column holds names),
        ``"integer"`` or ``"string"``
    :param dedupe: keep only the first of repeated edges (see ``Graph.from_edgelist``)
    :param nodes: a node file (``node_id`` column plus label/feature columns), read by the
        format's own node reader when it has one (e.g. ``appclass``), else by its suffix
    """
    from graphops.model.graph import Graph
    from graphops.host.registry import get_registry

    registry = registry or get_registry()
    _check_choice("header", header, ("auto", True, False))
    _check_choice("ids", ids, ("auto", "integer", "string"))
    _check_arguments(directed, dedupe, columns, {"src": src, "dst": dst, "weight": weight})
    path = file_path(path)
    _check_file(path)
    reader = registry.reader(format) if format else registry.reader(infer_format(path, registry))
    fn = load_target(reader.target)
    directed = format_directedness(reader, directed, str(path))
    if directed and reader.target == f"{__name__}:read_mtx":
        _one_triangle(path)
    options = ReadOptions(None if columns is None else tuple(columns), header, ids,
                          {"src": src, "dst": dst, "weight": weight})
    unfit = [k for k in options.asked() if k not in reader.options]
    if unfit:
        raise InputError(f"{str(path)!r}: {' and '.join(k + '=' for k in unfit)} apply to text files; format "
                         f"{reader.name!r} has typed columns")
    frame = check_reader_result(reader, fn(path, Device.parse(device), options), path)  # a plugin's bug, named
    if len(frame) == 0:
        raise InputError(f"{str(path)!r} holds no edge rows; a graph file needs at least one edge")
    s, d = resolve_column(frame, src, 0, "src", path), resolve_column(frame, dst, 1, "dst", path)
    w = resolve_column(frame, weight, None, "weight", path)
    node_frame = None if nodes is None else read_nodes(nodes, reader, Device.parse(device), registry)
    if node_frame is None and reader.target == f"{__name__}:read_mtx":
        node_frame = _mtx_vertices(path, frame, s, d, node_id, Device.parse(device))
    try:
        return Graph.from_edgelist(frame, s, d, w, directed, dedupe=dedupe, nodes=node_frame, node_id=node_id)
    except InputError as exc:  # a typed format's values (Parquet nulls, ids beyond int64): say which files
        raise InputError(f"{path}{'' if nodes is None else f' (nodes: {nodes})'}: {exc}") from None


def _check_arguments(directed: Any, dedupe: Any, columns: Any, roles: dict[str, Any], who: str = "read_graph") -> None:
    """``who``'s (read_graph's) flags and column arguments, by type: ``directed="no"`` is truthy,
    ``weight=2.9`` was column 2, ``columns="ab"`` two columns ``a`` and ``b``."""
    from graphops.errors import InputTypeError

    if directed is not None and not isinstance(directed, (bool, np.bool_)):
        raise InputTypeError(f"{who}: directed must be True, False or None (the format's own); got {directed!r}")
    if not isinstance(dedupe, (bool, np.bool_)):
        raise InputTypeError(f"{who}: dedupe must be True or False; got {dedupe!r}")
    for role, spec in roles.items():
        position = isinstance(spec, (int, np.integer)) and not isinstance(spec, (bool, np.bool_))
        if spec is not None and not (isinstance(spec, str) or position) or (position and spec < 0):
            raise InputTypeError(f"{who}: {role} must be a column name (a str) or a position counted from 0 "
                                 f"(an int); got {spec!r}")
    if columns is not None:
        names = list(columns) if not isinstance(columns, (str, bytes)) and hasattr(columns, "__iter__") else None
        if not names or not all(isinstance(c, str) and c for c in names) or len(set(names)) < len(names):
            raise InputTypeError(f"{who}: columns must name the leading columns, each once (a list of "
                                 f"strings, e.g. ['src', 'dst']); got {columns!r}")


def _check_choice(name: str, value: Any, allowed: tuple) -> None:
    if not any(value is a or (isinstance(a, str) and value == a) for a in allowed):
        raise InputError(f"{name}={value!r} is not one of {', '.join(map(repr, allowed))}."
                         f"{did_you_mean(value, [a for a in allowed if isinstance(a, str)])}")


def format_directedness(reader: Any, directed: bool | None, where: str) -> bool:
    """``directed`` as asked, or the format's own; an error when they disagree."""
    if reader.directed is None:
        return bool(directed)
    if directed is not None and bool(directed) != reader.directed:
        raise InputError(f"{where}: format {reader.name!r} gives {'directed' if reader.directed else 'undirected'} "
                         f"graphs ({reader.summary}); drop directed: {str(bool(directed)).lower()} or set it to "
                         f"{str(reader.directed).lower()}")
    return reader.directed


def read_nodes(path: str | os.PathLike, edge_reader: Any, device: Device, registry: Any) -> Any:
    """A node frame: by the edge format's node reader, else as a frame file with a header row."""
    path = file_path(path, "nodes")
    _check_file(path)
    if edge_reader.nodes is not None:
        return check_reader_result(edge_reader, load_target(edge_reader.nodes)(path, device, ReadOptions()), path,
                                   "nodes")
    reader = registry.reader(infer_format(path, registry))
    if "header" in reader.options:  # a text format: a table with a header row
        from graphops.io.textio import read_node_text

        return read_node_text(path, device)
    return check_reader_result(reader, load_target(reader.target)(path, device, ReadOptions()), path)
