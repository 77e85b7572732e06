"""run_pipeline and load_pipeline check every argument before anything is read or run: a wrong type is
a TypeError (InputTypeError), a wrong value a ValueError (InputError), each naming the function and
the parameter; the value checked is the value used."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import graphops as go
from graphops.errors import InputError, InputTypeError

FILE = "version: 1\ngraphs: {g: {dataset: karate}}\nsteps: [{id: d, algorithm: describe, inputs: {graph: g}}]\n"


@pytest.fixture
def pipeline(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(FILE)
    return path


@pytest.fixture
def nothing_runs(monkeypatch):
    monkeypatch.setattr("graphops.pipeline.run._run_all", lambda *a, **k: pytest.fail("the pipeline ran"))
    monkeypatch.setattr("graphops.pipeline.load.read_config", lambda *a, **k: pytest.fail("the file was read"))


PIPELINE = ("run_pipeline: pipeline must be the path of a pipeline file (a str or os.PathLike, e.g. "
            "'configs/describe_example.yaml') or a LoadedPipeline (from load_pipeline); got {got}")


@pytest.mark.parametrize("value, got", [(None, "None (NoneType)"), (123, "123 (int)"), ({}, "{} (dict)"),
                                        (b"p.yaml", "b'p.yaml' (bytes)")])
def test_run_pipeline_names_a_pipeline_of_the_wrong_type(nothing_runs, value, got):
    with pytest.raises(InputTypeError) as info:
        go.run_pipeline(value)
    assert str(info.value) == PIPELINE.format(got=got)


def test_load_pipeline_names_its_path_and_registry(nothing_runs, pipeline):
    with pytest.raises(InputTypeError) as info:
        go.load_pipeline(None)
    assert str(info.value) == ("load_pipeline: path must be the path of a pipeline file (a str or os.PathLike, e.g. "
                               "'configs/describe_example.yaml'); got None (NoneType)")
    with pytest.raises(InputTypeError) as info:
        go.load_pipeline(pipeline, registry="x")
    assert str(info.value) == ("load_pipeline: registry must be a graphops Registry (graphops.host.registry.Registry), "
                               "or None for the installed plugins; got 'x' (str)")
    with pytest.raises(InputError) as info:
        go.load_pipeline(pipeline, out="")
    assert str(info.value) == ("load_pipeline: out='' is an empty path, which names nothing; give the path of a "
                               "folder (e.g. 'results'), or leave it out")


# parameter -> (a wrong value, the message's tail)
WRONG = {
    "out": (123, "run_pipeline: out must be the path of a folder (a str or os.PathLike, e.g. 'results') or None; "
                 "got 123 (int)"),
    "registry": ("x", "run_pipeline: registry must be a graphops Registry (graphops.host.registry.Registry), or None "
                      "for the installed plugins; got 'x' (str)"),
    "backend": (123, "run_pipeline: backend must be a backend's name (cpu, gpu, auto, ...), or None to keep each "
                     "step's own; got 123 (int)"),
    "keep_going": ("yes", "run_pipeline: keep_going must be True or False; got 'yes' (str)"),
    "cluster": (123, "run_pipeline: cluster must be a Dask scheduler's address (e.g. 'tcp://host:8786'), or None for "
                     "the file's cluster: section; got 123 (int)"),
    "cluster_timeout": (True, "run_pipeline: cluster_timeout must be a number of seconds (above 0, at most 3600), or "
                              "None for 10; got True (bool)"),
}


@pytest.mark.parametrize("name", sorted(WRONG))
def test_run_pipeline_names_each_argument_of_the_wrong_type(nothing_runs, pipeline, name):
    value, message = WRONG[name]
    with pytest.raises(InputTypeError) as info:
        go.run_pipeline(pipeline, **{name: value})
    assert str(info.value) == message


@pytest.mark.parametrize("name, value, message", [
    ("out", "", "run_pipeline: out='' is an empty path, which names nothing; give the path of a folder (e.g. "
                "'results'), or leave it out"),
    ("out", "o\0ut", "run_pipeline: out='o\\x00ut' holds a NUL character (\\0), which no file system takes in a "
                     "path; give a path without it"),
    ("backend", "", "run_pipeline: backend='' names nothing; give a backend's name (cpu, gpu, auto, ...), or None "
                    "to keep each step's own"),
    ("cluster", "", "run_pipeline: cluster='' names nothing; give a Dask scheduler's address (e.g. "
                    "'tcp://host:8786'), or None for the file's cluster: section"),
    ("cluster_timeout", "1", "run_pipeline: cluster_timeout must be a number of seconds (above 0, at most 3600), or "
                             "None for 10; got '1' (str)"),
])
def test_run_pipeline_refuses_empty_and_textual_values(nothing_runs, pipeline, name, value, message):
    """``out=''`` wrote into the current folder; ``backend=''`` meant no override; ``cluster_timeout='1'``
    passed the check and failed in the cluster code."""
    with pytest.raises((InputError, InputTypeError)) as info:
        go.run_pipeline(pipeline, **{name: value})
    assert str(info.value) == message


WRONG_VALUES = st.one_of(st.integers(), st.floats(allow_nan=False), st.booleans(), st.binary(max_size=3),
                         st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(),
                                                                              max_size=2))


@settings(max_examples=100, deadline=None)
@given(name=st.sampled_from(["pipeline", "out", "registry", "backend", "keep_going", "cluster", "cluster_timeout"]),
       value=WRONG_VALUES)
def test_a_wrong_argument_is_named_before_anything_is_read(name, value):
    """Any value of a type a parameter does not take is an InputTypeError naming ``run_pipeline`` and the
    parameter, before the file is read (the path here does not exist)."""
    takes = {"keep_going": (bool,), "cluster_timeout": (int, float)}.get(name, ())
    if isinstance(value, takes) and not (name == "cluster_timeout" and isinstance(value, bool)):
        return
    args = {"pipeline": "no-such-dir/p.yaml"}
    args[name] = value
    with pytest.raises(InputTypeError) as info:
        go.run_pipeline(**args)
    assert str(info.value).startswith(f"run_pipeline: {name} must be ")


def test_the_cluster_timeout_checked_is_the_one_used(pipeline, monkeypatch):
    """An int timeout reaches the cluster as the file key's model reads it (a float), and so on."""
    seen = {}

    def connect(**settings):
        seen.update(settings)
        raise go.errors.ClusterUnavailableError("not here")

    (pipeline.parent / "q.yaml").write_text(FILE.replace("describe, inputs: {graph: g}",
                                                         "jaccard, inputs: {graph: g}"))
    monkeypatch.setattr("graphops.engine.cluster.connect", connect)
    with pytest.raises(go.PipelineError):
        go.run_pipeline(pipeline.parent / "q.yaml", backend="cpu", cluster="tcp://127.0.0.1:1", cluster_timeout=2)
    assert seen == {"address": "tcp://127.0.0.1:1", "timeout": 2.0} and type(seen["timeout"]) is float


def test_a_loaded_pipeline_is_taken_as_the_pipeline(pipeline, tmp_path):
    summary = go.run_pipeline(go.load_pipeline(pipeline), out=Path(tmp_path) / "o", backend="cpu")
    assert summary.status == "ok"
