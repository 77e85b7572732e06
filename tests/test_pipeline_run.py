"""Running pipelines: step statuses, the summary always written, outputs checked before any
computing, outputs kept inside output_dir, ordinary file modes."""
from __future__ import annotations

import json
import os
import stat
import textwrap

import pytest

import graphops as go
from graphops import Algorithm, Params, hookimpl
from graphops.errors import ConfigError, Interrupted, OutputError, PipelineError
from graphops.host.manager import make_plugin_manager
from graphops.host.registry import Registry


def _fail(csr, params):
    if params.mode == "value":
        raise go.errors.InputError("the input is bad in a way only the data shows")
    if params.mode == "interrupt":
        raise KeyboardInterrupt
    return {"n": [csr.n_vertices]}


class _Mode(Params):
    mode: str = "ok"


class _Failing:
    @staticmethod
    @hookimpl
    def graphops_register_algorithms():
        return [Algorithm(name="flaky", params=_Mode, inputs=("graph",), outputs=("n",),
                          backends={"cpu": "tests.test_pipeline_run:_fail"})]


@pytest.fixture
def registry():
    pm = make_plugin_manager(autoload=False, plugins=["describe"])
    pm.register(_Failing(), name="flaky")
    return Registry(pm)


def write(folder, text):
    path = folder / "p.yaml"
    path.write_text(textwrap.dedent(text))
    return path


STEPS = """\
version: 1
name: p
graphs: {g: {dataset: karate}}
steps:
  - {id: one, algorithm: describe, inputs: {graph: g}, backend: cpu, output: one.csv}
  - {id: two, algorithm: flaky, inputs: {graph: g}, params: {mode: MODE}, output: two.csv}
  - {id: three, algorithm: describe, inputs: {graph: g}, backend: cpu, output: three.csv}
"""


def _summary(folder):
    return json.loads((folder / "out" / "p.summary.json").read_text())


def test_a_failed_step_stops_the_run_and_the_summary_says_so(tmp_path, registry):
    path = write(tmp_path, STEPS.replace("MODE", "value"))
    with pytest.raises(PipelineError) as info:
        go.run_pipeline(path, registry=registry)
    assert str(info.value) == ("step 'two' (flaky) failed: InputError: the input is bad in a way only the "
                               "data shows")
    summary = _summary(tmp_path)
    assert summary["status"] == "failed"
    assert [s["status"] for s in summary["steps"]] == ["ok", "failed", "not run"]
    assert summary["steps"][1]["error"].startswith("InputError: the input is bad")
    assert summary["steps"][0]["output"] == str(tmp_path / "out" / "one.csv")
    assert (tmp_path / "out" / "one.csv").exists() and not (tmp_path / "out" / "two.csv").exists()
    assert info.value.summary.summary_path == str(tmp_path / "out" / "p.summary.json")


def test_keep_going_runs_the_steps_after_a_failure(tmp_path, registry):
    path = write(tmp_path, STEPS.replace("MODE", "value"))
    with pytest.raises(PipelineError):
        go.run_pipeline(path, registry=registry, keep_going=True)
    # step three is step one again (same algorithm, parameters, input): read from the run cache
    assert [s["status"] for s in _summary(tmp_path)["steps"]] == ["ok", "failed", "cached"]


def test_an_interrupted_step_is_recorded_and_re_raised(tmp_path, registry):
    path = write(tmp_path, STEPS.replace("MODE", "interrupt"))
    with pytest.raises(KeyboardInterrupt) as info:
        go.run_pipeline(path, registry=registry)
    assert isinstance(info.value, Interrupted)
    summary = _summary(tmp_path)
    assert summary["status"] == "interrupted"
    assert [s["status"] for s in summary["steps"]] == ["ok", "interrupted", "not run"]


def test_ok_run(tmp_path, registry):
    summary = go.run_pipeline(write(tmp_path, STEPS.replace("MODE", "ok")), registry=registry)
    assert summary.status == "ok" and [s.status for s in summary.steps] == ["ok", "ok", "cached"]
    again = go.run_pipeline(write(tmp_path, STEPS.replace("MODE", "ok")), registry=registry, cache=False)
    assert [s.status for s in again.steps] == ["ok"] * 3


ONE = """\
version: 1
name: p
graphs: {g: {dataset: karate}}
steps:
  - {id: one, algorithm: describe, inputs: {graph: g}, backend: cpu, output: OUTPUT}
"""


@pytest.mark.parametrize("output, why", [
    ("../../x.csv", "it climbs out of the folder with '..'"),
    ("/tmp/x.csv", "it is an absolute path"),
    ("a/../../x.csv", "it climbs out of the folder with '..'"),
])
def test_outputs_outside_output_dir_are_refused(tmp_path, output, why):
    path = write(tmp_path, ONE.replace("OUTPUT", output))
    with pytest.raises(ConfigError) as info:
        go.load_pipeline(path)
    assert (f"=====> {output!r} would be written outside output_dir ({why}). Give a path inside it, or set "
            f"'allow_outside_output_dir: true' at the top of the file") in str(info.value)


def test_allow_outside_output_dir_opts_out(tmp_path):
    text = ONE.replace("OUTPUT", "../elsewhere/x.csv").replace("name: p\n", "name: p\nallow_outside_output_dir: true\n")
    go.run_pipeline(write(tmp_path, text))
    assert (tmp_path / "elsewhere" / "x.csv").is_file()


def test_output_folder_under_a_file_is_found_before_computing(tmp_path, registry, monkeypatch):
    (tmp_path / "afile").write_text("")
    ran = []
    monkeypatch.setattr("graphops.pipeline.run._run_step", lambda *a: ran.append(a))
    with pytest.raises(OutputError) as info:
        go.run_pipeline(write(tmp_path, STEPS.replace("MODE", "ok")), out=tmp_path / "afile" / "out",
                        registry=registry)
    assert str(info.value) == (f"cannot write outputs to {str(tmp_path / 'afile' / 'out')!r}: "
                               f"{str(tmp_path / 'afile')!r} is a file, not a folder. Choose another folder "
                               f"(graphops run --out DIR, or output_dir: in the pipeline file)")
    assert ran == []


def test_read_only_and_unwritable_folders_are_named(tmp_path, monkeypatch):
    from graphops.io import outputs

    monkeypatch.setattr(outputs, "_read_only_fs", lambda p: True)
    assert outputs.folder_problem(tmp_path / "x") == f"{str(tmp_path)!r} is on a read-only file system"
    monkeypatch.setattr(outputs, "_read_only_fs", lambda p: False)
    monkeypatch.setattr(outputs.os, "access", lambda p, mode: False)
    assert outputs.folder_problem(tmp_path / "x") == f"no permission to write in {str(tmp_path)!r}"


def test_validate_reports_an_unwritable_output_dir(tmp_path):
    (tmp_path / "afile").write_text("")
    path = write(tmp_path, ONE.replace("OUTPUT", "x.csv").replace("name: p\n", "name: p\noutput_dir: afile/out\n"))
    with pytest.raises(ConfigError) as info:
        go.load_pipeline(path)
    assert (f"==> At key: output_dir\n=====> Cannot write outputs there: {str(tmp_path / 'afile')!r} is a "
            f"file, not a folder") in str(info.value)


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_outputs_get_the_users_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        go.run_pipeline(write(tmp_path, ONE.replace("OUTPUT", "x.csv")))
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "out" / "x.csv").stat().st_mode) == mode
    assert stat.S_IMODE((tmp_path / "out" / "p.summary.json").stat().st_mode) == mode


def test_a_replaced_output_keeps_its_mode(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x.csv").write_text("old")
    os.chmod(tmp_path / "out" / "x.csv", 0o640)
    go.run_pipeline(write(tmp_path, ONE.replace("OUTPUT", "x.csv")))
    assert stat.S_IMODE((tmp_path / "out" / "x.csv").stat().st_mode) == 0o640
    assert (tmp_path / "out" / "x.csv").read_text().startswith("n_vertices")


def test_backend_names_are_case_insensitive_in_yaml(tmp_path):
    text = ONE.replace("OUTPUT", "x.csv").replace("backend: cpu", "backend: CPU").replace("name: p\n", "name: p\nbackend: CPU\n")
    assert go.run_pipeline(write(tmp_path, text)).steps[0].backend == "cpu"


def test_the_top_level_device_key_is_now_backend(tmp_path):
    """device: at the top of a file (the steps' default backend) is read as backend:, with a
    deprecation warning naming the new key; both at once is an error naming them."""
    from graphops.errors import ConfigError

    base = ONE.replace("OUTPUT", "x.csv").replace("    backend: cpu\n", "")
    with pytest.warns(DeprecationWarning, match="the pipeline key device: is now backend:"):
        loaded = go.load_pipeline(write(tmp_path, base.replace("name: p\n", "name: p\ndevice: cpu\n")))
    assert loaded.model.backend == "cpu"
    with pytest.raises(ConfigError, match=r"the file gives both backend: and device: \(its former name\); remove device:"):
        go.load_pipeline(write(tmp_path, base.replace("name: p\n", "name: p\ndevice: cpu\nbackend: cpu\n")))


def test_validate_catches_a_directed_graph_for_an_undirected_algorithm(tmp_path):
    (tmp_path / "g.txt").write_text("1 2\n2 3\n")
    path = write(tmp_path, """\
        version: 1
        graphs: {g: {path: g.txt, directed: true}, u: {path: g.txt}}
        steps:
          - {id: j, algorithm: jaccard, inputs: {graph: g}}
          - {id: w, algorithm: jaccard, inputs: {graph: u}, params: {use_weight: true}}
          - {id: ok, algorithm: jaccard, inputs: {graph: g}, params: {symmetrize: true}}
        """)
    with pytest.raises(ConfigError) as info:
        go.load_pipeline(path)
    text = str(info.value)
    assert text.count("\n==> At key: inputs\n") == 2 and "steps[2]" not in text
    assert "=====> jaccard is defined on undirected graphs and this graph is directed. Pass symmetrize=True" in text
    assert "=====> use_weight=True but the graph has no edge weights" in text


def test_keep_going_reports_every_failed_step(tmp_path, registry, capsys, monkeypatch):
    text = STEPS.replace("MODE", "value") + "  - {id: four, algorithm: flaky, inputs: {graph: g}, params: {mode: value}}\n"
    with pytest.raises(PipelineError) as info:
        go.run_pipeline(write(tmp_path, text), registry=registry, keep_going=True)
    assert info.value.failed == ("two", "four") and str(info.value) == (
        "2 steps failed:\n  step 'two' (flaky): InputError: the input is bad in a way only the data shows\n"
        "  step 'four' (flaky): InputError: the input is bad in a way only the data shows")
    from graphops.cli import main

    monkeypatch.setattr("graphops.cli.command._registry_or_none", lambda: registry)
    monkeypatch.setattr("graphops.pipeline.load.get_registry", lambda pm=None: registry)
    assert main(["run", str(tmp_path / "p.yaml"), "--keep-going"]) == 1
    err = capsys.readouterr().err
    assert "step 'two' (flaky): InputError" in err and "step 'four' (flaky): InputError" in err


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


CLUSTER_STEPS = """\
version: 1
name: p
graphs: {g: {dataset: karate}}
steps:
  - {id: one, algorithm: describe, inputs: {graph: g}, backend: cpu}
"""


def test_a_cluster_is_not_connected_to_when_no_step_splits_its_work(tmp_path):
    import time

    t0 = time.perf_counter()
    summary = go.run_pipeline(write(tmp_path, CLUSTER_STEPS), cluster=f"tcp://127.0.0.1:{_closed_port()}")
    assert time.perf_counter() - t0 < 5 and summary.steps[0].status == "ok"
    assert _summary(tmp_path)["cluster"].startswith("not used: no step splits its work (asked for tcp://127.0.0.1:")


def test_an_unreachable_scheduler_is_one_line_after_the_timeout_and_the_summary_is_written(tmp_path, capsys):
    import time

    from graphops.cli import main

    pytest.importorskip("distributed")
    address = f"tcp://127.0.0.1:{_closed_port()}"
    path = write(tmp_path, CLUSTER_STEPS + "  - {id: two, algorithm: jaccard, inputs: {graph: g}}\n")
    t0 = time.perf_counter()
    assert main(["run", str(path), "--cluster", address, "--cluster-timeout", "1"]) == 1
    assert time.perf_counter() - t0 < 8
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"PipelineError: ClusterUnavailableError: cannot reach a Dask scheduler at {address!r} "
                          f"within 1 s (")
    assert err.rstrip().endswith(f"; run summary: {tmp_path / 'out' / 'p.summary.json'}")
    summary = _summary(tmp_path)
    assert summary["status"] == "failed" and summary["error"].startswith("ClusterUnavailableError: cannot reach")
    assert [s["status"] for s in summary["steps"]] == ["not run", "not run"]


def test_the_default_connect_timeout_is_at_most_ten_seconds():
    import inspect

    from graphops.engine.cluster import CONNECT_TIMEOUT, connect

    assert CONNECT_TIMEOUT <= 10 and inspect.signature(connect).parameters["timeout"].default is None


def test_the_command_line_says_a_key_is_deprecated(tmp_path, capsys):
    from graphops.cli import main

    text = ONE.replace("OUTPUT", "x.csv").replace("name: p\n", "name: p\ndevice: cpu\n")
    assert main(["validate", str(write(tmp_path, text))]) == 0
    err = capsys.readouterr().err
    assert "graphops: deprecated: the pipeline key device: is now backend:" in err and "\n" == err[-1:]


def test_unknown_ids_in_a_pairs_file_name_the_graph_and_its_file(tmp_path):
    """A step's pairs read from a file name a vertex the graph lacks: the message names the pipeline's
    graph and the file, not only "the pairs graph"."""
    (tmp_path / "e.csv").write_text("0,1\n1,2\n2,0\n")
    (tmp_path / "p.csv").write_text("0,1\n1,500\n500,0\n")
    (tmp_path / "j.yaml").write_text("version: 1\ngraphs: {g: {path: e.csv}, pairs: {path: p.csv}}\n"
                                     "steps: [{id: j, algorithm: jaccard, inputs: {graph: g, pairs: pairs}, "
                                     "backend: cpu}]\n")
    with pytest.raises(go.PipelineError, match=r"the pairs graph 'pairs' \(.*p\.csv\) names 1 vertex id\(s\) that are "
                                               r"not in the graph, in 1 of its rows \(e\.g\. 500\)"):
        go.run_pipeline(tmp_path / "j.yaml", out=tmp_path / "o")
