"""Numba's on-disk cache lives in graphops' per-user cache folder, never beside installed code."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

MODULES = ["graphops_describe.cpu", "graphops_jaccard.cpu", "graphops_sp_kernel.cpu",
           "graphops_sp_kernel.paths", "graphops.io.generate"]

PROBE = f"""
import importlib, json, pandas as pd, graphops as go
g = go.Graph.from_edgelist(pd.DataFrame({{"src": [0, 1], "dst": [1, 2]}}))
go.run("describe", g, backend="cpu")
paths = {{}}
for name in {MODULES!r}:
    mod = importlib.import_module(name)
    for attr, obj in vars(mod).items():
        if hasattr(obj, "stats") and hasattr(obj, "py_func") and obj.py_func.__module__ == name:
            paths[name + "." + attr] = obj.stats.cache_path
print(json.dumps(paths))
"""


def _probe(env: dict) -> dict:
    full = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "GRAPHOPS_CACHE_DIR")}
    full.update(env)
    out = subprocess.run([sys.executable, "-c", PROBE], env=full, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def test_kernels_cache_in_the_user_cache_folder(tmp_path):
    paths = _probe({"GRAPHOPS_CACHE_DIR": str(tmp_path)})
    assert len(paths) > 20
    outside = {k: p for k, p in paths.items() if not str(p).startswith(str(tmp_path / "numba"))}
    assert not outside
    assert list((tmp_path / "numba").rglob("*.nbi"))  # describe's kernels were written there


def test_numba_cache_dir_set_by_the_user_wins(tmp_path):
    paths = _probe({"GRAPHOPS_CACHE_DIR": str(tmp_path / "ours"), "NUMBA_CACHE_DIR": str(tmp_path / "theirs")})
    assert all(str(p).startswith(str(tmp_path / "theirs")) for p in paths.values())


def test_unwritable_cache_folder_means_no_disk_cache_not_the_source_folder(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    paths = _probe({"GRAPHOPS_CACHE_DIR": str(blocker / "cache")})
    assert set(paths.values()) == {None}


def test_no_module_uses_numba_cache_directly():
    root = Path(__file__).resolve().parents[1]
    offenders = [str(p.relative_to(root)) for folder in ("graphops", "plugins")
                 for p in (root / folder).rglob("*.py") if "cache=True" in p.read_text()
                 and p.name != "jit.py"]
    assert offenders == []


@pytest.mark.parametrize("name", MODULES)
def test_module_compiles_through_graphops_jit(name):
    import importlib

    source = Path(importlib.util.find_spec(name).origin).read_text()
    assert "numba.njit" not in source and "njit" in source
