"""The README's example plugin is a real package: it installs, registers through its entry point,
runs in a YAML pipeline, adds its CLI command, and passes its own tests (graphops' gate)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "graphops-degree"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``pip install`` of the example into a folder of its own (no network, no build isolation)."""
    target = tmp_path_factory.mktemp("site")
    work = tmp_path_factory.mktemp("build")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(target), str(EXAMPLE)], check=True, capture_output=True, cwd=work)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")])}
    env.pop("GRAPHOPS_PLUGINS", None)
    return env


def _graphops(env, *args, cwd=None):
    return subprocess.run([sys.executable, "-m", "graphops.cli", *args], env=env, capture_output=True,
                          text=True, cwd=cwd)


def test_it_registers_through_its_entry_point(installed):
    got = _graphops(installed, "plugins", "--json")
    info = json.loads(got.stdout)
    row = next(a for a in info["algorithms"] if a["algorithm"] == "degree")
    assert row["plugin"] == "degree" and row["distribution"] == "graphops-degree 0.1.0"
    assert row["backends"] == "cpu, gpu" and "degree-top" in info["commands"]


def test_its_pipeline_runs(installed, tmp_path):
    got = _graphops(installed, "run", str(EXAMPLE / "degree_example.yaml"), "--out", str(tmp_path))
    assert got.returncode == 0, got.stderr
    lines = (tmp_path / "karate_degree.csv").read_text().splitlines()
    assert lines[0] == "vertex,degree" and len(lines) == 35
    assert lines[1] == "0,16" and lines[34] == "33,17"  # the instructor and the administrator
    strength = (tmp_path / "karate_strength.csv").read_text().splitlines()
    assert strength[1] == "0,42.0"


def test_its_command_runs(installed, tmp_path):
    (tmp_path / "e.tsv").write_text("a\tb\na\tc\na\td\nb\tc\n")
    got = _graphops(installed, "degree-top", str(tmp_path / "e.tsv"), "-k", "2")
    assert got.returncode == 0, got.stderr
    assert got.stdout.split() == ["vertex", "degree", "a", "3", "b", "2"]


def test_its_own_tests_pass(installed):
    got = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE / "tests")],
                         env=installed, capture_output=True, text=True, cwd=EXAMPLE)
    assert got.returncode == 0, got.stdout + got.stderr
    assert "3 passed" in got.stdout
