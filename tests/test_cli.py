"""The graphops command: run, validate, plugins, bench (called in-process through main)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphops.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "configs" / "describe_example.yaml"


def test_run_writes_outputs_and_summary(tmp_path, capsys):
    assert main(["run", str(EXAMPLE), "--backend", "cpu", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "karate-stats" in printed and "summary written to" in printed
    summary = json.loads((tmp_path / "describe_example.summary.json").read_text())
    step = summary["steps"][0]
    assert step["backend"] == "cpu" and step["device"] == "cpu" and step["seconds"] > 0
    assert step["shape"] == [1, 9] and (tmp_path / "karate_describe.csv").exists()


def test_validate_reports_config_errors(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\ngraphs: {}\nsteps: []\n")
    assert main(["validate", str(EXAMPLE), str(bad)]) == 1
    captured = capsys.readouterr()
    assert f"{EXAMPLE}: valid (1 graph(s), 1 step(s))" in captured.out.replace("\n", "")
    assert captured.err == (f"ConfigError: {bad} is invalid (2 errors)\n==> At key: graphs\n"
                            f"=====> Needs at least 1 entry (got none)\n==> At key: steps\n"
                            f"=====> Needs at least 1 entry (got none)\n")


def test_run_reports_bad_backend_without_traceback(capsys, tmp_path):
    assert main(["run", str(EXAMPLE), "--backend", "tpu", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err == ("PipelineError: step 'karate-stats' (describe) failed: InputError: describe: unknown backend "
                   "'tpu'. Offered: auto, cpu, gpu, networkx. Did you mean 'gpu'?; run summary: "
                   f"{tmp_path / 'describe_example.summary.json'}\n")


def test_plugins_lists_describe(capsys):
    assert main(["plugins", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    row = next(a for a in info["algorithms"] if a["algorithm"] == "describe")
    assert row["backends"] == "cpu, gpu" and row["peers"] == "networkx" and row["plugin"] == "describe"
    assert main(["plugins"]) == 0
    assert "describe" in capsys.readouterr().out


def test_bench_prints_table_and_json(tmp_path, capsys):
    (tmp_path / "g.txt").write_text("".join(f"{i} {i + 1}\n" for i in range(200)))
    cfg = tmp_path / "b.yaml"
    cfg.write_text("version: 1\ngraphs: {g: {path: g.txt}}\nsteps:\n"
                   "  - {id: a, algorithm: describe, inputs: {graph: g}, backend: networkx}\n"
                   "  - {id: b, algorithm: describe, inputs: {graph: g}, backend: cpu}\n"
                   "bench: {repeat: 3, warmup: 1, baseline: networkx}\n")
    out_json = tmp_path / "r.json"
    assert main(["bench", str(cfg), "--json", str(out_json)]) == 0
    assert "speed-up" in capsys.readouterr().out
    report = json.loads(out_json.read_text())
    rows = {r["backend"]: r for r in report["rows"]}
    assert len(rows["cpu"]["times"]) == 3 and rows["networkx"]["speedup"] == pytest.approx(1.0)
    assert rows["cpu"]["speedup"] > 0 and rows["cpu"]["floor"] > 0 and rows["networkx"]["peer"]
    assert "cpu" in report["machine"]["copy_GBps"]
