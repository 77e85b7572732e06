"""``njit``: Numba's ``njit`` with its on-disk cache in graphops' per-user cache folder.

Numba's own ``cache=True`` writes ``__pycache__`` next to the source file when that
folder is writable. For an installed package that folder is ``site-packages``, where
the files outlive the package: pip does not remove them on reinstall, and a leftover
folder then shadows an editable install of the same package as an empty namespace
package. Plugins (and third-party plugin authors) decorate kernels with this ``njit``
instead::

    from graphops.base.jit import njit, prange

    @njit(parallel=True)
    def _kernel(indptr, out): ...

The cache goes to ``NUMBA_CACHE_DIR`` when the user set it, else to
``graphops.base.dirs.cache_dir("numba")``; when neither can be written, kernels are compiled
without an on-disk cache (never cached beside the source).
"""
from __future__ import annotations

import contextlib
import functools
import logging
import os
from typing import Any, Callable, Iterator

import numba
from numba import prange

from graphops.base.dirs import cache_dir

log = logging.getLogger("graphops")

__all__ = ["njit", "prange", "numba_cache_dir"]


@functools.lru_cache(maxsize=1)
def _writable_dir() -> str | None:
    """Numba's cache folder for graphops kernels, created once; ``None`` when unusable."""
    if numba.config.CACHE_DIR:  # NUMBA_CACHE_DIR, set by the user: theirs to choose
        return str(numba.config.CACHE_DIR)
    path = cache_dir("numba")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        log.debug("no on-disk Numba cache: cannot create %s (%s)", path, exc)
        return None
    if not os.access(path, os.W_OK | os.X_OK):
        log.debug("no on-disk Numba cache: %s is not writable", path)
        return None
    return str(path)


def numba_cache_dir() -> str | None:
    """The folder Numba caches graphops' kernels in, or ``None`` when caching is off."""
    return _writable_dir()


@contextlib.contextmanager
def _cache_location(path: str) -> Iterator[None]:
    # Numba fixes a function's cache folder when the decorator runs (its locator reads
    # config.CACHE_DIR then), so the setting is needed only for the decoration itself.
    before = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = path
    try:
        yield
    finally:
        numba.config.CACHE_DIR = before


def njit(*args: Any, **options: Any) -> Any:
    """``numba.njit`` (same arguments), cached in graphops' cache folder, never beside the source.
    ``cache=False`` for functions made at run time from generated source (Numba can cache only
    functions defined in a file)."""
    cache = options.pop("cache", True)
    path = _writable_dir() if cache else None

    def decorate(fn: Callable) -> Any:
        if path is None:
            return numba.njit(**options)(fn)
        with _cache_location(path):
            return numba.njit(cache=True, **options)(fn)

    if args and callable(args[0]):
        return decorate(args[0])
    return decorate
