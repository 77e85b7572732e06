"""Delimited text edge lists (.csv/.tsv/.txt/.edges) and the rule graphops reads them by.

1. **Lines.** Text is UTF-8 (UTF-16, binary and other encodings are refused, naming the line);
   a byte-order mark before the first line is not part of it. Blank lines (spaces, tabs, form
   feeds) are skipped; ``#`` and ``%`` both start comments, so lines starting with either are
   skipped and so is the rest of a line from either character on (``1 2 # note``).
2. **Fields.** Fields are split by commas when the first line holds one, else by tabs when it
   holds one, else by runs of spaces; in the ``tsv`` format (a ``.tsv`` file, or ``format: tsv``)
   never by commas, which are then part of their field. Every row has as many fields as the
   first line; a row with fewer or more is refused, unless ``columns=[...]`` names the columns to read: then the first
   ``len(columns)`` fields of each row are read (every row must have them) and the rest are not.
   A field may be quoted as in CSV (``"smith, ann"`` is one field; the quotes are not part of it),
   and blanks around a field, quoted or not, are not part of it either. A last field that is
   empty on every line (a delimiter ending each line: ``1,2,``) is no column. A line may hold at most :data:`MAX_FIELDS` fields, unless ``columns=`` names the
   leading ones to read.
3. **Header.** ``header=True``/``False`` decide it. ``header="auto"`` decides on the first 200
   data lines and takes the first line as a header when (a) a column is named by a name (``src="from"``; the line must then not be all
   numbers), or (b) none of its id fields (the ``src`` and ``dst`` columns) is a number and one of
   those columns holds numbers on the lines below (``src dst`` over ``1 2``; ``1O,2`` over ``2,3``
   is data, and its ``1O`` is refused), or (c) none of its id fields is a number and those below
   cannot tell (names, or names and numbers mixed), and
   either another field is not a number over a column of numbers (``u v weight`` over
   ``ann bob 0.5``) or an id field is a column word (``src``, ``source``, ``from``, ``u``,
   ``node1``, ...; :data:`COLUMN_WORDS`) that appears in no id column below (``from to`` over
   names). Anything else is data: ``1 2 abc`` over ``2 3 1`` is an edge, and its ``abc`` is
   refused by rule 5. A header names each column once.
4. **Ids.** Vertex ids are integers (ASCII digits, within int64) or strings. ``ids="auto"`` reads a column of
   integers as integers and a column of names as strings (when either id column holds names,
   both are strings); a column mixing the two, or an integer beyond int64, is refused with the
   fix (``ids="string"``). ``ids="integer"`` or ``"string"`` decide it.
5. **Values.** The weight column holds finite numbers. Other columns are kept as edge
   attributes, typed by their values; a column of numbers whose first value is text is refused
   (a header that rule 3 could not see: pass ``header=True``).
6. A file without rows (after its header) is refused.

Every error names the file, the line and the column, the value, and a fix. The checks run on
whole columns (pandas' C parser reads the file once), so reading costs about what parsing does.
"""
from __future__ import annotations

import csv
import io
import mmap
import os
import re
import warnings
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from graphops.base.device import Device, host_pandas
from graphops.errors import InputError
from graphops.host.algorithm import ReadOptions
from graphops.io.textcheck import Checks, empty_column, is_number

pd = host_pandas()  # the real pandas, also under cudf.pandas

__all__ = ["read_text", "read_tsv", "read_node_text", "resolve_column", "first_line_is_header", "TextLayout",
           "COLUMN_WORDS", "COMMENTS", "MAX_FIELDS"]

_SAMPLE = 200  # data lines looked at to decide whether the first line is a header
COMMENTS = "#%"  # both start a comment, anywhere on a line
_BLANKS = re.compile("[ \t]+")
MAX_FIELDS = 10_000  # fields per line read as columns; a wider file names the columns to read
COLUMN_WORDS = frozenset(
    "src dst source target sources targets from to u v i j head tail start end node node1 node2 nodes "
    "vertex vertex1 vertex2 v1 v2 n1 n2 id1 id2 from_id to_id src_id dst_id source_id target_id "
    "node_1 node_2 id_1 id_2 left right sender receiver parent child origin destination".split())


def split_fields(line: str, sep: str) -> list[str]:
    """The fields of one (comment-free) line, as pandas splits them (quotes respected)."""
    if sep == r"\s+":  # runs of spaces and tabs, as pandas splits them (not other Unicode blanks)
        return [t for t in _BLANKS.split(line) if t]
    return [t.strip() for t in next(csv.reader([line], delimiter=sep))]


def _present(path: Path, chars: str) -> str:
    """Which of ``chars`` occur anywhere in the file (a byte search, no decoding)."""
    with open(path, "rb") as fh:
        try:
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # an empty file
            return ""
        with mm:
            return "".join(c for c in chars if mm.find(c.encode()) >= 0)


def _check_text(path: Path) -> None:
    """A file that is UTF-16 or binary is named as such (decoded as UTF-8 it would look ragged)."""
    with open(path, "rb") as fh:
        head = fh.read(4096)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(f"{path}: UTF-16 text; graphops reads text files in UTF-8: convert the file (e.g. "
                         f"iconv -f UTF-16 -t UTF-8)")
    if b"\x00" in head:
        raise InputError(f"{path}: holds NUL bytes, so it is not UTF-8 text (a binary file, or UTF-16/32 without a "
                         f"byte-order mark); graphops reads edge lists as UTF-8 text, or Parquet (.parquet)")


class TextLayout:
    """A text file's comment characters, leading lines to skip, separator, and its first data rows
    (with their file line numbers)."""

    def __init__(self, path: Path, comment: str | None = None, skip: int = 0, sep: str | None = None,
                 commas: bool = True):
        self.path, self.skip = Path(path), skip
        self.comments = comment or COMMENTS
        self._cut = re.compile("[" + re.escape(self.comments) + "]")
        self.sample: list[tuple[int, str]] = []  # (file line, the line without its comment)
        _check_text(self.path)
        with open(self.path, "r", encoding="utf-8-sig", errors="replace") as fh:
            for number, raw in enumerate(fh, start=1):
                if number <= skip:
                    continue
                if "\ufffd" in raw:
                    raise InputError(f"{self.path}, line {number}: not UTF-8 text; graphops reads text files in "
                                     f"UTF-8: convert the file (e.g. iconv -t UTF-8)")
                kept = self.uncommented(raw)
                if not self.sample and not kept.strip():  # leading blank and comment lines
                    self.skip = number
                elif kept.strip():
                    self.sample.append((number, kept))
                if len(self.sample) > _SAMPLE:
                    break
        first = self.sample[0][1].strip() if self.sample else ""
        self.sep = sep or ("," if commas and "," in first else "\t" if "\t" in first else r"\s+")
        self.rows = [self.fields(kept) for _, kept in self.sample]
        self._used: str | None = None

    def uncommented(self, raw: str) -> str:
        """A line without its comment and line end."""
        cut = self._cut.search(raw)
        return (raw[:cut.start()] if cut else raw).rstrip("\r\n")

    def text(self, raw: str) -> str:
        """A line without its comment, stripped: empty for blank and comment lines."""
        return self.uncommented(raw).strip()

    def fields(self, kept: str) -> list[str]:
        """The fields of an uncommented line; tabs around a tab-separated line are fields' edges
        (``1<tab>2<tab>`` ends with an empty field, as pandas reads it), not blanks to strip."""
        return split_fields(kept.strip(" \f\v") if self.sep == "\t" else kept.strip(), self.sep)

    @property
    def used(self) -> str:
        """Which comment characters, ``+`` and spaces occur anywhere in the file (searched once)."""
        if self._used is None:
            self._used = _present(self.path, self.comments + "+ ")
        return self._used

    @property
    def comment(self) -> str:
        """The one comment character pandas is given (the file's, when it uses one)."""
        return next((c for c in self.used if c in self.comments), self.comments[0])

    def source(self) -> Any:
        """What pandas reads: the path, or, where the file uses both comment characters, its text
        with one put for the other (pandas takes one comment character)."""
        other = [c for c in self.used if c in self.comments and c != self.comment]
        if not other:
            return self.path
        return io.BytesIO(self.path.read_bytes().translate(bytes.maketrans("".join(other).encode(),
                                                                           self.comment.encode() * len(other))))

    @property
    def lines(self) -> list[str]:
        return [kept.strip() for _, kept in self.sample]

    @property
    def trailing(self) -> bool:
        """Whether every sampled line ends with the delimiter (rule 2: that last field is no column)."""
        return self.sep != r"\s+" and bool(self.rows) and len(self.rows[0]) > 1 and \
            all(len(r) == len(self.rows[0]) and r[-1] == "" for r in self.rows)

    def data_lines(self) -> Iterator[tuple[int, list[str]]]:
        """``(file line, fields)`` of every data line of the whole file (for messages: slow)."""
        with open(self.path, "r", encoding="utf-8-sig", errors="replace") as fh:
            for number, raw in enumerate(fh, start=1):
                kept = self.uncommented(raw) if number > self.skip else ""
                if kept.strip():
                    yield number, self.fields(kept)

    def line_of(self, row: int) -> int:
        """The file line of data line ``row`` (0-based, the header counting as a data line)."""
        if row < len(self.sample):
            return self.sample[row][0]
        keep = self.text if any(c in self.used for c in self.comments) else str.strip  # no split: fast
        with open(self.path, "r", encoding="utf-8-sig", errors="replace") as fh:
            data = (number for number, raw in enumerate(fh, start=1) if number > self.skip and keep(raw))
            return next((n for k, n in enumerate(data) if k == row), -1)

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

    def check_width(self, names: Sequence[str] | None) -> None:
        """Rule 2's bound on the fields of a line read whole."""
        wide = next((k for k, r in enumerate(self.rows) if len(r) > MAX_FIELDS), None)
        if names is None and wide is not None:
            raise InputError(f"{self.where(wide)}: {len(self.rows[wide]):,} fields; graphops reads at most "
                             f"{MAX_FIELDS:,} fields per line as columns. Pass columns=[...] naming the leading "
                             f"columns to read (YAML: columns: [src, dst]); the fields after them are not read")


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
    """The 0-based fields of the src and dst columns, where a position or ``names`` (``columns=``,
    or a header row's) tells."""
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
    if any(is_number(first[k]) for k in id_fields):
        return False  # an id field of line 1 is a number: line 1 is data (a typo in the other is refused, not dropped)
    for k in id_fields:
        below = column(k)
        if below and all(is_number(t) for t in below):
            return True  # 3b
    for k, token in enumerate(first):
        below = column(k)
        if k not in id_fields and below and not is_number(token) and all(is_number(t) for t in below):
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
        if all(is_number(t) for t in layout.rows[0]):
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


def _check_header_names(layout: TextLayout, has_header: bool, names: Sequence[str] | None) -> None:
    """Rule 3: a header names each column once."""
    if not has_header or names:
        return
    seen: dict[str, int] = {}
    for k, name in enumerate(layout.rows[0]):
        if name in seen and not (layout.trailing and k == len(layout.rows[0]) - 1):
            raise InputError(f"{layout.where(0, k)}: the header names column {name!r} twice (columns {seen[name] + 1} "
                             f"and {k + 1}); give each column its own name, or pass header=False with columns=[...]")
        seen.setdefault(name, k)


def read_tsv(path: Path, device: Device, options: Any = None) -> Any:
    """The tsv format: :func:`read_text`, except that fields are never split by commas (rule 2): by
    tabs when the first line holds one, else by runs of spaces; a comma is part of its field."""
    return read_text(path, device, options, commas=False)


def read_text(path: Path, device: Device, options: Any = None, commas: bool = True) -> Any:
    """A delimited text edge list as a frame, by the module's reading rule (the reader of the
    csv, tsv, txt and edges formats).

    :param options: a :class:`~graphops.host.algorithm.ReadOptions`: ``columns`` names the leading
        columns to read (a file without a header), ``header`` and ``ids`` as for ``read_graph``,
        ``roles`` (``{"src": .., "dst": .., "weight": ..}``: names, positions or ``None``) the
        columns that are checked and converted, naming bad lines
    """
    options = options or ReadOptions()
    names, header, ids = options.columns, options.header, options.ids
    layout = TextLayout(Path(path), commas=commas)
    if not layout.rows:
        raise InputError(f"{layout.path}: no edge rows (the file holds only comments or blank lines); an "
                         f"edge list needs at least one 'src dst' line")
    layout.check_width(names)
    if not names and len(layout.rows[0]) - layout.trailing < 2:
        raise InputError(f"{layout.where(0)}: one field; an edge list has at least two (src and dst) on every line, "
                         f"separated by commas, tabs or spaces")
    roles = dict(options.roles)
    has_header = first_line_is_header(layout, header, roles, names)
    _check_sample_fields(layout, names)
    _check_header_names(layout, has_header, names)
    frame = _parse(layout, has_header, names, str if ids == "string" else None)
    frame = _as_written(frame, layout, has_header, names, roles)
    if frame.empty:
        raise InputError(f"{layout.path}: a header line ({layout.lines[0]!r}) and no edge rows below it; an edge "
                         f"list needs at least one 'src dst' row (header=False reads that line as an edge)")
    frame.columns = [str(c) for c in frame.columns]
    _check_short_rows(frame, layout, has_header, names)
    frame = _without_trailing(frame, layout, names)
    cols = {role: resolve_column(frame, roles.get(role), default, role, layout.path)
            for role, default in (("src", 0), ("dst", 1), ("weight", None))}
    Checks(frame, layout, has_header, lambda k: _parse(layout, has_header, names, str).iloc[:, k]).run(cols, ids)
    return frame if device is Device.CPU else device.xdf.from_pandas(frame)


def read_node_text(path: Path, device: Device) -> Any:
    """A delimited text node table with a header row (``id`` plus label/feature columns)."""
    layout = TextLayout(Path(path))
    layout.check_width(None)
    _check_header_names(layout, bool(layout.rows), None)
    frame = _parse(layout, True, None, None) if layout.rows else pd.DataFrame()
    if not frame.empty:
        _check_short_rows(frame, layout, True, None)
        frame = _without_trailing(frame, layout, None)
    if frame.empty:
        raise InputError(f"{layout.path}: no node rows; a node file needs a header row (e.g. 'id,label') and "
                         f"one row per vertex")
    frame.columns = [str(c) for c in frame.columns]
    return frame if device is Device.CPU else device.xdf.from_pandas(frame)


def _parse(layout: TextLayout, header: bool, names: Sequence[str] | None, dtype: Any) -> pd.DataFrame:
    frame = _read_arrow(layout, header) if names is None and dtype is None else None
    if frame is not None:
        return frame
    frame = _stripped(_read_csv(layout, header, names, dtype, layout.skip), layout)
    comments = _comment_rows(frame, layout)
    if comments:
        frame = _stripped(_read_csv(layout, header, names, dtype, [*range(layout.skip), *comments]), layout)
    return frame


def _stripped(frame: pd.DataFrame, layout: TextLayout) -> pd.DataFrame:
    """Text fields without the blanks around them: 'bob ,x', 'bob # note' and a line of a form feed
    leave blanks that are not the value's (pandas splits by spaces and tabs, not form feeds)."""
    for k in _of_kind(frame, "O"):
        column = frame.iloc[:, k]
        kind = pd.api.types.infer_dtype(column, skipna=True)
        if kind == "string":
            frame.isetitem(k, column.str.strip())
        elif kind.startswith("mixed"):  # big integers pandas kept as Python ints, beside text
            frame.isetitem(k, column.map(lambda v: v.strip() if isinstance(v, str) else v))
    return frame


def _of_kind(frame: pd.DataFrame, kinds: str, exclude: bool = False) -> list[int]:
    """Positions of the columns whose dtype kind is (or, ``exclude``, is not) one of ``kinds``;
    read from the dtypes at once, so a wide frame costs nothing per column of numbers."""
    return [k for k, d in enumerate(frame.dtypes) if (d.kind in kinds) != exclude]


_ARROW_TYPES = {"int64", "double", "string", "large_string", "bool", "null"}  # as pandas types them
_EXACT = 2.0 ** 53  # doubles beyond it may be integers pandas would keep whole (uint64)


def _read_arrow(layout: TextLayout, header: bool) -> pd.DataFrame | None:
    """The file read by pyarrow's parser (on every core), where that gives what pandas' would: a
    comma or tab file from its first line on, without comments, spaces or ``+`` signs, whose
    columns are numbers, text or booleans; ``None`` (read by pandas) otherwise."""
    if layout.sep == r"\s+" or layout.skip or layout.used or (header and "" in layout.rows[0]) or \
            _hex_prefix(layout.path):
        return None
    import pyarrow
    import pyarrow.csv as pcsv

    names = None if header else [str(k) for k in range(len(layout.rows[0]))]
    try:
        table = pcsv.read_csv(layout.path, read_options=pcsv.ReadOptions(column_names=names),
                              parse_options=pcsv.ParseOptions(delimiter=layout.sep),
                              convert_options=pcsv.ConvertOptions(null_values=[""], strings_can_be_null=True))
    except (pyarrow.ArrowInvalid, UnicodeDecodeError):  # ragged rows, bad text: pandas names the line
        return None
    if any(str(t) not in _ARROW_TYPES for t in table.schema.types) or any(
            str(t) == "double" and _beyond_exact(table.column(k)) for k, t in enumerate(table.schema.types)):
        return None
    frame = table.to_pandas()
    for k, kind in enumerate(table.schema.types):
        if str(kind) == "null":  # a column of empty fields: pandas reads NaN, a float column
            frame.isetitem(k, np.full(len(frame), np.nan))
    if _blank_rows(frame).any():  # a line of a tab: blank by rule 1, a row to the parser
        return None
    if not header:
        frame.columns = range(frame.shape[1])  # as pandas numbers the columns of a file without a header
    return frame


_HEX = re.compile(rb"0[xX]")


def _hex_prefix(path: Path) -> bool:
    """Whether the file holds ``0x`` or ``0X`` anywhere: pyarrow reads ``0x10`` as the integer 16,
    where the rule's integers are decimal digits (pandas keeps it as text, which is then refused as
    an id or kept as a text value). One scan of the bytes."""
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size == 0:
                return False
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _HEX.search(data) is not None
    except (OSError, ValueError):
        return True  # not mapped: pandas reads it


def _beyond_exact(column: Any) -> bool:
    """A double column pandas may read otherwise: ``nan``/``inf`` text (pandas keeps it as text) or
    integers beyond 2**53 (pandas keeps them whole)."""
    import pyarrow.compute as pc

    if pc.any(pc.or_(pc.is_nan(column), pc.is_inf(column))).as_py():
        return True
    largest = pc.max(pc.abs(column)).as_py()
    return largest is not None and largest >= _EXACT


def _read_csv(layout: TextLayout, header: bool, names: Sequence[str] | None, dtype: Any, skip: Any) -> pd.DataFrame:
    return _empty_is_missing(_parse_csv(layout, header, names, dtype, skip))


def _empty_is_missing(frame: pd.DataFrame) -> pd.DataFrame:
    """An empty field of a text column is missing, as ``na_values=[""]`` asks (pandas 3 keeps some as
    ``''``: a text column whose other fields include an integer too large for int64), and as
    pyarrow's reader gives it."""
    for k in range(frame.shape[1]):
        column = frame.iloc[:, k]
        if column.dtype == object or pd.api.types.is_string_dtype(column.dtype):
            empty = column.eq("").fillna(False).to_numpy(dtype=bool)
            if empty.any():
                frame.isetitem(k, column.mask(empty))
    return frame


def _parse_csv(layout: TextLayout, header: bool, names: Sequence[str] | None, dtype: Any, skip: Any) -> pd.DataFrame:
    want = len(names) if names else len(layout.rows[0])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            return pd.read_csv(layout.source(), sep=layout.sep, header=0 if header else None, skiprows=skip,
                               comment=layout.comment, engine="c", names=list(names) if names else None,
                               usecols=range(want) if names else None, index_col=False, skipinitialspace=True,
                               keep_default_na=False, na_values=[""], dtype=dtype, encoding="utf-8-sig",
                               low_memory=False)
    except (pd.errors.ParserError, pd.errors.ParserWarning) as exc:
        raise _first_ragged(layout, want, bool(names)) or InputError(
            f"{layout.path}: cannot parse as a delimited edge list ({exc})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"{layout.path}: cannot parse as a delimited edge list ({exc}); graphops reads UTF-8 "
                         f"text") from None


def _blank_rows(frame: pd.DataFrame) -> np.ndarray:
    """Rows with every field empty (integers are never empty): found on the first column, then
    checked on the others only where it is empty, so a wide frame costs one column."""
    cols = _of_kind(frame, "iub", exclude=True)
    blank = np.zeros(len(frame), bool)
    if not cols or len(cols) < frame.shape[1]:
        return blank
    rows = np.flatnonzero(empty_column(frame.iloc[:, cols[0]]))
    for k in cols[1:]:
        if not len(rows):
            break
        rows = rows[empty_column(frame.iloc[rows, k])]
    blank[rows] = True
    return blank


def _comment_rows(frame: pd.DataFrame, layout: TextLayout) -> list[int]:
    """0-based file lines that pandas reads as rows of empty fields but rule 1 calls comments or
    blank (indented comments ``  # note``; a line of a tab or a form feed); looked for only when
    ``frame`` has such a row."""
    if frame.empty or not _blank_rows(frame).any():
        return []
    with open(layout.path, "r", encoding="utf-8-sig", errors="replace") as fh:
        return [number for number, raw in enumerate(fh) if number >= layout.skip and raw.strip("\r\n")
                and raw[0] not in layout.comments and not layout.text(raw)]


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
    dtypes = list(frame.dtypes)

    def typed_unlike_text(k: int) -> bool:
        kind = dtypes[k].kind
        return kind == "b" or (kind == "f" and frame.columns[k] in ids) or (
            dtypes[k] == object and pd.api.types.infer_dtype(frame.iloc[:, k], skipna=True) == "boolean")

    again = [frame.columns[k] for k in _of_kind(frame, "bfO") if typed_unlike_text(k)]
    return _parse(layout, header, names, {c: str for c in again}) if again else frame


def _first_ragged(layout: TextLayout, want: int, at_least: bool) -> InputError | None:
    for row, (_, fields) in enumerate(layout.data_lines()):
        if (len(fields) < want) if at_least else (len(fields) != want):
            return layout.ragged(row, len(fields), want, at_least)
    return None


def _check_short_rows(frame: pd.DataFrame, layout: TextLayout, header: bool, names: Sequence[str] | None) -> None:
    """Rows pandas filled up with NaN because they had fewer fields than the first line."""
    if frame.shape[1] == 0 or not empty_column(frame.iloc[:, -1]).any():  # a short row ends in empty fields
        return
    err = _first_ragged(layout, len(names) if names else len(layout.rows[0]), bool(names))
    if err is not None:
        raise err


def _without_trailing(frame: pd.DataFrame, layout: TextLayout, names: Sequence[str] | None) -> pd.DataFrame:
    """Rule 2: a last field empty on every line (a delimiter ending each line) is no column."""
    if layout.trailing and not names and empty_column(frame.iloc[:, -1]).all():
        return frame.iloc[:, :-1].copy()
    return frame
