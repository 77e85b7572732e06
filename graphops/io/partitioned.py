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
    return sorted(path.glob(f"*.{format}") if path.is_dir() else map(Path, glob.glob(str(path))))


def _no_special_files(path: Path, named: list[Path]) -> None:
    """A FIFO, device or socket, or a link that leads to no file, among the names a partitioned source
    matches is one line (its edges would otherwise be left out without a word, or the read wait forever)."""
    from graphops.io.files import special_file

    for p in named:
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
    from graphops.io.textio import TextLayout, first_line_is_header, resolve_column

    named = _named(path, format)
    _no_special_files(path, named)
    files = [str(f) for f in named if f.is_file()]
    if not files:
        raise InputError(f"no {format} file matches {str(path)!r}")
    dd = require("dask_cudf" if device == "gpu" else "dask.dataframe", "reading partitioned edge files")
    if format == "parquet":
        for f in files:
            why = not_parquet(f)
            if why:
                raise InputError(f"{f}: {why}, among the edge files of {str(path)!r}; give format='csv' for text "
                                 f"files (format: csv in a pipeline), or a pattern that leaves it out")
        try:
            ddf = dd.read_parquet(files)
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError: not parquet, or damaged
            said = str(exc).strip().splitlines()[-1]
            raise InputError(f"the edge files of {str(path)!r} could not be read as parquet ({type(exc).__name__}: "
                             f"{said}); for text files give format='csv' (format: csv in a pipeline)") from None
    else:
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
        # index_col=False: a row with a field more than the header names is never read shifted by one (its
        # first field taken as the index); usecols: columns= reads the leading fields, as for one file
        ddf = dd.read_csv(files, sep=layout.sep, header=0 if has_header else None, names=names,
                          usecols=list(range(len(names))) if names else None, index_col=False, comment=layout.comment)
        ddf.columns = [str(c) for c in ddf.columns]
    s = resolve_column(ddf, src, 0, "src")
    d = resolve_column(ddf, dst, 1, "dst")
    locate = _TextLocator(tuple(files), tuple(columns) if columns else None, has_header,
                          {"src": src, "dst": dst}) if format == "csv" else None
    if locate is not None and any(getattr(ddf[c].dtype, "kind", "O") not in "iu" for c in (s, d)):
        found = locate()  # text where ids should be, in the rows Dask sampled: the line at fault, named
        if found:
            raise InputError(found)
    graph = DaskGraph.from_edgelist(ddf, src=s, dst=d, directed=directed)
    graph.explain_unread = locate
    return graph


# Bytes of text edge files read here, when the workers could not read them, to find the line at fault.
LOCATE_BYTES = 1 << 30


class _TextLocator:
    """When the workers could not read the text edge files: the first line at fault, found by reading
    the files here in order as one file is read (which names the file, line, column and value), up
    to :data:`LOCATE_BYTES`; ``None`` when none is found within them."""

    def __init__(self, files: tuple[str, ...], columns: tuple[str, ...] | None, header: bool, roles: dict):
        self.files, self.columns, self.header, self.roles = files, columns, header, roles

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
