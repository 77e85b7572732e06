"""The run cache: a step's result kept under a key made of what made it, so a rerun with nothing
changed reads it instead of computing it (``cached`` in the table and the summary).

A step's key hashes the algorithm, the plugin that provides it (its distribution's version and the
content of its source files, so an edited plugin is not taken for the old one), graphops' version
and its own code, the validated parameters, the backend asked for (``auto`` with whether a GPU is
usable here: the backend family) and each input: a graph's content
(:func:`graphops.engine.digest.digest`, from its arrays), or for a graph made ``from_step`` the key
of that step with the source's keys. A step with an input that
has no digest (a Dask graph), parameters that are not plain data, or a result that is neither a frame
nor an array is not cached, and the summary says why.

Entries live in ``GRAPHOPS_RUN_CACHE`` when set, else in graphops' per-user cache folder under ``runs``
(``graphops cache list | clear``), one folder a key: the result (``result.parquet``, ``.npy`` or ``.npz``)
and ``entry.json`` (the key's parts, the result's kind and family, its SHA-256). An entry is written
into a temporary folder and renamed into place in one step, so a reader sees a whole entry or none;
two runs writing the same key keep the first and drop the second's copy. An entry whose files are
missing, unreadable or do not match their SHA-256 is removed and computed again, never returned.
"""
from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import io
import json
import logging
import os
import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphops.version import __version__

__all__ = ["cache_root", "step_key", "load", "store", "entries", "clear", "StepKey", "CACHE_FORMAT"]

log = logging.getLogger("graphops")

CACHE_FORMAT = 1
ENTRY = "entry.json"
OWN_FILES = {ENTRY, "result.parquet", "result.npy", "result.npz"}  # all an entry folder ever holds
_SHARD, _KEY, _TMP = re.compile(r"[0-9a-f]{2}"), re.compile(r"[0-9a-f]{40}"), re.compile(r"\.tmp-[0-9a-f]{32}")


def cache_root() -> Path:
    """Where entries live (not created here)."""
    given = os.environ.get("GRAPHOPS_RUN_CACHE")
    if given:
        return Path(given)
    from graphops.base.dirs import cache_dir

    return cache_dir("runs")


@dataclass(frozen=True)
class StepKey:
    """A step's key, and the parts it was made of (kept in the entry and the run summary)."""

    key: str
    parts: dict


@functools.cache
def _code_digest(module: str) -> str:
    """The content of the package a backend lives in (its .py and .cu files), hashed once per process."""
    import importlib.util

    spec = importlib.util.find_spec(module.split(".")[0])
    h = hashlib.blake2b(digest_size=16)
    folders = [Path(f) for f in (spec.submodule_search_locations or [])] if spec else []
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.suffix in (".py", ".cu", ".cuh")):
            h.update(str(path.relative_to(folder)).encode())
            h.update(path.read_bytes())
    if not folders and spec and spec.origin:
        h.update(Path(spec.origin).read_bytes())
    return h.hexdigest()


def _plugin_parts(algo: Any) -> dict:
    """The plugin of an algorithm: its distribution ("name version") and the content of its code."""
    dist = algo.distribution or None  # set by the registry from the plugin's distribution
    modules = sorted({str(getattr(b, "target", b)).split(":")[0] for b in algo.backends.values()})
    return {"plugin": algo.plugin, "distribution": dist,
            "code": hashlib.blake2b("".join(_code_digest(m) for m in modules).encode(), digest_size=16).hexdigest()}


def step_key(algo: Any, params: Any, backend: str, inputs: dict[str, str]) -> StepKey | str:
    """The key of a step (``inputs``: slot -> the input's digest or key), or why it has none."""
    from graphops.base.device import gpu_available

    try:
        dumped = params.model_dump(mode="json") if hasattr(params, "model_dump") else dict(params)
        json.dumps(dumped, sort_keys=True)
    except Exception as exc:  # a parameter that is not plain data (an object): no key
        return f"its parameters are not plain data ({type(exc).__name__})"
    family = f"auto:{'gpu' if gpu_available() else 'cpu'}" if backend == "auto" else backend
    # graphops' own code too: an edit to the engine within one version is not served the old result
    parts = {"format": CACHE_FORMAT, "graphops": __version__, "core": _code_digest("graphops"),
             "algorithm": algo.name, **_plugin_parts(algo),
             "params": dumped, "backend": family, "inputs": dict(sorted(inputs.items()))}
    text = json.dumps(parts, sort_keys=True, default=str)
    return StepKey(hashlib.blake2b(text.encode(), digest_size=20).hexdigest(), parts)


def source_key(step_key: str, source: Any) -> str:
    """The digest of a graph made ``from_step``: the step's key with the source's own keys."""
    spec = source.model_dump(mode="json", exclude={"device"})
    return hashlib.blake2b(json.dumps([step_key, spec], sort_keys=True).encode(), digest_size=16).hexdigest()


def _where(key: str) -> Path:
    return cache_root() / key[:2] / key


def _payload(result: Any) -> tuple[str, str, bytes] | str:
    """(file name, family, bytes) of a result, or why it cannot be kept."""
    import numpy as np

    from graphops.base.device import Device, device_of, to_device

    if hasattr(result, "columns") and hasattr(result, "dtypes") and not hasattr(result, "dask"):
        family = "cudf" if type(result).__module__.startswith("cudf") else "pandas"
        import pyarrow as pa
        import pyarrow.parquet as pq

        frame = result.to_pandas() if family == "cudf" else result
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), buf)  # (one file, no dataset machinery)
        return "result.parquet", family, buf.getvalue()
    if hasattr(result, "dtype") and hasattr(result, "shape") and not hasattr(result, "dask"):
        family = "cupy" if device_of(result) is Device.GPU else "numpy"
        buf = io.BytesIO()
        np.save(buf, to_device(result, Device.CPU), allow_pickle=False)
        return "result.npy", family, buf.getvalue()
    if isinstance(result, dict) and result and all(hasattr(v, "dtype") and hasattr(v, "shape") for v in result.values()):
        family = "cupy" if any(device_of(v) is Device.GPU for v in result.values()) else "numpy"
        buf = io.BytesIO()
        np.savez(buf, **{str(k): to_device(v, Device.CPU) for k, v in result.items()})
        return "result.npz", family, buf.getvalue()
    return f"its result (a {type(result).__name__}) is neither a frame nor an array"


def store(key: StepKey, result: Any, made: dict) -> str | None:
    """Keep ``result`` under ``key`` (``made``: backend, device, seconds); why not, or ``None`` when kept
    (or already kept by another run)."""
    payload = _payload(result)
    if isinstance(payload, str):
        return payload
    name, family, data = payload
    final = _where(key.key)
    if final.parent.is_symlink() or (final.parent.exists() and not final.parent.is_dir()):
        return f"the cache's folder {final.parent} is a link or not a folder: nothing is written through it"
    if (final / ENTRY).is_file():
        return None
    tmp = final.parent / f".tmp-{uuid.uuid4().hex}"
    try:
        tmp.mkdir(parents=True)
        (tmp / name).write_bytes(data)
        entry = {"key": key.key, "parts": key.parts, "file": name, "family": family,
                 "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data),
                 "created": _dt.datetime.now().isoformat(timespec="seconds"), **made}
        (tmp / ENTRY).write_text(json.dumps(entry, indent=1, default=str))
        try:
            os.rename(tmp, final)
        except OSError:  # another run kept this key first (or a broken entry of the cache's own is in the way)
            if not (final / ENTRY).is_file():
                if not _own_folder(final):
                    return f"a folder that is not the cache's own is where its entry goes ({final})"
                shutil.rmtree(final, ignore_errors=True)
                os.rename(tmp, final)
    except OSError as exc:
        return f"the cache folder cannot be written ({exc.strerror or exc})"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return None


def load(key: str) -> tuple[Any, dict] | None:
    """``(result, entry)`` kept under ``key``; ``None`` when there is none. A damaged entry (files missing,
    unreadable, not regular files, of another size or SHA-256 than recorded) is removed and ``None``
    returned."""
    import stat

    folder = _where(key)
    if not os.path.lexists(folder):
        return None
    try:
        if not _own_folder(folder):
            raise ValueError("it is not a folder of the cache's own files")
        entry_path = folder / ENTRY
        if not stat.S_ISREG(os.lstat(entry_path).st_mode) or os.lstat(entry_path).st_size > 1 << 20:
            raise ValueError(f"{ENTRY} is not a small regular file")
        entry = json.loads(entry_path.read_text())
        payload = folder / entry["file"]
        if entry["file"] not in OWN_FILES - {ENTRY}:
            raise ValueError(f"it names a result file {entry['file']!r} the cache never writes")
        info = os.lstat(payload)
        if not stat.S_ISREG(info.st_mode) or info.st_size != entry["bytes"]:
            raise ValueError("its result is not a regular file of the size recorded")
        data = payload.read_bytes()
        if entry.get("key") != key or hashlib.sha256(data).hexdigest() != entry["sha256"]:
            raise ValueError("its result does not match its SHA-256")
        return _result(entry, data), entry
    except Exception as exc:  # any damage: the entry goes, the step is computed again
        discard(key, f"{type(exc).__name__}: {exc}")
        return None


def discard(key: str, why: str) -> None:
    """Remove a damaged entry (only a real folder of the cache's own files: never through a link)."""
    folder = _where(key)
    log.warning("run cache: entry %s is damaged (%s); removed, the step is computed again", key, why)
    if _own_folder(folder):
        shutil.rmtree(folder, ignore_errors=True)


def _own_folder(folder: Path) -> bool:
    """A real folder (no link on the way from the cache root) holding only the files an entry holds."""
    root = cache_root()
    try:
        if any(p.is_symlink() for p in (folder, folder.parent)) or not folder.is_dir():
            return False
        if folder.parent.parent.resolve() != root.resolve():
            return False
        return all(c.name in OWN_FILES and c.is_file() and not c.is_symlink() for c in folder.iterdir())
    except OSError:
        return False


def _result(entry: dict, data: bytes) -> Any:
    import numpy as np

    from graphops.base.device import Device, to_device

    file, family = entry["file"], entry["family"]
    home = Device.GPU if family == "cupy" else Device.CPU
    if file.endswith(".parquet"):
        import pyarrow.parquet as pq

        # one file read on this thread: pandas' reader goes through pyarrow's datasets and thread pool,
        # which aborted a process at exit now and then ("terminate called without an active exception")
        frame = pq.ParquetFile(io.BytesIO(data)).read(use_threads=False).to_pandas()
        if family == "cudf":
            import cudf

            frame = cudf.from_pandas(frame)
        return frame
    if file.endswith(".npy"):
        return to_device(np.load(io.BytesIO(data), allow_pickle=False), home)
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        return {k: to_device(z[k], home) for k in z.files}


def entries() -> list[dict]:
    """Every whole entry: key, algorithm, bytes, created."""
    out = []
    for path in sorted(e / ENTRY for e in _entry_folders() if (e / ENTRY).is_file()):
        try:
            e = json.loads(path.read_text())
            out.append({"key": e["key"], "algorithm": e["parts"].get("algorithm"), "bytes": e.get("bytes", 0),
                        "created": e.get("created"), "backend": e.get("backend")})
        except (OSError, ValueError, KeyError):
            continue
    return out


def _entry_folders() -> list[Path]:
    """The cache's own folders (``xx/<key>`` and unfinished ``xx/.tmp-<hex>``, real folders holding only
    an entry's files), nothing else under ``cache_root``: a link is never followed."""
    root = cache_root()
    if not root.is_dir():
        return []
    return [e for d in root.iterdir() if _SHARD.fullmatch(d.name) and d.is_dir() and not d.is_symlink()
            for e in d.iterdir() if (_KEY.fullmatch(e.name) or _TMP.fullmatch(e.name)) and _own_folder(e)]


def clear() -> int:
    """Remove every entry (and unfinished one), nothing else that may share the folder; how many
    whole entries there were."""
    found = _entry_folders()
    n = sum(1 for e in found if (e / ENTRY).is_file())
    for folder in found:
        shutil.rmtree(folder, ignore_errors=True)
        try:
            folder.parent.rmdir()  # the shard, once empty
        except OSError:
            pass
    return n
