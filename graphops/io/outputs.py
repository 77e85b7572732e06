"""Writing results: atomically, with ordinary file modes, inside the output folder, checked first.

* A result is written to a temporary file beside its target and renamed over it in one step,
  so a failed or interrupted write never leaves a partial file.
* New files get the mode the user's umask gives (``0o666 & ~umask``, as ``open()`` would); a
  replaced file keeps its mode.
* :func:`folder_problem` finds, without creating anything, why a folder could not take outputs
  (``graphops validate``), :func:`file_problem` why a file could not be written (a folder in its
  place, a name too long for the file system, its temporary twin's included);
  :func:`prepare_folder` creates it and proves it writable before any computing starts
  (``graphops run``). :func:`name_problem` finds text no file system takes as a path (a NUL).
* :func:`outside` tells whether an output path leaves its folder (absolute, or ``..``);
  :func:`leaving_link` whether it would be reached through a symbolic link that leads out of the
  folder; :func:`inside` is the path written, ``..`` resolved by name first (``a/../x`` is ``x``),
  so that no ``..`` is followed through a link. A file already at the target, link or not, is
  replaced by the rename: a link there is replaced, never written through.
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator, Mapping

import numpy as np

from graphops.base.device import Device, device_of
from graphops.errors import InputError, OutputError

__all__ = ["OUTPUT_SUFFIXES", "TEMP_EXTRA", "atomic_path", "write_result", "folder_problem", "file_problem",
           "name_problem", "prepare_folder", "outside", "leaving_link", "inside"]

OUTPUT_SUFFIXES = {"frame": (".parquet", ".csv"), "array": (".npy", ".csv", ".npz"),
                   "array_or_frame": (".npy", ".csv", ".npz", ".parquet")}
TEMP_EXTRA = len("..") + 8 + len(".tmp")  # atomic_path's twin of NAME: .NAME.XXXXXXXX.tmp (mkstemp: 8 random)
_NAME_MAX, _PATH_MAX = 255, 4096  # where the file system does not say (os.pathconf)


def _umask() -> int:
    try:  # Linux: read it without changing it (os.umask would, for all threads, for a moment)
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode_for(path: Path) -> int:
    try:
        if not path.is_symlink():  # a link is replaced, not its target: a new file's mode
            return stat.S_IMODE(path.stat().st_mode)  # replacing: keep the file's mode
    except FileNotFoundError:
        pass
    return 0o666 & ~_umask()


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it replaces ``path`` in one step."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, _mode_for(path))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@contextlib.contextmanager
def atomic_folder(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary folder next to ``path``; on success it takes ``path``'s place (a file or
    folder there before is removed only after the new folder is in place)."""
    path = Path(path)
    if path.is_dir() and not path.is_symlink():
        problem = file_problem(path, atomic=True, folder_ok=True)  # only an earlier result's part files go
        if problem:
            raise OutputError(problem)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"))
    old = None
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())
        if path.exists() or path.is_symlink():
            old = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".old")) / "x"
            os.replace(path, old)
        os.replace(tmp, path)
    finally:
        for left in (tmp, old.parent if old is not None else None):
            if left is not None and left.exists():
                shutil.rmtree(left, ignore_errors=True)


def write_result(result: Any, path: str | os.PathLike, writers: Mapping[str, str] | None = None,
                 metadata: Mapping[str, Any] | None = None) -> Path:
    """Write a frame (.parquet/.csv) or array (.npy/.csv/.npz; several arrays: .npz) atomically, or through one of the
    algorithm's ``writers`` (suffix -> ``"module:function"`` ``(result, path)``); return the path. ``metadata``: what a
    Parquet file carries in its file metadata, as JSON under the key ``graphops`` (a run's provenance)."""
    path = Path(path)
    suffix = path.suffix.lower()
    is_frame = hasattr(result, "columns")
    writers = dict(writers or {})
    allowed = OUTPUT_SUFFIXES["frame" if is_frame else "array"] + tuple(writers)
    if isinstance(result, tuple):
        allowed = (".npz",)
    if suffix not in allowed:
        kind = ("several arrays" if isinstance(result, tuple) else "a frame" if is_frame else "an array")
        raise InputError(f"cannot write {kind} to {str(path)!r}; use one of {', '.join(allowed)}")
    from graphops.model.daskgraph import is_dask_frame

    dask = is_dask_frame(result)
    if dask and suffix == ".parquet":
        with atomic_folder(path) as tmp:  # a folder of parquet files, one per partition, written by the workers
            result.to_parquet(str(tmp), write_index=False)
        return path
    with atomic_path(path) as tmp:
        if suffix in writers:
            from graphops.host.algorithm import load_target

            load_target(writers[suffix])(result, tmp)
        elif is_frame and suffix == ".parquet" and metadata is not None and not dask:
            _write_parquet(result, tmp, metadata)
        elif is_frame:
            _write_frame(result, tmp, suffix, dask)
        else:
            _write_array(result, tmp, suffix)
    return path


def _write_parquet(frame: Any, tmp: Path, metadata: Mapping[str, Any]) -> None:
    """A frame (pandas or cuDF) as Parquet with ``metadata`` as JSON under the file metadata key ``graphops``."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    on_gpu = type(frame).__module__.startswith("cudf")
    table = frame.to_arrow(preserve_index=False) if on_gpu else pa.Table.from_pandas(frame, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[b"graphops"] = json.dumps(metadata, default=str).encode()
    pq.write_table(table.replace_schema_metadata(meta), tmp)


def _write_frame(frame: Any, tmp: Path, suffix: str, dask: bool = False) -> None:
    if dask:  # .csv (.parquet is a folder: write_result): one file, the partitions appended in order
        frame.to_csv(str(tmp), single_file=True, index=False)
    elif suffix == ".parquet":
        frame.to_parquet(tmp, index=False)
    else:
        frame.to_csv(tmp, index=False)


def _host(arr: Any) -> np.ndarray:
    return arr.get() if device_of(arr) is Device.GPU else np.asarray(arr)


def _write_array(arr: Any, tmp: Path, suffix: str) -> None:
    if suffix == ".npz":  # one array or several (arr_0, arr_1, ... in order)
        with open(tmp, "wb") as fh:
            np.savez(fh, *(_host(a) for a in (arr if isinstance(arr, tuple) else (arr,))))
        return
    host = _host(arr)
    with open(tmp, "wb") as fh:
        if suffix == ".npy":
            np.save(fh, host)
        else:
            np.savetxt(fh, np.atleast_2d(host), delimiter=",", fmt="%.17g")


def _read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def folder_problem(folder: str | os.PathLike) -> str | None:
    """Why outputs could not be written under ``folder`` (created if missing), or ``None``.

    Creates nothing: checks the folder, or its nearest existing parent, for being a folder,
    on a writable file system, with write permission.
    """
    folder = Path(folder).absolute()
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        return f"{str(probe)!r} is a file, not a folder"
    if _read_only_fs(probe):
        return f"{str(probe)!r} is on a read-only file system"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"no permission to write in {str(probe)!r}"
    return None


def file_problem(path: str | os.PathLike, atomic: bool = False, folder_ok: bool = False) -> str | None:
    """Why a file could not be written at ``path`` (its folder created if missing), or ``None``;
    creates nothing, so a command can ask before it works for minutes.

    :param atomic: written by :func:`atomic_path` (renamed over what is there, so only the folder's
        permission counts), whose temporary twin's name is :data:`TEMP_EXTRA` bytes longer
    :param folder_ok: a folder may stand there (a Dask result written as a folder of parquet files)
    """
    path = Path(path)
    too_long = _length_problem(path, TEMP_EXTRA if atomic else 0)  # first: a stat of such a path fails
    if too_long:
        return too_long
    if path.is_dir() and not folder_ok:
        return f"{str(path)!r} is a folder; give a file name"
    if path.is_dir():
        foreign = _not_parts(path)
        if foreign:
            return (f"{str(path)!r} is a folder holding more than an earlier result's part files "
                    f"({', '.join(repr(n) for n in foreign[:3])}{', ...' if len(foreign) > 3 else ''}), "
                    f"which writing the result there would remove; give another name, or empty the folder")
    if not atomic and path.exists() and not os.access(path, os.W_OK):
        return f"no permission to replace {str(path)!r}"
    return folder_problem(path.parent)


# What a Dask frame's to_parquet leaves in its folder: part.<i>.parquet files (and the metadata files
# some writers add). A folder at an output path holding anything else is not an earlier result.
_PART_FILE = re.compile(r"part\.\d+\.parquet|_metadata|_common_metadata")


def _not_parts(folder: Path) -> list[str]:
    """The entries of ``folder`` that are not an earlier result's part files (a link, a folder or a
    file of another name), sorted."""
    try:
        entries = list(os.scandir(folder))
    except OSError as exc:
        return [f"unreadable: {exc.strerror}"]
    return sorted(e.name for e in entries
                  if not (_PART_FILE.fullmatch(e.name) and e.is_file(follow_symlinks=False)))


def _limit(folder: Path, name: str, fallback: int) -> int:
    """The file system's limit ``name`` (``PC_NAME_MAX``, ``PC_PATH_MAX``) at the nearest existing folder."""
    probe = folder.absolute()
    while not os.path.isdir(probe) and probe != probe.parent:  # os.path: False for a name too long, not an error
        probe = probe.parent
    try:
        return int(os.pathconf(probe, name)) or fallback
    except (OSError, ValueError, AttributeError):
        return fallback


def _length_problem(path: Path, extra: int) -> str | None:
    """Why ``path`` is too long for the file system (its name ``extra`` bytes longer: a temporary twin's)."""
    whole = Path(os.path.abspath(path))
    most, twin = _limit(whole.parent, "PC_NAME_MAX", _NAME_MAX), ""
    parts = whole.parts[1:]
    for i, part in enumerate(parts):
        size = len(os.fsencode(part))
        if i == len(parts) - 1 and extra:
            size, twin = size + extra, f" (its temporary twin .NAME.XXXXXXXX.tmp: {size + extra:,})"
        if size > most:
            return (f"the name {_shown(part)} is {len(os.fsencode(part)):,} bytes{twin}; this file system takes "
                    f"names of at most {most} bytes: give a shorter name")
    longest, size = _limit(whole.parent, "PC_PATH_MAX", _PATH_MAX), len(os.fsencode(str(whole))) + extra
    if size >= longest:
        return (f"the path {_shown(str(whole))} is {size:,} bytes{' with its temporary twin' if extra else ''}; "
                f"this system takes paths of fewer than {longest} bytes: give a shorter one")
    return None


def _shown(text: str, limit: int = 80) -> str:
    """``repr(text)``, cut in the middle when long (a name of 300 characters)."""
    shown = repr(text)
    return shown if len(shown) <= limit else f"{shown[:limit // 2]}...{shown[-limit // 4:]}"


def name_problem(text: str) -> str | None:
    """Why ``text`` cannot be a path on any file system here, or ``None``: a NUL character (no file system
    takes one), or characters with no bytes in the file system's encoding (a lone surrogate)."""
    if "\0" in text:
        return "a NUL character (\\0), which no file system takes in a path"
    try:
        os.fsencode(text)
    except UnicodeError:
        return f"characters the file system's encoding ({sys.getfilesystemencoding()}) has no bytes for"
    return None


def prepare_folder(folder: str | os.PathLike) -> Path:
    """Create ``folder`` and prove it takes files (a probe file, removed); an :class:`OutputError`
    in one line otherwise. Run before any computing."""
    folder = Path(folder)
    problem = folder_problem(folder)
    if problem is None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, probe = tempfile.mkstemp(dir=folder, prefix=".graphops-probe.")
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            problem = exc.strerror or str(exc)
    if problem is not None:
        raise OutputError(f"cannot write outputs to {str(folder)!r}: {problem}. Choose another folder "
                          f"(graphops run --out DIR, or output_dir: in the pipeline file)")
    return folder


def outside(output: str) -> str | None:
    """Why ``output`` (a path relative to the output folder) would leave it, or ``None``."""
    if os.path.isabs(output) or (len(output) > 1 and output[1] == ":"):
        return "it is an absolute path"
    if os.path.normpath(output).split(os.sep)[0] == "..":
        return "it climbs out of the folder with '..'"
    return None


def leaving_link(folder: str | os.PathLike, relative: str) -> str | None:
    """Why writing ``relative`` (normalized, see :func:`inside`) under ``folder`` would follow a symbolic
    link out of ``folder`` (the first such link on the way, the file itself included), or ``None``.
    A link whose target stays inside ``folder`` is fine."""
    root = os.path.realpath(folder)
    here = Path(folder)
    for part in Path(os.path.normpath(relative)).parts:
        here = here / part
        if os.path.islink(here):
            target = os.path.realpath(here)
            if os.path.commonpath([root, target]) != root:
                return f"{str(here)!r} is a symbolic link to {target!r}"
        elif not os.path.exists(here):
            return None  # nothing below it exists yet: created as folders, no links
    return None


def inside(folder: str | os.PathLike, relative: str) -> Path:
    """The path written for ``relative`` under ``folder``: ``..`` resolved by name first, so that
    ``a/../x`` is ``folder/x`` even when ``a`` is a link elsewhere."""
    return Path(folder) / os.path.normpath(relative)
