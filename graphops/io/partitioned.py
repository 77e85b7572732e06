"""Partitioned edge files: many files (or a folder) read as one Dask edge frame by a cluster's
workers, never in one place; the pipeline source ``{path: edges/*.parquet, partitioned: true}``."""
from __future__ import annotations

import glob
from pathlib import Path
from typing import Any

from graphops.errors import InputError
from graphops.model.daskgraph import DaskGraph

__all__ = ["read_edge_files", "edge_files", "not_parquet", "PARTITIONED_FORMATS"]

PARTITIONED_FORMATS = ("parquet", "csv")


def edge_files(path: Path, format: str) -> list[Path]:
    """The files a partitioned source names: a folder's ``*.<format>`` files, or those matching a
    pattern (``edges/*.parquet``), or the one file; sorted (the partitions' order)."""
    return [p for p in _named(path, format) if p.is_file()]


def _named(path: Path, format: str) -> list[Path]:
    """Every name a partitioned source matches, files or not, sorted."""
    path = Path(path)
    if path.is_dir():
        return sorted(path.glob(f"*.{format}"))
    if path.is_file():  # a file's own name, even one with pattern characters in it ('[a].csv')
        return [path]
    return sorted(map(Path, glob.glob(str(path))))


def _no_special_files(path: Path, named: list[Path]) -> None:
    """A FIFO, device or socket, or a link that leads to no file, among the names a partitioned source
    matches is one line (its edges would otherwise be left out without a word, or the read wait forever)."""
    from graphops.io.files import special_file

    for p in named:
        if p.is_dir():
            raise InputError(f"{p}: is a folder, among the edge files of {str(path)!r}; its files would be left out. "
                             f"Name the files (e.g. {str(p / '*')!r}), or give a pattern that leaves it out")
        if p.is_symlink() and not _resolves(p):
            raise InputError(f"{p}: is a link to {str(_target(p))!r}, which does not lead to a file (gone, or a loop "
                             f"of links), among the edge files of {str(path)!r}; its edges would be left out. "
                             f"Restore the file it names, or remove the link")
        kind = special_file(p)
        if kind:
            raise InputError(f"{p}: is {kind}, not a regular file, among the edge files of {str(path)!r}; the "
                             f"workers read edges from files. Copy the data to a file, or give a pattern that "
                             f"leaves it out")


def not_parquet(path: Any) -> str | None:
    """Why a file is not a parquet file (it does not start as one does), or ``None`` (an
    unreadable one is left to the reader's error)."""
    try:
        with open(path, "rb") as f:
            if f.read(4) == b"PAR1":
                return None
        empty = "; it is empty" if Path(path).stat().st_size == 0 else ""
    except OSError:
        return None
    return f"is not a parquet file (it does not start with parquet's 'PAR1'{empty})"


def _resolves(p: Path) -> bool:
    try:
        return p.exists()
    except OSError:  # a loop of links, on some systems
        return False


def _target(p: Path) -> str:
    import os

    try:
        return os.readlink(p)
    except OSError:
        return "?"


def read_edge_files(path: Path, format: str, *, src: Any = None, dst: Any = None, columns: Any = None,
                    header: Any = "auto", directed: bool = False, device: str = "cpu") -> DaskGraph:
    """Edge files read as a Dask frame, one partition per file or row group at least (nothing is
    read here: the workers read them), as a :class:`DaskGraph`. ``device="gpu"`` reads with
    dask-cuDF. Text files: ``header`` as for one file (decided on the first file), ``columns``
    name the columns of files without a header row."""
    from graphops.base.device import require
    from graphops.io.files import _check_arguments, _check_choice
    from graphops.io.textio import resolve_column

    _check_choice("header", header, ("auto", True, False))
    _check_arguments(directed, False, columns, {"src": src, "dst": dst}, who="read_edge_files")
    named = _named(path, format)
    _no_special_files(path, named)
    files = [str(f) for f in named if f.is_file()]
    if not files:
        raise InputError(f"no {format} file matches {str(path)!r}")
    dd = require("dask_cudf" if device == "gpu" else "dask.dataframe", "reading partitioned edge files")
    locate = None
    if format == "parquet":
        asked = [k for k, v in (("columns", columns), ("header", header)) if v is not None and v != "auto"]
        if asked:
            raise InputError(f"{' and '.join(k + '=' for k in asked)} appl{'y' if len(asked) > 1 else 'ies'} to text "
                             f"edge files; parquet files name their columns: pick the id columns with src= and dst=")
        for f in files:
            why = not_parquet(f)
            if why:
                raise InputError(f"{f}: {why}, among the edge files of {str(path)!r}; give format='csv' for text "
                                 f"files (format: csv in a pipeline), or a pattern that leaves it out")
        try:
            ddf = dd.read_parquet([glob.escape(f) for f in files])
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError: not parquet, or damaged
            said = str(exc).strip().splitlines()[-1]
            raise InputError(f"the edge files of {str(path)!r} could not be read as parquet ({type(exc).__name__}: "
                             f"{said}); for text files give format='csv' (format: csv in a pipeline)") from None
        s, d = resolve_column(ddf, src, 0, "src"), resolve_column(ddf, dst, 1, "dst")
    else:
        ddf, locate, (s, d) = _text_frame(dd, path, files, src, dst, columns, header, device)
    for role, name in (("src", s), ("dst", d)):
        if name not in ddf.columns:
            raise InputError(f"{role}={name!r}: no such column in the edge files of {str(path)!r} (their columns: "
                             f"{[str(c) for c in ddf.columns]}); name one of them, or give a position ({role}="
                             f"{0 if role == 'src' else 1})")
    if format == "parquet":
        _same_id_columns(files, (s, d))
    elif any(getattr(ddf[c].dtype, "kind", "O") not in "iu" for c in (s, d)):
        found = locate()  # text where ids should be, in the rows Dask sampled: the line at fault, named
        if found:
            raise InputError(found)
    graph = DaskGraph.from_edgelist(ddf, src=s, dst=d, directed=directed)
    graph.explain_unread = locate
    return graph


def _text_frame(dd: Any, path: Path, files: list[str], src: Any, dst: Any, columns: Any, header: Any,
                device: str) -> tuple[Any, "_TextLocator", tuple[Any, Any]]:
    """The text edge files as a Dask frame, laid out as the first file says, the locator of a line
    the workers cannot read, and the src and dst columns' names (:func:`read_edge_files`). On the
    CPU only those two fields are read once the first frame names them: Dask requires every column
    read to keep its type in every block (a weight of 1 in one file and 1.5 in another failed the
    whole read), and the graph keeps the ids alone."""
    from graphops.io.textio import TextLayout, _check_header_names, _positions, first_line_is_header, resolve_column

    if Path(files[0]).stat().st_size == 0:  # its layout cannot be told: the files are read as the first is
        raise InputError(f"{files[0]}: the file is empty; the first of the edge files says how all of them are "
                         f"laid out: remove it, or give a pattern that leaves it out")
    layout = TextLayout(Path(files[0]))
    if not layout.rows:
        raise InputError(f"{files[0]}: no edge rows (the file holds only comments or blank lines); the first of "
                         f"the edge files says how all of them are laid out: remove it, or give a pattern that "
                         f"leaves it out")
    if len(layout.rows[0]) - layout.trailing < 2:
        raise InputError(f"{layout.where(0)}: one field; an edge list has at least two (src and dst) on every "
                         f"line, separated by commas or tabs in partitioned text edge files")
    if layout.sep not in (",", "\t"):
        raise InputError(f"{files[0]}: partitioned text edge files are read comma- or tab-separated; this "
                         f"one is separated by spaces. Convert the files (or to parquet), or read them whole")
    has_header = first_line_is_header(layout, header, {"src": src, "dst": dst}, columns)
    names = list(columns) if columns else None
    _like_the_first(files, layout, has_header, names)
    _check_header_names(layout, has_header, names)  # a header naming a column twice: refused, as for one file
    locate = _TextLocator(tuple(files), tuple(columns) if columns else None, has_header, {"src": src, "dst": dst},
                          layout.comment)
    # index_col=False: a row with a field more than the header names is never read shifted by one (its
    # first field taken as the index); usecols: columns= reads the leading fields, as for one file. Dask
    # reads each block after a file's first with a header row of its own making: the first file's first
    # line not starting with a comment (a blank line, or a byte-order mark, before the header row: that
    # line), put before any block not starting with the header's text (a block starting with a row such
    # as the header '0,1': none), the block's first row then read as a header and its edge lost. On the
    # CPU the header's names are given to pandas instead (the header row is then a row skipped in each
    # file's first block, and no later block is given one); dask-cuDF reads such files a partition each.
    heads = names or (_header_names(layout) if has_header and device != "gpu" else None)
    options = dict(sep=layout.sep, header=0 if has_header else None, names=heads, index_col=False,
                   usecols=list(range(len(names))) if names else None, comment=layout.comment)
    blocks = None if has_header and device == "gpu" and _blank_before_header(layout) else BLOCKSIZE
    if blocks != "default":
        options["blocksize"] = blocks
    # Each block's ids are checked as read: Dask would cast an id past 2**63, read as uint64, to the
    # first block's int64 (a negative id). Ids are not given the reader as int64: pandas would take 1.0 as
    # 1, cuDF wrap 2**63 to -2**63. dask-cuDF reads a list's names as they are, but Dask takes them for
    # patterns first, and so does cuDF (a file '[a].csv' read 'a.csv' on 4 H200s, 2026-11-28): such
    # names are read a file a partition, each opened here and handed to cuDF.

    def frame(ids: tuple[tuple[int, int], ...]) -> Any:
        """The files read with ``options``; ``ids``: (position in a block as read, field in the files)."""
        if device == "gpu":
            read, given = (_cudf_files if any(glob.has_magic(f) for f in files) else dd.read_csv), list(files)
        else:
            read, given = _checked_reader(ids), [glob.escape(f) for f in files]
        try:
            ddf = read(given, **options)
            if device == "gpu":
                ddf = ddf.map_partitions(_checked_block, ids, meta=ddf._meta)
        except (ValueError, OverflowError, TypeError, RuntimeError) as exc:  # in Dask's sample: an id past
            # 2**63, ...; RuntimeError: cuDF's parse errors
            found = locate()
            said = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
            raise InputError(found or f"the edge files of {str(path)!r} could not be read as text edge lists with "
                                      f"integer ids ({said}); ids on partitioned edge files are 64-bit integers") \
                from None
        ddf.columns = [str(c).strip() for c in ddf.columns]  # a header's names as one file's reader has them
        return ddf

    fields = _positions({"src": src, "dst": dst}, names or (layout.rows[0] if has_header else None))
    ddf = frame(tuple((k, k) for k in fields))
    ends = resolve_column(ddf, src, 0, "src"), resolve_column(ddf, dst, 1, "dst")
    cols = list(ddf.columns)
    if device != "gpu" and len(cols) > 2 and ends[0] != ends[1] and set(ends) <= set(cols):
        fields = sorted(cols.index(e) for e in ends)  # the two id fields alone, in the files' order
        options.update(usecols=fields, names=[cols[k] for k in fields] if names else heads)
        ddf = frame(tuple(enumerate(fields)))
    return ddf, locate, ends


def _cudf_files(files: list[str], **options: Any) -> Any:
    """Text files read by cuDF a file a partition, opened by name (cuDF takes a name for a pattern
    too), as dask-cuDF reads files without blocks."""
    import dask.dataframe as dd

    options.pop("blocksize", None)
    meta = _cudf_file(files[0], nrows=5, **options).iloc[:0]
    return dd.from_map(_cudf_file, files, meta=meta, **options)


def _cudf_file(name: str, **options: Any) -> Any:
    import cudf

    with open(name, "rb") as fh:
        return cudf.read_csv(fh, **options)


# Dask's block size for text edge files (its default); a file is one block where Dask would misread its later ones.
BLOCKSIZE: Any = "default"


def _checked_reader(positions: tuple[tuple[int, int], ...]) -> Any:
    """Dask's CSV reader whose every block (and sample) is read by pandas and then checked: an id
    column pandas read as uint64 holding an id past 2**63 - 1 is an error there (Dask would cast it
    to int64, a negative id); the caller names the line (:class:`_TextLocator`)."""
    import functools

    from dask.dataframe.io.csv import make_reader

    read = functools.partial(_read_block, positions)
    functools.update_wrapper(read, _read_block)  # Dask names its tasks after the reader
    read.__name__ = "read_csv"
    return make_reader(read, "read_csv", "CSV")


def _read_block(positions: tuple[tuple[int, int], ...], *args: Any, **kwargs: Any) -> Any:
    """One block of text edge files, by pandas, its id columns checked (:func:`_checked_block`)."""
    import pandas as pd

    return _checked_block(pd.read_csv(*args, **kwargs), positions)


def _checked_block(frame: Any, positions: tuple[tuple[int, int], ...]) -> Any:
    """A block of text edge files as read (pandas or cuDF), its id columns checked: anything but
    integers (Dask casts booleans, and text by ``int()``, which takes '1_000'), and uint64 ids past
    int64's range (Dask casts them to negative ones)."""
    import numpy as np

    for k, field in positions:  # (its position in the block, its field in the files)
        kind = frame.dtypes.iloc[k].kind if k < frame.shape[1] else "i"
        if len(frame) and kind not in "iu":  # Dask would cast booleans to 1 and 0, and text by int(): 1_000
            raise ValueError(f"ids read as {frame.dtypes.iloc[k]} in field {field + 1}: ids on partitioned edge files "
                             f"are integers")
        if kind == "u" and len(frame) and frame.iloc[:, k].max() > np.iinfo(np.int64).max:
            raise OverflowError(f"an id past 2**63 - 1 in field {field + 1}: ids on partitioned edge files are int64")
    return frame


def _header_names(layout: Any) -> list[str]:
    """The first file's header row as names (stripped, as one file's reader has them; an empty one,
    after a delimiter ending the line, as pandas names it)."""
    return [name or f"Unnamed: {k}" for k, name in enumerate(f.strip() for f in layout.rows[0])]


def _leading_lines(layout: Any, encoding: str = "utf-8-sig") -> list[tuple[int, str]]:
    """The blank and comment lines before a text file's first row, with their line numbers."""
    with open(layout.path, "r", encoding=encoding, errors="replace") as fh:
        return [(number, raw) for number, raw in zip(range(1, layout.skip + 1), fh)]


def _blank_before_header(layout: Any) -> bool:
    """Whether a line before the header row of the first file does not start with the files'
    comment character, as Dask sees its bytes (a blank line, or a byte-order mark before a comment):
    Dask, looking for the header row, skips only the lines that start with it."""
    return any(not raw.startswith(layout.comment) for _, raw in _leading_lines(layout, "utf-8"))


def _same_id_columns(files: list[str], columns: tuple[str, str]) -> None:
    """Every parquet file has the id columns, of the first file's types (read from the files'
    footers): Dask reads each file as it is and puts the partitions together under the first's
    types, so uint64 ids beside int64 ones became float64, changing ids past 2**53 without a word."""
    import pyarrow.parquet as pq

    first: list[Any] | None = None
    for f in files:
        try:
            schema = pq.read_schema(f)
        except Exception:  # an unreadable footer: the reader's own error names it
            continue
        missing = [c for c in columns if c not in schema.names]
        if missing:
            raise InputError(f"{f}: has no column(s) {missing} (its columns: {list(schema.names)}), which "
                             f"{files[0]} has; every edge file needs the same id columns: write them alike, or "
                             f"give a pattern that leaves it out")
        types = [schema.field(c).type for c in columns]
        odd = [(c, t) for c, t in zip(columns, types) if _kind(t) is None]
        if odd:
            raise InputError(f"{f}: column {odd[0][0]!r} holds {odd[0][1]}; ids on partitioned edge files are "
                             f"integers: write them as int64")
        if first is None:
            first = types
        elif list(map(_kind, types)) != list(map(_kind, first)):  # int32 beside int64 is read as int64
            said = ", ".join(f"{c!r} {t}" for c, t in zip(columns, types))
            were = ", ".join(f"{c!r} {t}" for c, t in zip(columns, first))
            raise InputError(f"{f}: its id columns are {said}; {files[0]}'s are {were}. Dask would read them as "
                             f"one type and change ids (uint64 beside int64 becomes float64): write every file's "
                             f"ids with one type (int64)")


def _kind(t: Any) -> str | None:
    """Which parquet id types Dask reads together without changing a value: signed integers, and
    unsigned ones narrower than 64 bits, as int64; uint64 apart; text apart; ``None``: not ids."""
    import pyarrow as pa

    if pa.types.is_integer(t):
        return "uint64" if pa.types.is_uint64(t) else "int"
    return "text" if pa.types.is_string(t) or pa.types.is_large_string(t) else None


# Bytes of text edge files read here, when the workers could not read them, to find the line at fault.
LOCATE_BYTES = 1 << 30


class _TextLocator:
    """When the workers could not read the text edge files: the first line at fault, found by reading
    the files here in order as one file is read (which names the file, line, column and value), up
    to :data:`LOCATE_BYTES`; ``None`` when none is found within them."""

    def __init__(self, files: tuple[str, ...], columns: tuple[str, ...] | None, header: bool, roles: dict,
                 comment: str = "#"):
        self.files, self.columns, self.header, self.roles, self.comment = files, columns, header, roles, comment

    def __call__(self) -> str | None:
        from graphops.base.device import Device
        from graphops.host.formats import ReadOptions
        from graphops.io.textio import read_text

        options = ReadOptions(columns=self.columns, header=self.header, ids="integer", roles=self.roles)
        read = 0
        for f in self.files:
            read += Path(f).stat().st_size
            if read > LOCATE_BYTES:  # (a file is read whole: past the budget, the workers' message stands)
                return None
            try:
                read_text(Path(f), Device.CPU, options)
            except InputError as exc:
                said, strings, _ = str(exc).partition("; read the ids as strings")
                return said + ("; ids on partitioned edge files are 64-bit integers: map them to smaller ones, or "
                               "read the files whole (without partitioned: true) with ids: string" if strings else "")
            except (OSError, ValueError):
                continue
            other = self._other_comment(f)  # read alone it is fine: the workers read it with the first's comments
            if other:
                return other
        return None

    def _other_comment(self, f: str) -> str | None:
        """A comment character of file ``f`` other than the one every file is read with, at its first line."""
        from graphops.io.textio import COMMENTS

        with open(f, "r", encoding="utf-8-sig", errors="replace") as fh:
            for number, raw in enumerate(fh, start=1):
                c = next((c for c in COMMENTS if c != self.comment and c in raw), None)
                if c:
                    return (f"{f}, line {number}: {c!r} starts a comment, but the edge files are read with "
                            f"{self.comment!r} comments (the first file's): the workers take one comment "
                            f"character for all the files; use {self.comment!r} throughout")
        return None


def _like_the_first(files: list[str], layout: Any, header: bool, names: list[str] | None) -> None:
    """The rows sampled from the head of every file are laid out as the first file's: as many fields
    as its first row (or, with ``columns=``, at least as many as named), and the first file's header
    row, when it has one (the reader takes one from each file, so a file without it would lose its
    first edge, and one naming other columns be read by position). The workers read each file with
    the first file's columns: a row with a field more or less would be read shifted or cut."""
    from graphops.io.textio import TextLayout

    head, want = layout.rows[0], len(names) if names else len(layout.rows[0])
    for f in files:
        other = layout if f == files[0] else TextLayout(Path(f), sep=layout.sep)
        odd = next((n for n, raw in _leading_lines(other) if raw.strip("\r\n") and not raw.startswith(
            layout.comment)), None)
        if odd is not None:  # pandas, reading each file's first block, takes such a line for a row or the header
            raise InputError(f"{f}, line {odd}: blanks, a form feed, or a comment after blanks or not starting with "
                             f"{layout.comment!r} (the files' comment character), before the first edge row; "
                             f"partitioned text files are read by Dask and pandas, which take such a line for a row "
                             f"or the header: empty the line, start the comment at the line's beginning with "
                             f"{layout.comment!r}, or remove it")
        if other is not layout and header and other.sample and layout.fields(other.sample[0][1]) != head:
            raise InputError(f"{f}, line {other.sample[0][0]}: {other.sample[0][1].strip()!r} is not the header row of "
                             f"{files[0]} ({layout.sep.join(head)!r}); the edge files are read with one header row "
                             f"each: give every file the same header row, or none (header: false)")
        for row, fields in enumerate(other.rows):
            if (len(fields) < want) if names else (len(fields) != want):
                need = f"at least {want} (the columns= given)" if names else f"{want}, as {files[0]}, line " \
                    f"{layout.sample[0][0]} has"
                raise InputError(f"{other.where(row)}: {len(fields)} field{'s' if len(fields) != 1 else ''}, expected "
                                 f"{need}. Every row of the edge files needs the same fields: fix the line, or pass "
                                 f"columns=[...] naming the leading columns to read (YAML: columns: [src, dst]); the "
                                 f"fields after them are not read")
