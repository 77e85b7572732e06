"""The documentation builds: MkDocs (Material) with mkdocstrings, in strict mode (a broken link, a
missing page or a docstring griffe cannot read fails it), and its API pages come from the
docstrings and the hook specifications."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings_handlers.python", reason="the [docs] extra (mkdocstrings[python])")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    hooks = (tmp_path / "site" / "reference" / "hookspecs" / "index.html").read_text()
    assert "graphops_register_readers" in hooks and "(path, device, options)" in hooks
    assert "ReadOptions" in (tmp_path / "site" / "reference" / "plugin" / "index.html").read_text()
    assert "read_graph" in (tmp_path / "site" / "reference" / "api" / "index.html").read_text()


def test_every_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    assert not [p for p in sorted(pages) if p not in nav]
