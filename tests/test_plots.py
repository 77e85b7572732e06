"""Pictures: bench results, Gram heatmaps, coefficient and degree distributions; each one
written, non-empty and a PNG; and the errors that say why a picture cannot be drawn."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import graphops as go
from graphops.cli.bench import BenchRow
from graphops.io.plots import bench_picture, plot_problem

pytest.importorskip("matplotlib")
PNG = b"\x89PNG\r\n\x1a\n"


def _is_png(path) -> bool:
    data = path.read_bytes()
    return len(data) > 1000 and data.startswith(PNG)


def test_pipeline_steps_write_their_pictures(tmp_path):
    (tmp_path / "p.yaml").write_text(textwrap.dedent("""
        version: 1
        graphs:
          karate: {dataset: karate}
          mutag: {dataset: MUTAG}
        steps:
          - {id: stats, algorithm: describe, inputs: {graph: karate}, backend: cpu, output: stats.csv, plot: true}
          - {id: jac, algorithm: jaccard, inputs: {graph: karate}, backend: cpu, output: jac.csv, plot: true}
          - {id: sp, algorithm: sp_kernel, inputs: {graphs: mutag}, backend: cpu, output: sp.npy, plot: true}
          - id: mg
            algorithm: mg_kernel
            inputs: {graphs: mutag}
            backend: cpu
            params: {normalize: true, eval_gradient: true}
            output: mg.npz
            plot: true
    """))
    summary = go.run_pipeline(tmp_path / "p.yaml", out=tmp_path / "out")
    assert summary.status == "ok"
    for step, name in zip(summary.steps, ["stats.png", "jac.png", "sp.png", "mg.png"]):
        assert step.picture == str(tmp_path / "out" / name) and _is_png(tmp_path / "out" / name)


def test_a_picture_needs_an_output_and_an_algorithm_that_draws(tmp_path):
    (tmp_path / "p.yaml").write_text(textwrap.dedent("""
        version: 1
        graphs: {karate: {dataset: karate}}
        steps:
          - {id: a, algorithm: describe, inputs: {graph: karate}, plot: true}
          - {id: b, algorithm: euler, inputs: {graph: karate}, output: tour.csv, plot: true}
    """))
    with pytest.raises(go.ConfigError) as info:
        go.load_pipeline(tmp_path / "p.yaml")
    text = str(info.value)
    assert "plot: true writes a picture beside the step's output; give the step an output" in text
    assert "euler draws no picture (algorithms that do: describe, jaccard, mg_kernel, sp_kernel)" in text


def test_without_matplotlib_the_extra_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert plot_problem() == "pictures need matplotlib: pip install 'graphops[plot]'"


def test_bench_picture(tmp_path):
    rows = [BenchRow("f", "jaccard(graph=karate)", "cpu", "cpu", False, "cpu", median=0.004, floor=1e-5),
            BenchRow("f", "jaccard(graph=karate)", "cugraph", "cugraph", True, "gpu", median=0.02),
            BenchRow("f", "describe(graph=karate)", "gpu", "gpu", False, "gpu", median=0.0007, floor=2e-6),
            BenchRow("f", "describe(graph=karate)", "x", "cpu", False, "cpu", note="failed: ...")]
    assert _is_png(bench_picture(rows, tmp_path / "bench.png"))
    with pytest.raises(go.InputError, match="no timed rows to draw"):
        bench_picture(rows[3:], tmp_path / "none.png")


def test_bench_cli_plot(tmp_path):
    (tmp_path / "b.yaml").write_text(textwrap.dedent("""
        version: 1
        graphs: {karate: {dataset: karate}}
        steps: [{id: d, algorithm: describe, inputs: {graph: karate}, backend: cpu}]
        bench: {repeat: 1, warmup: 0}
    """))
    done = subprocess.run([sys.executable, "-m", "graphops", "bench", str(tmp_path / "b.yaml"), "--json",
                           str(tmp_path / "r.json"), "--plot", str(tmp_path / "b.png")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert _is_png(tmp_path / "b.png")
