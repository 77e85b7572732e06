"""Reading graphs from files and writing results atomically.

Text formats (.csv/.tsv/.txt/.edges) are sniffed: comma, tab or whitespace
delimiter, ``#``/``%`` comment lines, an optional header row. Without a header,
columns are named ``"0"``, ``"1"``, ...; ``src``/``dst``/``weight`` pick columns by
name or position (default: the first two columns, unweighted).
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
import pandas as pd

from .algorithm import load_target
from .device import Device, device_of
from .errors import choices

__all__ = ["read_graph", "read_text", "read_parquet", "read_mtx", "write_result", "atomic_path",
           "OUTPUT_SUFFIXES"]

OUTPUT_SUFFIXES = {"frame": (".parquet", ".csv"), "array": (".npy", ".csv")}


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _sniff(path: Path) -> dict[str, Any]:
    """Delimiter, header, leading lines to skip and comment character of a text edge list."""
    skip, comment = 0, None
    with open(path, "r", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            stripped = line.strip()
            if stripped and stripped[0] not in "#%":
                break
            if stripped:
                comment = comment or stripped[0]
            skip += 1
        else:
            return {"empty": True}
    sep = "," if "," in stripped else "\t" if "\t" in stripped else r"\s+"
    tokens = [t for t in (stripped.split(sep) if sep != r"\s+" else stripped.split()) if t.strip()]
    header = not all(_is_number(t.strip()) for t in tokens)
    return {"empty": False, "sep": sep, "header": header, "skip": skip, "comment": comment or "#"}


def _local(frame: pd.DataFrame, device: Device) -> Any:
    frame.columns = [str(c) for c in frame.columns]
    return frame if device is Device.CPU else device.xdf.from_pandas(frame)


def read_text(path: Path, device: Device, names: Sequence[str] | None = None) -> Any:
    """A delimited text edge list as a frame (parsed on the host, then moved if asked)."""
    info = _sniff(path)
    if info["empty"]:
        return _local(pd.DataFrame({str(i): np.zeros(0, np.int64) for i in range(2)}), device)
    try:
        frame = pd.read_csv(path, sep=info["sep"], header=0 if info["header"] else None,
                            skiprows=info["skip"], comment=info["comment"], engine="c",
                            names=list(names) if names else None, skipinitialspace=True)
    except (pd.errors.ParserError, ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot parse as a delimited edge list ({exc})") from None
    return _local(frame, device)


def read_parquet(path: Path, device: Device, names: Sequence[str] | None = None) -> Any:
    """A Parquet file as a pandas (CPU) or cuDF (GPU) frame."""
    frame = device.xdf.read_parquet(path)
    if names:
        frame.columns = list(names)
    return frame


def _mtx_banner(path: Path, banner: list[str]) -> str:
    if banner[:3] != ["%%matrixmarket", "matrix", "coordinate"] or len(banner) < 5:
        raise ValueError(f"{path}: not a MatrixMarket coordinate file (first line should start with "
                         f"'%%MatrixMarket matrix coordinate'); dense 'array' files are not edge lists")
    if banner[3] not in ("real", "integer", "pattern"):
        raise ValueError(f"{path}: MatrixMarket field {banner[3]!r} is not supported; use real, integer "
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
    raise ValueError(f"{path}: MatrixMarket file has no size line")


def read_mtx(path: Path, device: Device, names: Sequence[str] | None = None) -> Any:
    """A MatrixMarket coordinate file as a frame with columns ``row``, ``col`` [, ``value``]."""
    field, skip, nnz = _mtx_header(path)
    cols = ["row", "col"] + ([] if field == "pattern" else ["value"])
    frame = pd.read_csv(path, sep=r"\s+", header=None, skiprows=skip, comment="%", names=cols,
                        engine="c")
    if len(frame) != nnz:
        raise ValueError(f"{path}: the size line promises {nnz} entries; found {len(frame)}")
    if names:
        frame.columns = list(names)
    return _local(frame, device)


def _resolve_column(frame: Any, spec: Any, default: int | None, role: str) -> str | None:
    if spec is None:
        spec = default
    if spec is None or isinstance(spec, str):
        return spec
    cols = [str(c) for c in frame.columns]
    if not 0 <= int(spec) < len(cols):
        raise ValueError(f"{role}={spec!r}: the file has {len(cols)} columns ({cols}); positions "
                         f"count from 0")
    return cols[int(spec)]


def _check_file(path: Path) -> None:
    if not path.exists():
        raise FileNotFoundError(f"graph file not found: {str(path)!r} (resolved to {str(path.resolve())!r})")
    if path.is_dir():
        raise IsADirectoryError(f"{str(path)!r} is a folder; for a TU dataset use read_tu()")
    if not os.access(path, os.R_OK):
        raise PermissionError(f"graph file {str(path)!r} is not readable; check its permissions")


def infer_format(path: Path, registry: Any) -> str:
    """Format name from the file suffix; a clear error listing known suffixes otherwise."""
    reader = registry.reader_for_suffix(path.suffix)
    if reader is None:
        raise ValueError(f"cannot tell the format of {str(path)!r} from its suffix {path.suffix!r}. "
                         f"Known suffixes: {', '.join(registry.suffixes())}; or pass format= "
                         f"({choices(registry.readers)})")
    return reader.name


def read_graph(path: str | os.PathLike, format: str | None = None, *, src: Any = None, dst: Any = None,
               weight: Any = None, directed: bool = False, dedupe: bool = False,
               columns: Sequence[str] | None = None, device: Device | str = "cpu",
               registry: Any = None):
    """Read an edge-list file into a :class:`Graph` (pandas on ``cpu``, cuDF on ``gpu``).

    :param src, dst, weight: column names or 0-based positions (default: columns 0 and 1,
        unweighted)
    :param columns: names for the columns of a file without a header row
    :param dedupe: keep only the first of repeated edges (see ``Graph.from_edgelist``)
    """
    from .graph import Graph
    from .registry import get_registry

    registry = registry or get_registry()
    path = Path(path)
    _check_file(path)
    reader = registry.reader(format) if format else registry.reader(infer_format(path, registry))
    frame = load_target(reader.target)(path, Device.parse(device), columns)
    s, d = _resolve_column(frame, src, 0, "src"), _resolve_column(frame, dst, 1, "dst")
    w = _resolve_column(frame, weight, None, "weight")
    return Graph.from_edgelist(frame, s, d, w, directed, dedupe=dedupe)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it replaces ``path`` in one step."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_result(result: Any, path: str | os.PathLike) -> Path:
    """Write a frame (.parquet/.csv) or array (.npy/.csv) atomically; return the path."""
    path = Path(path)
    suffix = path.suffix.lower()
    is_frame = hasattr(result, "columns")
    allowed = OUTPUT_SUFFIXES["frame" if is_frame else "array"]
    if suffix not in allowed:
        kind = "a frame" if is_frame else "an array"
        raise ValueError(f"cannot write {kind} to {str(path)!r}; use one of {', '.join(allowed)}")
    with atomic_path(path) as tmp:
        if is_frame:
            _write_frame(result, tmp, suffix)
        else:
            _write_array(result, tmp, suffix)
    return path


def _write_frame(frame: Any, tmp: Path, suffix: str) -> None:
    if suffix == ".parquet":
        frame.to_parquet(tmp, index=False)
    else:
        frame.to_csv(tmp, index=False)


def _write_array(arr: Any, tmp: Path, suffix: str) -> None:
    host = arr.get() if device_of(arr) is Device.GPU else np.asarray(arr)
    with open(tmp, "wb") as fh:
        if suffix == ".npy":
            np.save(fh, host)
        else:
            np.savetxt(fh, np.atleast_2d(host), delimiter=",", fmt="%.17g")
