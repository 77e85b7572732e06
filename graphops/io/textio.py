"""Delimited text edge lists (.csv/.tsv/.txt/.edges) and the rule graphops reads them by.

1. **Lines.** Blank lines and lines starting with ``#`` or ``%`` are skipped, and so is the rest
   of a line after the comment character (``1 2 # note``).
2. **Fields.** Fields are split by commas when the first line holds one, else by tabs when it
   holds one, else by runs of spaces. Every row has as many fields as the first line; a row with
   fewer or more is refused, unless ``columns=[...]`` names the columns to read: then the first
   ``len(columns)`` fields of each row are read (every row must have them) and the rest are not.
3. **Header.** ``header=True``/``False`` decide it. ``header="auto"`` takes the first line as a
   header when (a) a column is named by a name (``src="from"``; the line must then not be all
   numbers), or (b) one of its id fields (the ``src`` and ``dst`` columns) is not a number while
   that column holds numbers on the lines below (``src dst`` over ``1 2``), or (c) its id fields
   and those below are names, so the ids cannot tell, and either another field is not a number
   over a column of numbers (``u v weight`` over ``ann bob 0.5``) or an id field is a column
   word (``src``, ``source``, ``from``, ``u``, ``node1``, ...; :data:`COLUMN_WORDS`) that appears
   in no id column below (``from to`` over names). Anything else is data: ``1 2 abc`` over
   ``2 3 1`` is an edge, and its ``abc`` is refused by rule 5.
4. **Ids.** Vertex ids are integers (within int64) or strings. ``ids="auto"`` reads a column of
   integers as integers and a column of names as strings (when either id column holds names,
   both are strings); a column mixing the two, or an integer beyond int64, is refused with the
   fix (``ids="string"``). ``ids="integer"`` or ``"string"`` decide it.
5. **Values.** The weight column holds finite numbers. Other columns are kept as edge
   attributes, typed by their values; a column of numbers whose first value is text is refused
   (a header that rule 3 could not see: pass ``header=True``).
6. A file without rows (after its header) is refused.

Every error names the file, the line and the column, the value, and a fix.
"""
from __future__ import annotations

import csv
import re
import warnings
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from graphops.base.device import Device, host_pandas
from graphops.errors import InputError
from graphops.host.algorithm import ReadOptions

pd = host_pandas()  # the real pandas, also under cudf.pandas

__all__ = ["read_text", "read_node_text", "resolve_column", "first_line_is_header", "TextLayout",
           "COLUMN_WORDS"]

_INT = re.compile(r"^[+-]?\d+$")
_NUMBER = re.compile(r"^[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|nan|inf|infinity)$", re.IGNORECASE)
_INT64_MAX = 2 ** 63 - 1
_SAMPLE = 200  # data lines looked at to decide whether the first line is a header
COLUMN_WORDS = frozenset(
    "src dst source target sources targets from to u v i j head tail start end node node1 node2 nodes "
    "vertex vertex1 vertex2 v1 v2 n1 n2 id1 id2 from_id to_id src_id dst_id source_id target_id "
    "node_1 node_2 id_1 id_2 left right sender receiver parent child origin destination".split())


def _is_number(token: str) -> bool:
    """A decimal number as pandas reads one (``1``, ``-2.5e3``, ``nan``, ``inf``); not ``1_000``."""
    return bool(_NUMBER.match(token))


def split_fields(line: str, sep: str) -> list[str]:
    """The fields of one (comment-free) line, as pandas splits them (quotes respected)."""
    if sep == r"\s+":
        return line.split()
    return [t.strip() for t in next(csv.reader([line], delimiter=sep))]


class TextLayout:
    """A text file's comment character, leading lines to skip, separator, and its first data rows
    (with their file line numbers)."""

    def __init__(self, path: Path, comment: str | None = None, skip: int = 0, sep: str | None = None):
        self.path, self.skip = Path(path), skip
        self.comment = comment or "#"
        self.sample: list[tuple[int, str]] = []
        with open(self.path, "r", encoding="utf-8", errors="replace") as fh:
            for number, raw in enumerate(fh, start=1):
                if number <= skip:
                    continue
                stripped = raw.strip()
                if not self.sample and comment is None and (not stripped or stripped[0] in "#%"):
                    self.comment = stripped[0] if stripped else self.comment
                    self.skip = number
                    continue
                text = self.text(raw)
                if text:
                    self.sample.append((number, text))
                if len(self.sample) > _SAMPLE:
                    break
        first = self.sample[0][1] if self.sample else ""
        self.sep = sep or ("," if "," in first else "\t" if "\t" in first else r"\s+")
        self.rows = [split_fields(text, self.sep) for _, text in self.sample]

    def text(self, raw: str) -> str:
        """A line without its comment, stripped: empty for blank and comment lines."""
        return raw.split(self.comment, 1)[0].strip()

    @property
    def lines(self) -> list[str]:
        return [text for _, text in self.sample]

    def data_lines(self) -> Iterator[tuple[int, list[str]]]:
        """``(file line, fields)`` of every data line of the whole file (for messages: slow)."""
        with open(self.path, "r", encoding="utf-8", errors="replace") as fh:
            for number, raw in enumerate(fh, start=1):
                text = self.text(raw) if number > self.skip else ""
                if text:
                    yield number, split_fields(text, self.sep)

    def line_of(self, row: int) -> int:
        """The file line of data line ``row`` (0-based, the header counting as a data line)."""
        if row < len(self.sample):
            return self.sample[row][0]
        return next((n for k, (n, _) in enumerate(self.data_lines()) if k == row), -1)

    def where(self, row: int, column: int | None = None, name: str | None = None) -> str:
        """``file, line N, column C ('name')`` for messages (``column`` 0-based)."""
        col = "" if column is None else f", column {column + 1}" + (f" ({name!r})" if name else "")
        return f"{self.path}, line {self.line_of(row)}{col}"

    def ragged(self, row: int, got: int, want: int, at_least: bool = False) -> InputError:
        first = self.sample[0][0] if self.sample else 1
        need = f"at least {want} (the columns= given)" if at_least else f"{want}, as line {first} has"
        return InputError(f"{self.where(row)}: {got} field{'s' if got != 1 else ''}, expected {need}. "
                          f"Every row needs the same fields: fix the line, or pass columns=[...] naming the "
                          f"leading columns to read (YAML: columns: [src, dst]); the fields after them are not read")


def resolve_column(frame: Any, spec: Any, default: int | None, role: str, where: Any = None) -> str | None:
    """The column name a role refers to: a name, a 0-based position, or the default position
    (``where``: the file, for messages)."""
    if spec is None:
        spec = default
    if spec is None or isinstance(spec, str):
        return spec
    cols = [str(c) for c in frame.columns]
    if not 0 <= int(spec) < len(cols):
        raise InputError(f"{str(where) + ': ' if where else ''}{role}={spec!r}: the file has {len(cols)} column"
                         f"{'s' if len(cols) != 1 else ''} ({cols}); positions count from 0")
    return cols[int(spec)]


def _positions(roles: dict[str, Any], names: Sequence[str] | None) -> list[int]:
    """The 0-based fields of the src and dst columns, where a position or ``columns=`` tells."""
    out = []
    for role, default in (("src", 0), ("dst", 1)):
        spec = roles.get(role)
        if spec is None or isinstance(spec, int):
            out.append(default if spec is None else int(spec))
        elif names and spec in names:
            out.append(list(names).index(spec))
    return out


def _header_by_values(rows: list[list[str]], ids: list[int]) -> bool:
    """Rules 3b and 3c on the sampled rows (rows[0] is the candidate header)."""
    def column(k: int) -> list[str]:
        return [r[k] for r in rows[1:] if k < len(r)]

    first = rows[0]
    id_fields = [k for k in ids if k < len(first)]
    for k in id_fields:
        below = column(k)
        if below and not _is_number(first[k]) and all(_is_number(t) for t in below):
            return True  # 3b
    if any(_is_number(first[k]) or any(_is_number(t) for t in column(k)) for k in id_fields):
        return False  # the ids tell: line 1 is data
    for k, token in enumerate(first):
        below = column(k)
        if k not in id_fields and below and not _is_number(token) and all(_is_number(t) for t in below):
            return True  # 3c: a text field over numbers
    seen = {t for k in id_fields for t in column(k)}
    return any(first[k].lower() in COLUMN_WORDS and first[k] not in seen for k in id_fields)


def first_line_is_header(layout: TextLayout, header: Any, roles: dict[str, Any],
                         names: Sequence[str] | None) -> bool:
    """Rule 3 of the module doc, on the first sampled lines of ``layout``."""
    if header in (True, False):
        return bool(header)
    if not layout.rows:
        return False
    named = [f"{r}={v!r}" for r, v in roles.items() if isinstance(v, str) and not (names and v in names)]
    if named:
        first = layout.lines[0]
        if all(_is_number(t) for t in layout.rows[0]):
            raise InputError(f"{layout.path}: {', '.join(named)} name{'s a column' if len(named) == 1 else ' columns'}, "
                             f"but the first line ({first!r}) is data, not a header; give positions (src=0) or "
                             f"column names (columns=[...]), or header=True if that line is a header")
        return True
    rows = [r[:len(names)] for r in layout.rows] if names else layout.rows  # only the columns read
    return _header_by_values(rows, _positions(roles, names))


def _check_sample_fields(layout: TextLayout, names: Sequence[str] | None) -> None:
    want = len(names) if names else len(layout.rows[0])
    for row, fields in enumerate(layout.rows):
        if (len(fields) < want) if names else (len(fields) != want):
            raise layout.ragged(row, len(fields), want, at_least=bool(names))


def read_text(path: Path, device: Device, options: Any = None) -> Any:
    """A delimited text edge list as a frame, by the module's reading rule (the reader of the
    csv, tsv, txt and edges formats).

    :param options: a :class:`~graphops.host.algorithm.ReadOptions`: ``columns`` names the leading
        columns to read (a file without a header), ``header`` and ``ids`` as for ``read_graph``,
        ``roles`` (``{"src": .., "dst": .., "weight": ..}``: names, positions or ``None``) the
        columns that are checked and converted, naming bad lines
    """
    options = options or ReadOptions()
    names, header, ids = options.columns, options.header, options.ids
    layout = TextLayout(Path(path))
    if not layout.rows:
        raise InputError(f"{layout.path}: no edge rows (the file holds only comments or blank lines); an "
                         f"edge list needs at least one 'src dst' line")
    roles = dict(options.roles)
    has_header = first_line_is_header(layout, header, roles, names)
    _check_sample_fields(layout, names)
    frame = _parse(layout, has_header, names, str if ids == "string" else None)
    frame = _as_written(frame, layout, has_header, names, roles)
    if frame.empty:
        raise InputError(f"{layout.path}: a header line ({layout.lines[0]!r}) and no edge rows below it; an edge "
                         f"list needs at least one 'src dst' row (header=False reads that line as an edge)")
    frame.columns = [str(c) for c in frame.columns]
    _check_short_rows(frame, layout, has_header, names)
    cols = {role: resolve_column(frame, roles.get(role), default, role, layout.path)
            for role, default in (("src", 0), ("dst", 1), ("weight", None))}
    _Checks(frame, layout, has_header, lambda k: _parse(layout, has_header, names, str).iloc[:, k]).run(cols, ids)
    return frame if device is Device.CPU else device.xdf.from_pandas(frame)


def read_node_text(path: Path, device: Device) -> Any:
    """A delimited text node table with a header row (``id`` plus label/feature columns)."""
    layout = TextLayout(Path(path))
    frame = _parse(layout, True, None, None) if layout.rows else pd.DataFrame()
    if frame.empty:
        raise InputError(f"{layout.path}: no node rows; a node file needs a header row (e.g. 'id,label') and "
                         f"one row per vertex")
    frame.columns = [str(c) for c in frame.columns]
    return frame if device is Device.CPU else device.xdf.from_pandas(frame)


def _parse(layout: TextLayout, header: bool, names: Sequence[str] | None, dtype: Any) -> pd.DataFrame:
    frame = _read_csv(layout, header, names, dtype, layout.skip)
    comments = _comment_rows(frame, layout)
    if comments:
        frame = _read_csv(layout, header, names, dtype, [*range(layout.skip), *comments])
    if layout.sep != r"\s+":  # 'bob ,x' and 'bob # note' leave spaces that are not the value's
        for col in frame.columns:
            kind = pd.api.types.infer_dtype(frame[col], skipna=True) if frame[col].dtype.kind == "O" else ""
            if kind == "string":
                frame[col] = frame[col].str.strip()
            elif kind.startswith("mixed"):  # big integers pandas kept as Python ints, beside text
                frame[col] = frame[col].map(lambda v: v.strip() if isinstance(v, str) else v)
    return frame


def _read_csv(layout: TextLayout, header: bool, names: Sequence[str] | None, dtype: Any, skip: Any) -> pd.DataFrame:
    want = len(names) if names else len(layout.rows[0])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            return pd.read_csv(layout.path, sep=layout.sep, header=0 if header else None, skiprows=skip,
                               comment=layout.comment, engine="c", names=list(names) if names else None,
                               usecols=range(want) if names else None, index_col=False, skipinitialspace=True,
                               keep_default_na=False, na_values=[""], dtype=dtype)
    except (pd.errors.ParserError, pd.errors.ParserWarning) as exc:
        raise _first_ragged(layout, want, bool(names)) or InputError(
            f"{layout.path}: cannot parse as a delimited edge list ({exc})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"{layout.path}: cannot parse as a delimited edge list ({exc}); graphops reads UTF-8 "
                         f"text") from None


def _empty(frame: pd.DataFrame) -> np.ndarray:
    """Empty fields (rows x columns): NaN, or ``""`` where pandas kept a text column's gap as text."""
    return frame.isna().to_numpy() | (frame.to_numpy(dtype=object) == "")


def _comment_rows(frame: pd.DataFrame, layout: TextLayout) -> list[int]:
    """0-based file lines that pandas reads as rows of empty fields but rule 1 calls comments
    (indented ones: ``  # note``); looked for only when ``frame`` has such a row."""
    if frame.empty or not _empty(frame).all(axis=1).any():
        return []
    with open(layout.path, "r", encoding="utf-8", errors="replace") as fh:
        return [number for number, raw in enumerate(fh) if number >= layout.skip and raw.strip()
                and not raw.startswith(layout.comment) and not layout.text(raw)]


def _as_written(frame: pd.DataFrame, layout: TextLayout, header: bool, names: Sequence[str] | None,
                roles: dict[str, Any]) -> pd.DataFrame:
    """``frame``, with columns that pandas typed unlike the text read again as written: booleans
    (``TRUE`` is a name, and no weight) and id columns of decimals (``1.50`` is not ``1.5``)."""
    labels = {str(c): c for c in frame.columns}
    ids = set()
    for role, default in (("src", 0), ("dst", 1)):
        spec = roles.get(role, default) if roles.get(role) is not None else default
        name = labels.get(str(spec)) if isinstance(spec, str) else (frame.columns[spec] if spec < frame.shape[1] else None)
        ids.add(name)
    def typed_unlike_text(c: Any) -> bool:
        kind = frame[c].dtype.kind
        return kind == "b" or (kind == "f" and c in ids) or (
            kind == "O" and pd.api.types.infer_dtype(frame[c], skipna=True) == "boolean")

    again = [c for c in frame.columns if typed_unlike_text(c)]
    return _parse(layout, header, names, {c: str for c in again}) if again else frame


def _first_ragged(layout: TextLayout, want: int, at_least: bool) -> InputError | None:
    for row, (_, fields) in enumerate(layout.data_lines()):
        if (len(fields) < want) if at_least else (len(fields) != want):
            return layout.ragged(row, len(fields), want, at_least)
    return None


def _check_short_rows(frame: pd.DataFrame, layout: TextLayout, header: bool, names: Sequence[str] | None) -> None:
    """Rows pandas filled up with NaN because they had fewer fields than the first line."""
    if not _empty(frame).any():
        return
    err = _first_ragged(layout, len(names) if names else len(layout.rows[0]), bool(names))
    if err is not None:
        raise err


class _Checks:
    """Rules 4 and 5 on a parsed frame; errors name the line of the bad row."""

    def __init__(self, frame: pd.DataFrame, layout: TextLayout, header: bool, as_written: Any):
        self.frame, self.layout, self.header = frame, layout, header
        self.as_written = as_written  # column position -> that column again, as the text writes it
        self.first = 1 if header else 0

    def where(self, row: int, col: str) -> str:
        k = list(self.frame.columns).index(col)
        return self.layout.where(row + self.first, k, col if self.header else None)

    def fix_header(self, row: int) -> str:
        return "; if line 1 is a header, pass header=True" if row == 0 and not self.header else ""

    def run(self, cols: dict[str, str | None], ids: str) -> None:
        for role, col in cols.items():
            if col is not None and col not in self.frame.columns:
                raise InputError(f"{role}={col!r}: no such column in {self.layout.path}. Columns: "
                                 f"{list(self.frame.columns)}")
        self.no_shadows(cols)
        kinds = {r: self.id_kind(cols[r], r, ids) for r in ("src", "dst")}
        if "string" in kinds.values() or ids == "string":  # names: both columns as written
            for role in ("src", "dst"):
                if self.frame[cols[role]].dtype.kind != "O":
                    self.frame[cols[role]] = self.as_written(list(self.frame.columns).index(cols[role])).to_numpy()
                self.frame[cols[role]] = self.frame[cols[role]].astype(str)
        if cols["weight"] is not None:
            self.frame[cols["weight"]] = self.weights(cols["weight"])
        for col in self.frame.columns:
            if col not in cols.values():
                self.text_over_numbers(col)

    def no_shadows(self, cols: dict[str, str | None]) -> None:
        """A header naming an attribute column ``src``, ``dst`` or (weighted) ``weight``, which the
        graph's own columns of those names would hide."""
        for k, name in enumerate(self.frame.columns):
            role = name if name in ("src", "dst", "weight") else None
            if self.header and role and cols[role] is not None and name not in cols.values():
                raise InputError(f"{self.layout.where(0, k, name)}: this column is named {role!r}, but {role} is "
                                 f"column {list(self.frame.columns).index(cols[role]) + 1} ({cols[role]!r}); pass "
                                 f"{role}={name!r}, or rename the column in the header")

    def id_kind(self, col: str, role: str, ids: str) -> str:
        """``integer`` or ``string`` for one id column; errors name the first bad line."""
        series = self.frame[col]
        missing = _empty(self.frame[[col]])[:, 0]
        if missing.any():
            row = int(np.flatnonzero(missing)[0])
            raise InputError(f"{self.where(row, col)}: {role} id is missing (an empty field); every row needs "
                             f"both ids")
        if series.dtype.kind == "i":
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
            raise InputError(f"{self.where(row, col)}: {role} id {tokens[row]!r} is not an integer; "
                             f"{hint}{self.fix_header(row)}")
        self.frame[col] = self.int64(tokens, col, role)
        return "integer"

    def int64(self, tokens: np.ndarray, col: str, role: str) -> np.ndarray:
        too_big = np.fromiter((len(t.lstrip("+-")) > 18 and not -_INT64_MAX - 1 <= int(t) <= _INT64_MAX
                               for t in tokens), bool, len(tokens))
        if too_big.any():
            row = int(np.flatnonzero(too_big)[0])
            raise InputError(f"{self.where(row, col)}: {role} id {tokens[row]!r} is beyond the 64-bit integer range "
                             f"(|id| < 2**63); read the ids as strings with ids='string' (YAML: ids: string)")
        return tokens.astype("int64")

    def weights(self, col: str) -> pd.Series:
        series = self.frame[col]
        values = pd.to_numeric(series, errors="coerce").astype("float64")
        bad = ~np.isfinite(values.to_numpy())
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise InputError(f"{self.where(row, col)}: weight {str(series.iloc[row])!r} is not a finite number; "
                             f"weights must be numbers{self.fix_header(row)}")
        return values

    def text_over_numbers(self, col: str) -> None:
        series = self.frame[col]
        if self.header or len(series) < 2 or series.dtype.kind != "O":
            return
        text = np.fromiter((isinstance(v, str) and not _is_number(v) for v in series), bool, len(series))
        number = np.fromiter((isinstance(v, str) and _is_number(v) or isinstance(v, (int, float)) and v == v
                              for v in series), bool, len(series))
        if text[0] and not text[1:].any() and number[1:].any():
            raise InputError(f"{self.where(0, col)}: {series.iloc[0]!r} is text in a column of numbers; if line 1 "
                             f"is a header, pass header=True (YAML: header: true), else fix the value")
