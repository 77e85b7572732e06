"""Where graphops keeps files of its own: a per-user cache folder, never an installed package.

``GRAPHOPS_CACHE_DIR`` overrides the platform's cache location (``~/.cache/graphops`` on
Linux, ``~/Library/Caches/graphops`` on macOS, ``%LOCALAPPDATA%\\graphops\\Cache`` on Windows).
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir"]


def cache_dir(*parts: str) -> Path:
    """The per-user cache folder of graphops (or a subfolder of it); not created here."""
    root = os.environ.get("GRAPHOPS_CACHE_DIR")
    if not root:
        from platformdirs import user_cache_dir

        root = user_cache_dir("graphops", appauthor=False)
    return Path(root).joinpath(*parts)
