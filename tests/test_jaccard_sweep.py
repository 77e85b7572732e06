"""graphops jaccard-sweep: a --plot file that is not a sweep's JSON and a --graphs that names no graph
are one line each (InputError, exit 1), never a traceback, and nothing is run."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from graphops.cli import main

SWEEP = "version: 1\ngraphs:\n  karate: {dataset: karate}\nsteps: [{id: j, algorithm: jaccard, inputs: {graph: karate}}]\n"
WANT = "give the jaccard_sweep.json a sweep wrote"


def _err(capsys, argv) -> str:
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "This is a bug" not in err, err
    return err.rstrip("\n")


@pytest.mark.parametrize("content, why", [
    ("notjson\n", "not JSON (line 1, column 1: Expecting value)"),
    ('{"graphs": ', "not JSON (line 1, column 12: Expecting value)"),
    ("[1, 2]", "JSON, but not what graphops jaccard-sweep writes (a date and, per graph, its points, GPU time and "
               "chosen share)"),
    ('{"date": "2026-01-01", "graphs": {"g": {"points": [{"ms": 1}]}}}',
     "JSON, but not what graphops jaccard-sweep writes (a date and, per graph, its points, GPU time and chosen "
     "share)"),
])
def test_plot_of_a_file_that_is_no_sweep_is_one_line_naming_it(tmp_path, capsys, content, why):
    path = tmp_path / "notjson.txt"
    path.write_text(content)
    assert _err(capsys, ["jaccard-sweep", "--plot", str(path)]) == (
        f"InputError: graphops jaccard-sweep --plot {str(path)!r}: {why}; {WANT}")


def test_plot_of_a_binary_file_is_one_line(tmp_path, capsys):
    path = tmp_path / "x.json"
    path.write_bytes(b"\xff\xfe\x00")
    assert _err(capsys, ["jaccard-sweep", "--plot", str(path)]) == (
        f"InputError: graphops jaccard-sweep --plot {str(path)!r}: not a text file (invalid start byte at byte 0); "
        f"{WANT}")


@settings(max_examples=40, deadline=None)
@given(data=st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=3),
                         lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                             st.sampled_from(["date", "graphs", "backend", "points", "ms", "gpu_ms"]), inner,
                             max_size=3), max_leaves=8))
def test_plot_of_any_json_draws_or_is_one_line(data, tmp_path_factory):
    """Whatever JSON --plot is given: drawn, or an InputError naming the file, never a KeyError or TypeError."""
    import contextlib
    import io

    path = tmp_path_factory.mktemp("p") / "s.json"
    path.write_text(json.dumps(data))
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["jaccard-sweep", "--plot", str(path)])
    assert code == 0 or err.getvalue().startswith(f"InputError: graphops jaccard-sweep --plot {str(path)!r}: "), \
        err.getvalue()


@pytest.mark.parametrize("names", ["", ",,,", " , "])
def test_graphs_naming_no_graph_is_refused_before_any_graph_is_read(tmp_path, capsys, monkeypatch, names):
    """``--graphs ''`` and ``--graphs ',,,'`` ran every graph of the file."""
    monkeypatch.setattr("graphops_jaccard.cli.sweep", lambda *a, **k: pytest.fail("the sweep ran"))
    (tmp_path / "s.yaml").write_text(SWEEP)
    assert _err(capsys, ["jaccard-sweep", str(tmp_path / "s.yaml"), "--graphs", names, "--backend", "cpu",
                         "--out", str(tmp_path)]) == (
        f"InputError: graphops jaccard-sweep --graphs {names!r} names no graph; give names separated by commas "
        f"(--graphs rmat18,enron), or leave --graphs out to time every graph of the file")
