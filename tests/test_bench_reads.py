"""graphops bench's file-reading cases: read_graph and pyarrow side by side on one written file."""
from __future__ import annotations

import textwrap

import pytest

import graphops as go
from graphops.cli.bench import run_bench

FILE = """\
version: 1
name: reads
graphs:
  g: {{generate: {{kind: gnm, n: 50, m: 200, seed: 3}}}}
steps:
  - {{id: d, algorithm: describe, inputs: {{graph: g}}, backend: cpu}}
bench:
  repeat: 2
  warmup: 0
  baseline: pyarrow
  reads:
    {case}: {{graph: {graph}, format: {format}}}
"""


@pytest.mark.parametrize("fmt", ["csv", "tsv", "parquet"])
def test_a_read_case_times_read_graph_beside_pyarrow(tmp_path, fmt):
    path = tmp_path / "b.yaml"
    path.write_text(FILE.format(case="small", graph="g", format=fmt))
    rows = [r for r in run_bench([path]).rows if r.step == "small"]
    assert [(r.backend, r.peer) for r in rows] == [("graphops", False), ("pyarrow", True)]
    assert all(len(r.times) == 2 and r.median > 0 and r.floor > 0 for r in rows)
    assert rows[1].speedup == 1.0 and rows[0].speedup == pytest.approx(rows[1].median / rows[0].median)
    assert rows[0].case == rows[1].case and f"{fmt}, 200 edges" in rows[0].case


def test_a_read_case_names_a_graph_of_the_file(tmp_path):
    path = tmp_path / "b.yaml"
    path.write_text(FILE.format(case="small", graph="h", format="csv"))
    with pytest.raises(go.ConfigError) as info:
        go.load_pipeline(path)
    assert str(info.value).endswith(textwrap.dedent("""\
        ==> At bench.reads.small
        ==> At key: graph
        =====> Unknown graph 'h'. Graphs of this file: g."""))
