"""Every pipeline file shipped in configs/ validates, and every example runs from a fresh clone."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import graphops as go

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "configs").rglob("*.yaml"))
EXAMPLES = [p for p in CONFIGS if p.parent.name == "configs"]


def test_configs_exist():
    names = {p.relative_to(ROOT / "configs").as_posix() for p in CONFIGS}
    assert "describe_example.yaml" in names and any(n.startswith("bench/") for n in names)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_config_validates_and_reads_nothing_outside_the_repository(path):
    assert go.load_pipeline(path).model.steps
    for name, src in yaml.safe_load(path.read_text())["graphs"].items():
        if "path" in src:
            assert (path.parent / src["path"]).resolve().is_relative_to(ROOT), (path.name, name)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path, tmp_path, monkeypatch):
    monkeypatch.delenv("GRAPHOPS_DATA", raising=False)  # as on a fresh clone: bundled data only
    summary = go.run_pipeline(path, out=tmp_path)
    assert summary.status == "ok" and all(s.status in ("ok", "cached") for s in summary.steps)
    for step in summary.steps:
        assert step.output is None or Path(step.output).is_file()


def test_example_output_is_the_karate_description(tmp_path):
    summary = go.run_pipeline(ROOT / "configs" / "describe_example.yaml", backend="cpu", out=tmp_path)
    out = (tmp_path / "karate_describe.csv").read_text().splitlines()
    assert out[0].startswith("n_vertices,n_edges,self_loops,multi_edges")
    assert out[1].startswith("34,78,0,0,1.0,") and out[1].endswith(",17.0,0.38536953242835614,1")
    assert summary.steps[0].device == "cpu"
