"""Delimited text edge lists (.csv/.tsv/.txt/.edges): sniffing, header detection, checked columns.

* Delimiter: comma, tab or runs of spaces, from the first data line; ``#``/``%`` lines are comments.
* ``header="auto"`` takes the first data line as a header only when it cannot be data: a
  column named by the caller (``src="from"``), or a column whose first value is not a number
  while the values below it are (``src dst weight`` over numbers). ``alice bob`` over
  more names is data, not a header.
* Vertex ids are integers or strings (``ids="auto"``); a column mixing numbers and names is
  an error naming the line (``ids="string"`` reads every id as a string, ``ids="integer"``
  requires integers).
* Every problem names the file, the line and the value.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .device import Device, host_pandas
from .errors import InputError

pd = host_pandas()  # the real pandas, also under cudf.pandas

__all__ = ["read_text", "read_node_text", "resolve_column"]

_INT = re.compile(r"^[+-]?\d+$")
_SAMPLE = 200  # data lines looked at to decide whether the first line is a header


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _tokens(line: str, sep: str) -> list[str]:
    return line.split() if sep == r"\s+" else [t.strip() for t in line.split(sep)]


class _Layout:
    """Where the data starts, how it is split, and which lines hold rows (for messages)."""

    def __init__(self, path: Path):
        self.path = path
        self.skip, self.comment, self.lines = 0, "#", []
        with open(path, "r", encoding="utf-8", errors="replace") as fh:
            for raw in fh:
                stripped = raw.strip()
                if not self.lines and (not stripped or stripped[0] in "#%"):
                    self.comment = stripped[0] if stripped else self.comment
                    self.skip += 1
                    continue
                if stripped and stripped[0] != self.comment:
                    self.lines.append(stripped)
                if len(self.lines) > _SAMPLE:
                    break
        first = self.lines[0] if self.lines else ""
        self.sep = "," if "," in first else "\t" if "\t" in first else r"\s+"

    def looks_like_header(self) -> bool:
        """A column whose first value is not a number while the sampled values below are."""
        rows = [_tokens(line, self.sep) for line in self.lines]
        if len(rows) < 2:
            return False
        for k, token in enumerate(rows[0]):
            below = [r[k] for r in rows[1:] if k < len(r)]
            if below and not _is_number(token) and all(_is_number(t) for t in below):
                return True
        return False

    def line_of(self, row: int, header: bool) -> int:
        """The 1-based file line of data row ``row`` (0-based, after the header)."""
        want, seen = row + (1 if header else 0), -1
        with open(self.path, "r", encoding="utf-8", errors="replace") as fh:
            for number, raw in enumerate(fh, start=1):
                stripped = raw.strip()
                if number <= self.skip or not stripped or stripped[0] == self.comment:
                    continue
                seen += 1
                if seen == want:
                    return number
        return -1


def resolve_column(frame: Any, spec: Any, default: int | None, role: str) -> str | None:
    """The column name a role refers to: a name, a 0-based position, or the default position."""
    if spec is None:
        spec = default
    if spec is None or isinstance(spec, str):
        return spec
    cols = [str(c) for c in frame.columns]
    if not 0 <= int(spec) < len(cols):
        raise InputError(f"{role}={spec!r}: the file has {len(cols)} columns ({cols}); positions "
                         f"count from 0")
    return cols[int(spec)]


def _header(layout: _Layout, header: Any, roles: dict[str, Any], names: Sequence[str] | None) -> bool:
    named = [f"{r}={v!r}" for r, v in roles.items() if isinstance(v, str)]
    if header in (True, False):
        return bool(header)
    if layout.looks_like_header():
        return True
    if named and not names:
        first = layout.lines[0] if layout.lines else ""
        if all(_is_number(t) for t in _tokens(first, layout.sep)):
            raise InputError(f"{layout.path}: {', '.join(named)} name{'s a column' if len(named) == 1 else ' columns'}, "
                             f"but the first line "
                             f"({first!r}) is data, not a header; give positions (src=0) or column "
                             f"names (columns=[...]), or header=True if that line is a header")
        return True
    return False


def read_text(path: Path, device: Device, names: Sequence[str] | None = None, *, header: Any = "auto",
              ids: str = "auto", roles: dict[str, Any] | None = None) -> Any:
    """A delimited text edge list as a frame, its id and weight columns checked.

    :param roles: ``{"src": .., "dst": .., "weight": ..}`` as given to ``read_graph`` (names,
        positions or ``None``); those columns are checked and converted, naming bad lines
    """
    path = Path(path)
    layout = _Layout(path)
    if not layout.lines:
        raise InputError(f"{path}: no edge rows (the file holds only comments or blank lines); an "
                         f"edge list needs at least one 'src dst' line")
    roles = dict(roles or {})
    has_header = _header(layout, header, roles, names)
    frame = _parse(path, layout, has_header, names, str if ids == "string" else None)
    if frame.empty:
        raise InputError(f"{path}: no edge rows below the header line")
    frame.columns = [str(c) for c in frame.columns]
    cols = {"src": resolve_column(frame, roles.get("src"), 0, "src"),
            "dst": resolve_column(frame, roles.get("dst"), 1, "dst"),
            "weight": resolve_column(frame, roles.get("weight"), None, "weight")}
    _check_roles(frame, cols, layout, has_header, ids)
    return frame if device is Device.CPU else device.xdf.from_pandas(frame)


def read_node_text(path: Path, device: Device) -> Any:
    """A delimited text node table with a header row (``id`` plus label/feature columns)."""
    path = Path(path)
    layout = _Layout(path)
    frame = _parse(path, layout, True, None, None) if layout.lines else pd.DataFrame()
    if frame.empty:
        raise InputError(f"{path}: no node rows; a node file needs a header row (e.g. 'id,label') and "
                         f"one row per vertex")
    frame.columns = [str(c) for c in frame.columns]
    return frame if device is Device.CPU else device.xdf.from_pandas(frame)


def _parse(path: Path, layout: _Layout, header: bool, names: Sequence[str] | None, dtype: Any) -> pd.DataFrame:
    try:
        return pd.read_csv(path, sep=layout.sep, header=0 if header else None, skiprows=layout.skip,
                           comment=layout.comment, engine="c", names=list(names) if names else None,
                           skipinitialspace=True, keep_default_na=False, na_values=[""], dtype=dtype)
    except (pd.errors.ParserError, ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot parse as a delimited edge list ({exc})") from None


def _check_roles(frame: pd.DataFrame, cols: dict[str, str | None], layout: _Layout, header: bool,
                 ids: str) -> None:
    for role, col in cols.items():
        if col is not None and col not in frame.columns:
            raise InputError(f"{role}={col!r}: no such column in {layout.path}. Columns: "
                             f"{list(frame.columns)}")
    kinds = {r: _id_kind(frame, cols[r], r, layout, header, ids) for r in ("src", "dst")}
    if "string" in kinds.values() or ids == "string":
        for role in ("src", "dst"):
            frame[cols[role]] = frame[cols[role]].astype(str)
    if cols["weight"] is not None:
        frame[cols["weight"]] = _weights(frame[cols["weight"]], layout, header)


def _fail(layout: _Layout, header: bool, row: int, what: str) -> InputError:
    return InputError(f"{layout.path}, line {layout.line_of(row, header)}: {what}")


def _id_kind(frame: pd.DataFrame, col: str, role: str, layout: _Layout, header: bool, ids: str) -> str:
    """``integer`` or ``string`` for one id column; errors name the first bad line."""
    series = frame[col]
    missing = series.isna().to_numpy()
    if missing.any():
        raise _fail(layout, header, int(np.flatnonzero(missing)[0]), f"{role} id is missing (an empty field)")
    if series.dtype.kind in "iu":
        return "integer"
    tokens = series.astype(str).to_numpy(dtype=object)
    is_int = np.fromiter((bool(_INT.match(t)) for t in tokens), bool, len(tokens))
    if ids == "string" or (ids == "auto" and not is_int.any()):
        return "string"
    if not is_int.all():
        row = int(np.flatnonzero(~is_int)[0])
        hint = ("vertex ids must be integers (ids: integer)" if ids == "integer" else
                "other ids in this column are integers; if vertex ids are names, read them as strings "
                "with ids='string' (YAML: ids: string)")
        raise _fail(layout, header, row, f"{role} id {tokens[row]!r} is not an integer; {hint}")
    frame[col] = series.astype(str).astype("int64")
    return "integer"


def _weights(series: pd.Series, layout: _Layout, header: bool) -> pd.Series:
    values = pd.to_numeric(series, errors="coerce").astype("float64")
    bad = ~np.isfinite(values.to_numpy())
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise _fail(layout, header, row, f"weight {str(series.iloc[row])!r} is not a finite number")
    return values
