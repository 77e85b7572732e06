"""Reading graphs from files: formats by suffix (plugins add more), columns by name or position.

Text formats (.csv/.tsv/.txt/.edges) are read by :mod:`graphops.textio` (delimiter and
header detection, checked id and weight columns). Without a header, columns are named
``"0"``, ``"1"``, ...; ``src``/``dst``/``weight`` pick columns by name or position
(default: the first two columns, unweighted). A file without edge rows is an error.
Results are written by :mod:`graphops.outputs`.
"""
from __future__ import annotations

import errno
import inspect
import os
from pathlib import Path
from typing import Any, Sequence


from .algorithm import load_target
from .device import Device, host_pandas
from .errors import InputError, choices
from .textio import resolve_column

pd = host_pandas()  # the real pandas, also under cudf.pandas

__all__ = ["read_graph", "read_parquet", "read_mtx"]

def _local(frame: pd.DataFrame, device: Device) -> Any:
    frame.columns = [str(c) for c in frame.columns]
    return frame if device is Device.CPU else device.xdf.from_pandas(frame)


def read_parquet(path: Path, device: Device, names: Sequence[str] | None = None) -> Any:
    """A Parquet file as a pandas (CPU) or cuDF (GPU) frame."""
    frame = device.xdf.read_parquet(path)
    if names:
        frame.columns = list(names)
    return frame


def _mtx_banner(path: Path, banner: list[str]) -> str:
    if banner[:3] != ["%%matrixmarket", "matrix", "coordinate"] or len(banner) < 5:
        raise InputError(f"{path}: not a MatrixMarket coordinate file (first line should start with "
                         f"'%%MatrixMarket matrix coordinate'); dense 'array' files are not edge lists")
    if banner[3] not in ("real", "integer", "pattern"):
        raise InputError(f"{path}: MatrixMarket field {banner[3]!r} is not supported; use real, integer "
                         f"or pattern")
    return banner[3]


def _mtx_header(path: Path) -> tuple[str, int, int]:
    """Field, lines before the entries, and promised entry count of a MatrixMarket file."""
    with open(path, "r", encoding="utf-8", errors="replace") as fh:
        field = _mtx_banner(path, fh.readline().lower().split())
        skip = 1
        for line in fh:
            skip += 1
            if line.strip() and not line.startswith("%"):
                return field, skip, int(line.split()[2])
    raise InputError(f"{path}: MatrixMarket file has no size line")


def read_mtx(path: Path, device: Device, names: Sequence[str] | None = None) -> Any:
    """A MatrixMarket coordinate file as a frame with columns ``row``, ``col`` [, ``value``]."""
    field, skip, nnz = _mtx_header(path)
    cols = ["row", "col"] + ([] if field == "pattern" else ["value"])
    frame = pd.read_csv(path, sep=r"\s+", header=None, skiprows=skip, comment="%", names=cols,
                        engine="c")
    if len(frame) != nnz:
        raise InputError(f"{path}: the size line promises {nnz} entries; found {len(frame)}")
    if names:
        frame.columns = list(names)
    return _local(frame, device)


def _check_file(path: Path) -> None:
    if not path.exists():
        raise FileNotFoundError(errno.ENOENT, f"graph file not found (resolved to {str(path.resolve())!r})", str(path))
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a folder; for a TU dataset use read_tu()", str(path))
    if not os.access(path, os.R_OK):
        raise PermissionError(errno.EACCES, "graph file is not readable; check its permissions", str(path))


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

    :param src, dst, weight: column names or 0-based positions (default: columns 0 and 1,
        unweighted)
    :param columns: names for the columns of a file without a header row
    :param header: text files: ``"auto"`` (the first line is a header only when it cannot be
        data), ``True`` or ``False``
    :param ids: text files: ``"auto"`` (integers, or strings when a column holds names),
        ``"integer"`` or ``"string"``
    :param dedupe: keep only the first of repeated edges (see ``Graph.from_edgelist``)
    :param nodes: a node file (``node_id`` column plus label/feature columns), read by the
        format's own node reader when it has one (e.g. ``appclass``), else by its suffix
    """
    from .graph import Graph
    from .registry import get_registry

    registry = registry or get_registry()
    path = Path(path)
    _check_file(path)
    reader = registry.reader(format) if format else registry.reader(infer_format(path, registry))
    fn = load_target(reader.target)
    directed = format_directedness(reader, directed, str(path))
    roles = {"src": src, "dst": dst, "weight": weight}
    if "roles" in inspect.signature(fn).parameters:
        frame = fn(path, Device.parse(device), columns, header=header, ids=ids, roles=roles)
    else:
        if header != "auto" or ids != "auto":
            raise InputError(f"{str(path)!r}: header= and ids= apply to text files; format "
                             f"{reader.name!r} has typed columns")
        frame = fn(path, Device.parse(device), columns)
    if len(frame) == 0:
        raise InputError(f"{str(path)!r} holds no edge rows; a graph file needs at least one edge")
    s, d = resolve_column(frame, src, 0, "src"), resolve_column(frame, dst, 1, "dst")
    w = resolve_column(frame, weight, None, "weight")
    node_frame = None if nodes is None else read_nodes(nodes, reader, Device.parse(device), registry)
    return Graph.from_edgelist(frame, s, d, w, directed, dedupe=dedupe, nodes=node_frame, node_id=node_id)


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
    path = Path(path)
    _check_file(path)
    if edge_reader.nodes is not None:
        return load_target(edge_reader.nodes)(path, device)
    reader = registry.reader(infer_format(path, registry))
    fn = load_target(reader.target)
    if "roles" in inspect.signature(fn).parameters:  # a text format: a table with a header row
        from .textio import read_node_text

        return read_node_text(path, device)
    return fn(path, device, None)
