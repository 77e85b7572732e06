"""Where a run writes: inside its output folder, over nothing it reads, only where a file can be written.

Confinement: the file's ``output_dir`` lies inside the file's folder, and every file a run writes
(outputs, pictures, the run summary) inside the output folder: no absolute path, no ``..`` out of
it, no symbolic link on the way (the file itself included) that leads out of it. :func:`leaves` is
the one rule, for ``graphops validate`` (``graphops.pipeline.meaning``) and for the run, which
applies it again as it writes (``graphops.pipeline.run``), since a link can appear after validation.

* A file that says ``allow_outside_output_dir: true`` is trusted to write anywhere; it is the file
  someone sent you that says so, so :func:`trust_note` names every path it will write outside
  (``validate`` and ``run`` say it before anything runs, and the run summary keeps it).
* A folder given to the run (``graphops run --out DIR``, ``run_pipeline(out=DIR)``) is the caller's:
  every output stays inside it whatever the file says (the file's flag does not apply, and the
  note says so).
* :class:`Claims`: no two files of a run are one file, and none is a file the run reads, compared
  by real path (``os.path.realpath``), so a symbolic link does not hide that two names are one file.
* :func:`write_problem`: what would stop a file being written there (a folder in its place, a
  name longer than the file system takes), found before any step computes.
"""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from graphops.io.outputs import file_problem, inside, leaving_link, outside

__all__ = ["TRUST", "OWN_FOLDER", "Write", "Claims", "trusted", "escape", "leaves", "output_dir_leaves",
           "summary_name", "picture_of", "folder_output", "writes", "trust_note", "write_problem"]

TRUST = "or set 'allow_outside_output_dir: true' at the top of the file if you trust this pipeline to write there"
OWN_FOLDER = "the folder given to the run (--out) holds every output, whatever the file says"


def trusted(loaded: Any, out: Any = None) -> bool:
    """Whether the file's ``allow_outside_output_dir: true`` applies: not when the run has a folder of its own."""
    return bool(loaded.model.allow_outside_output_dir) and out is None


def escape(folder: str | os.PathLike, relative: str, what: str = "path") -> tuple[str, str] | None:
    """Why ``relative`` under ``folder`` would be written outside it, and the fix; ``None`` when it stays inside."""
    why = outside(relative)
    if why:
        return why, f"Give a {what} inside it"
    why = leaving_link(folder, relative)
    return (why, f"Remove the link, or give a {what} that does not pass through it") if why else None


def leaves(loaded: Any, folder: str | os.PathLike, relative: str, what: str = "path",
           out: Any = None) -> tuple[str, str] | None:
    """:func:`escape`, unless the file is :func:`trusted` to write outside (``out``: the run's own folder)."""
    return None if trusted(loaded, out) else escape(folder, relative, what)


def output_dir_leaves(loaded: Any) -> tuple[str, str] | None:
    """Why the file's ``output_dir`` would put the outputs outside the file's folder, and the fix."""
    return leaves(loaded, loaded.base, loaded.model.output_dir, "folder")


def summary_name(loaded: Any) -> str:
    """The run summary's file name in the output folder."""
    return f"{loaded.name}.summary.json"


def picture_of(output: str) -> Path:
    """The picture beside an output, relative to the output folder (``graphops.io.plots.picture_path``)."""
    from graphops.io.plots import picture_path

    return picture_path(os.path.normpath(output))


@dataclass(frozen=True)
class Write:
    """A file a run writes: its path relative to the output folder, what it is (``step 's': output``),
    the file key that names it (``output``, ``plot``), and whether a folder may stand there (a Dask result
    written as a folder of parquet files)."""

    relative: str
    what: str
    key: str = "output"
    folder_ok: bool = False

    @property
    def owner(self) -> str:
        """What the file is, as another file's message names it: ``the output of step 's'``."""
        step, _, kind = self.what.rpartition(": ")
        return f"the {kind} of {step}" if step else self.what


def folder_output(loaded: Any, step: Any) -> bool:
    """Whether a step's output may be a folder: a ``.parquet`` result of a partitioned graph (its Dask
    workers write a folder of files)."""
    return bool(step.output) and step.output.lower().endswith(".parquet") and any(
        loaded.sources.kind(g) == "daskgraph" for g in step.inputs.values() if g in loaded.model.graphs)


def writes(loaded: Any) -> list[Write]:
    """Every file a run of ``loaded`` writes, in order, the run summary last."""
    out = []
    for step in loaded.model.steps:
        if step.output:
            out.append(Write(step.output, f"step {step.id!r}: output", "output", folder_output(loaded, step)))
            if step.plot:
                out.append(Write(str(picture_of(step.output)), f"step {step.id!r}: picture", "plot"))
    out.append(Write(summary_name(loaded), "the run summary"))
    return out


def trust_note(loaded: Any, out: Any = None) -> str | None:
    """What a file saying ``allow_outside_output_dir: true`` will do, said before it runs: every path it
    will write outside the folder it would be held to (``None`` when none), or, with a folder of the
    run's own (``out``), that the flag does not apply."""
    if not loaded.model.allow_outside_output_dir:
        return None
    if out is not None:
        return (f"{loaded.file} sets allow_outside_output_dir: true, which does not apply to this run: every "
                f"output stays inside {str(out)!r}, the folder given to the run (--out)")
    folder = loaded.output_dir()
    away = escape(loaded.base, loaded.model.output_dir, "folder") is not None
    found = [f"{w.what} {os.path.realpath(inside(folder, w.relative))!r}" for w in writes(loaded)
             if away or escape(folder, w.relative) is not None]
    if not found:
        return None
    where = "the folder of the file" if away else f"its output folder {str(folder)!r}"
    return (f"{loaded.file} sets allow_outside_output_dir: true and will write {len(found)} file(s) outside {where}: "
            f"{'; '.join(found)}. Run it only if you trust it; graphops run --out DIR keeps every output inside DIR")


def write_problem(path: str | os.PathLike, folder_ok: bool = False) -> str | None:
    """Why a run could not write the file ``path`` (written atomically: through a temporary twin beside
    it), or ``None``: :func:`graphops.io.outputs.file_problem`, names' lengths included."""
    return file_problem(path, atomic=True, folder_ok=folder_ok)


class Claims:
    """The files of a run by real path: what the run reads (its graphs' files) and what it has written
    so far; a file is :meth:`claim` ed before it is written."""

    def __init__(self, loaded: Any):
        self.taken: dict[str, tuple[str, str]] = {}  # real path -> (what it is, the path as named)
        for name, path in _inputs(loaded):
            self.taken.setdefault(os.path.realpath(path), (name, os.path.normpath(path)))
        self.patterns = list(_patterns(loaded))  # (what, real pattern, as named): partitioned edge files
        self.folders: dict[str, tuple[str, str]] = {}  # folder outputs claimed so far, by real path

    def claim(self, path: str | os.PathLike, what: str, folder: bool = False) -> str | None:
        """``None`` and ``path`` claimed for ``what``; or what it would overwrite when another file of the run
        is the same file (``the input of graph 'g'``), with the real path when the names differ (a link), or
        when a partitioned graph's pattern or folder would take it among its edge files (``folder``: the
        output may be a folder of part files, its workers' result, which the pattern may take instead)."""
        real, named = os.path.realpath(path), os.path.normpath(path)
        if real in self.taken:
            other, other_named = self.taken[real]
            return other if other_named == named else f"{other} ({other_named!r} and {named!r} are both {real!r})"
        # a .parquet result of a partitioned graph is a folder of part.<i>.parquet files its workers write
        # (folder_output)
        inner = [real, os.path.join(real, "part.0.parquet")] if folder else [real]
        for other, pattern, as_named in self.patterns:
            if any(_globbed(p, pattern) for p in inner):
                return f"{other} ({as_named!r} takes it: a later run would read it as edges)"
            if folder and _within(pattern, real):
                return f"{other} ({as_named!r} lies inside it: writing the result there would remove it)"
        if folder:  # the folder takes the place of what is there: no file the run reads or writes may lie inside
            for taken, (other, other_named) in self.taken.items():
                if _within(taken, real):
                    return f"{other} ({other_named!r} lies inside it: writing the result there would remove it)"
        for inner_of, (other, other_named) in self.folders.items():  # claimed later, inside a folder output
            if _within(real, inner_of):
                return f"{other} ({other_named!r} is a folder result, which would remove it)"
        if folder:
            self.folders[real] = (what, named)
        self.taken[real] = (what, named)
        return None


def _inputs(loaded: Any) -> Iterator[tuple[str, Path]]:
    """(what it is, path) of every file the run's graphs are read from (edge, node and SMILES files;
    a partitioned graph's folder or pattern and each file it names)."""
    from graphops.io.partitioned import edge_files

    for name, src in loaded.model.graphs.items():
        path = loaded.sources.path(name)
        if path is not None:
            yield f"the input of graph {name!r}", path
            if loaded.sources.kind(name) == "daskgraph":
                yield from ((f"the input of graph {name!r}", f) for f in edge_files(path, loaded.sources.format(name)))
        if getattr(src, "nodes", None) is not None:
            yield f"the node file of graph {name!r}", loaded.base / src.nodes


def _within(path: str, folder: str) -> bool:
    """Whether ``path`` lies inside ``folder`` (both real paths)."""
    return path.startswith(folder.rstrip(os.sep) + os.sep)


def _globbed(path: str, pattern: str) -> bool:
    """Whether ``glob`` would list ``path`` for ``pattern``: component by component (a ``*`` stays
    within its folder)."""
    have, want = Path(path).parts, Path(pattern).parts
    return len(have) == len(want) and all(fnmatch.fnmatchcase(a, b) for a, b in zip(have, want))


def _patterns(loaded: Any) -> Iterator[tuple[str, str, str]]:
    """(what, pattern by real path, as named) of each partitioned graph: the files its folder or
    pattern would take, those there now and those written later alike."""
    for name in loaded.model.graphs:
        path = loaded.sources.path(name)
        if path is None or loaded.sources.kind(name) != "daskgraph":
            continue
        if path.is_dir():
            pattern = os.path.join(os.path.realpath(path), f"*.{loaded.sources.format(name)}")
        else:
            pattern = os.path.join(os.path.realpath(path.parent), path.name)
        yield f"the input of graph {name!r}", pattern, os.path.normpath(path)
