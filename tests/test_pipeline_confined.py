"""A pipeline someone sent you writes only inside its output folder: every way out (``..``, an
absolute path, a symbolic link to a folder or a file, at output_dir itself) is refused by
``graphops validate``, before a run computes, and again as each file is written."""
from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

import graphops as go
from graphops import Algorithm, Params, hookimpl
from graphops.errors import ConfigError, OutputError, PipelineError
from graphops.host.manager import make_plugin_manager
from graphops.host.registry import Registry

TRUST = "or set 'allow_outside_output_dir: true' at the top of the file if you trust this pipeline to write there"


class _Link(Params):
    at: str = ""  # a symbolic link made here while the step runs (a folder there is moved aside first)
    to: str = ""


def _act(csr, params):
    if params.at:
        at = Path(params.at)
        if at.is_dir() and not at.is_symlink():
            os.rename(at, f"{at}-was")
        _link(at, params.to)
    return {"n": [csr.n_vertices]}


class _Acting:
    @staticmethod
    @hookimpl
    def graphops_register_algorithms():
        return [Algorithm(name="act", params=_Link, inputs=("graph",), outputs=("n",),
                          backends={"cpu": f"{__name__}:_act"})]  # this module as imported: no second copy


@pytest.fixture
def registry():
    pm = make_plugin_manager(autoload=False, plugins=["describe"])
    pm.register(_Acting(), name="act")
    return Registry(pm)


@pytest.fixture
def here(tmp_path):
    """The pipeline's folder, and a folder beside it that it must not write to."""
    (tmp_path / "p").mkdir()
    (tmp_path / "elsewhere").mkdir()
    return tmp_path.resolve() / "p", tmp_path.resolve() / "elsewhere"


def write(folder, output="x.csv", top="", link=None):
    """The pipeline file: one step writing ``output``; ``link``: (at, to), a link its step makes as it runs."""
    at, to = link or ("", "")
    path = folder / "p.yaml"
    path.write_text(f"version: 1\nname: p\n{top}\ngraphs: {{g: {{dataset: karate}}}}\nsteps:\n"
                    f"  - {{id: one, algorithm: act, inputs: {{graph: g}}, backend: cpu, output: {output},\n"
                    f"     params: {{at: {json.dumps(str(at))}, to: {json.dumps(str(to))}}}}}\n")
    return path


def refused(path, registry) -> str:
    with pytest.raises(ConfigError) as info:
        go.load_pipeline(path, registry)
    return str(info.value).replace(str(path), "p.yaml")


def _link(link, target):
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link)


# --- output_dir: inside the folder of the file --------------------------------------------------

@pytest.mark.parametrize("output_dir, why", [
    ("../elsewhere", "it climbs out of the folder with '..'"),
    ("out/../../elsewhere", "it climbs out of the folder with '..'"),
    ("ABSOLUTE", "it is an absolute path"),
])
def test_an_output_dir_outside_the_files_folder_is_refused(here, registry, output_dir, why):
    folder, elsewhere = here
    output_dir = output_dir.replace("ABSOLUTE", str(elsewhere))
    path = write(folder, top=f"output_dir: {output_dir}")
    message = ("p.yaml is invalid (1 error)\n==> At key: output_dir\n"
               f"=====> {output_dir!r} would put the outputs outside the folder of this file ({why}). Give a "
               f"folder inside it, {TRUST}")
    assert refused(path, registry) == message
    with pytest.raises(ConfigError):
        go.run_pipeline(path, registry=registry)
    assert list(elsewhere.iterdir()) == []
    go.run_pipeline(path, registry=registry, out=folder / "mine")  # --out: the user's own choice
    assert sorted(p.name for p in (folder / "mine").iterdir()) == ["p.summary.json", "x.csv"]


def test_allow_outside_output_dir_lets_the_file_write_elsewhere(here, registry):
    folder, elsewhere = here
    go.run_pipeline(write(folder, top="output_dir: ../elsewhere\nallow_outside_output_dir: true"), registry=registry)
    assert sorted(p.name for p in elsewhere.iterdir()) == ["p.summary.json", "x.csv"]


def test_an_output_dir_that_is_a_link_leading_out_is_refused_unless_given_as_out(here, registry):
    folder, elsewhere = here
    _link(folder / "out", elsewhere)
    path = write(folder)
    assert refused(path, registry) == (
        "p.yaml is invalid (1 error)\n==> At key: output_dir\n"
        f"=====> 'out' would put the outputs outside the folder of this file ({str(folder / 'out')!r} is a "
        f"symbolic link to {str(elsewhere)!r}). Remove the link, or give a folder that does not pass through it, "
        f"{TRUST}")
    go.run_pipeline(path, registry=registry, out=folder / "out")  # named by the user: followed
    assert sorted(p.name for p in elsewhere.iterdir()) == ["p.summary.json", "x.csv"]


# --- outputs: inside the output folder, through no link leading out -------------------------------

def test_an_output_through_a_linked_folder_leading_out_is_refused(here, registry):
    folder, elsewhere = here
    _link(folder / "out" / "sub", elsewhere)
    assert refused(write(folder, "sub/x.csv"), registry) == (
        "p.yaml is invalid (1 error)\n==> At steps[0] (id='one', algorithm='act')\n==> At key: output\n"
        f"=====> 'sub/x.csv' would be written outside output_dir ({str(folder / 'out' / 'sub')!r} is a symbolic "
        f"link to {str(elsewhere)!r}). Remove the link, or give a path that does not pass through it, {TRUST}")


def test_a_link_that_stays_inside_the_output_folder_is_followed(here, registry):
    folder, _ = here
    (folder / "out" / "real").mkdir(parents=True)
    _link(folder / "out" / "sub", folder / "out" / "real")
    go.run_pipeline(write(folder, "sub/x.csv"), registry=registry)
    assert (folder / "out" / "real" / "x.csv").is_file()


def test_an_output_file_that_is_a_link_leading_out_is_refused(here, registry):
    folder, elsewhere = here
    (elsewhere / "bashrc").write_text("keep me\n")
    _link(folder / "out" / "x.csv", elsewhere / "bashrc")
    assert refused(write(folder), registry) == (
        "p.yaml is invalid (1 error)\n==> At steps[0] (id='one', algorithm='act')\n==> At key: output\n"
        f"=====> 'x.csv' would be written outside output_dir ({str(folder / 'out' / 'x.csv')!r} is a symbolic "
        f"link to {str(elsewhere / 'bashrc')!r}). Remove the link, or give a path that does not pass through it, "
        f"{TRUST}")


def test_a_summary_that_is_a_link_leading_out_is_refused(here, registry):
    folder, elsewhere = here
    _link(folder / "out" / "p.summary.json", elsewhere / "victim")
    assert refused(write(folder), registry) == (
        "p.yaml is invalid (1 error)\n==> At key: output_dir\n"
        f"=====> The run summary 'p.summary.json' would be written outside output_dir "
        f"({str(folder / 'out' / 'p.summary.json')!r} is a symbolic link to {str(elsewhere / 'victim')!r}). "
        f"Remove the link, or give a path that does not pass through it, {TRUST}")


def test_dot_dot_after_a_link_is_resolved_by_name_not_through_the_link(here, registry):
    """``a/../x.csv`` is ``x.csv`` in the output folder, even where ``a`` is a link elsewhere (the system
    would resolve ``out/a/..`` to the link target's parent)."""
    folder, elsewhere = here
    (elsewhere / "deep").mkdir()
    _link(folder / "out" / "a", elsewhere / "deep")
    summary = go.run_pipeline(write(folder, "a/../x.csv"), registry=registry)
    assert summary.steps[0].output == str(folder / "out" / "x.csv") and (folder / "out" / "x.csv").is_file()
    assert sorted(p.name for p in elsewhere.rglob("*")) == ["deep"]


def test_the_rename_replaces_a_linked_file_and_never_writes_through_it(tmp_path):
    """Outputs are renamed into place: a link at the target is replaced, its target left alone, and the
    new file gets the mode of a new file (not the link target's)."""
    import pandas as pd

    from graphops.io.outputs import write_result

    victim = tmp_path / "bashrc"
    victim.write_text("keep me\n")
    os.chmod(victim, 0o600)
    os.symlink(victim, tmp_path / "x.csv")
    old = os.umask(0o022)
    try:
        write_result(pd.DataFrame({"a": [1]}), tmp_path / "x.csv")
    finally:
        os.umask(old)
    assert victim.read_text() == "keep me\n" and not (tmp_path / "x.csv").is_symlink()
    assert (tmp_path / "x.csv").read_text() == "a\n1\n"
    assert stat.S_IMODE((tmp_path / "x.csv").stat().st_mode) == 0o644


# --- at run time: links that appear after validation ------------------------------------------------

def _written(folder, elsewhere, path) -> str:
    return (f"would be outside the output folder {str(folder / 'out')!r} ({str(path)!r} is a symbolic link to "
            f"{str(elsewhere)!r}); nothing was written there. Remove the link, or give a path that does not pass "
            f"through it, or set allow_outside_output_dir: true in {folder / 'p.yaml'} if you trust it to write there")


def test_a_link_made_after_validation_is_refused_before_any_step_runs(here, registry, monkeypatch):
    folder, elsewhere = here
    loaded = go.load_pipeline(write(folder, "sub/x.csv"), registry)
    _link(folder / "out" / "sub", elsewhere)
    ran = []
    monkeypatch.setattr("graphops.pipeline.run._run_step", lambda *a: ran.append(a))
    with pytest.raises(OutputError) as info:
        go.run_pipeline(loaded)
    assert str(info.value) == "step 'one': output 'sub/x.csv' " + _written(folder, elsewhere, folder / "out" / "sub")
    assert ran == [] and list(elsewhere.iterdir()) == []


def test_a_link_made_while_a_step_runs_is_refused_as_its_output_is_written(here, registry):
    folder, elsewhere = here
    with pytest.raises(PipelineError) as info:
        go.run_pipeline(write(folder, "sub/x.csv", link=(folder / "out" / "sub", elsewhere)), registry=registry)
    assert str(info.value) == ("step 'one' (act) failed: OutputError: step 'one': output 'sub/x.csv' "
                               + _written(folder, elsewhere, folder / "out" / "sub"))
    assert list(elsewhere.iterdir()) == [] and (folder / "out" / "p.summary.json").is_file()


def test_a_summary_link_made_while_a_step_runs_is_not_written_through(here, registry):
    folder, elsewhere = here
    (elsewhere / "victim").write_text("keep me\n")
    with pytest.raises(OutputError) as info:
        go.run_pipeline(write(folder, link=(folder / "out" / "p.summary.json", elsewhere / "victim")),
                        registry=registry)
    assert str(info.value) == ("the run summary 'p.summary.json' "
                               + _written(folder, elsewhere / "victim", folder / "out" / "p.summary.json"))
    assert (elsewhere / "victim").read_text() == "keep me\n"


def test_an_output_dir_replaced_by_a_link_while_a_step_runs_is_refused(here, registry):
    folder, elsewhere = here
    with pytest.raises(OutputError) as info:
        go.run_pipeline(write(folder, link=(folder / "out", elsewhere)), registry=registry)
    assert str(info.value) == (
        f"output_dir 'out' would be outside the folder of {folder / 'p.yaml'} ({str(folder / 'out')!r} is a "
        f"symbolic link to {str(elsewhere)!r}); nothing was written there. Remove the link, or give a folder that "
        f"does not pass through it, or set allow_outside_output_dir: true in {folder / 'p.yaml'} if you trust it "
        f"to write there")
    assert list(elsewhere.iterdir()) == []


def test_a_picture_that_is_a_link_leading_out_is_refused(here):
    from graphops.io.plots import plot_problem

    if plot_problem():
        pytest.skip(plot_problem())
    folder, elsewhere = here
    _link(folder / "out" / "j.png", elsewhere / "victim.png")
    path = folder / "p.yaml"
    path.write_text("version: 1\ngraphs: {g: {dataset: karate}}\n"
                    "steps: [{id: j, algorithm: jaccard, inputs: {graph: g}, output: j.csv, plot: true}]\n")
    with pytest.raises(ConfigError) as info:
        go.load_pipeline(path)
    assert str(info.value).replace(str(path), "p.yaml") == (
        "p.yaml is invalid (1 error)\n==> At steps[0] (id='j', algorithm='jaccard')\n==> At key: plot\n"
        f"=====> The picture 'j.png' would be written outside output_dir ({str(folder / 'out' / 'j.png')!r} is a "
        f"symbolic link to {str(elsewhere / 'victim.png')!r}). Remove the link, or give a path that does not pass "
        f"through it, {TRUST}")


SEGMENTS = st.lists(st.sampled_from(["a", "in_dir", "link_in", "link_out", "new", "..", "."]), max_size=4)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(segments=SEGMENTS, name=st.sampled_from(["x.csv", "f.csv"]))
def test_an_output_is_written_inside_the_output_folder_or_refused(registry, segments, name):
    """Outputs of many shapes over a folder with links in and out: refused exactly when the path climbs
    out or passes a link leading out; else written inside, and nothing outside changes."""
    output = "/".join([*segments, name])
    with tempfile.TemporaryDirectory() as tmp:
        folder, elsewhere = Path(tmp).resolve() / "p", Path(tmp).resolve() / "elsewhere"
        (folder / "out" / "in_dir").mkdir(parents=True)
        (folder / "out" / "a").mkdir()
        elsewhere.mkdir()
        (elsewhere / "victim.csv").write_text("keep me\n")
        _link(folder / "out" / "link_in", folder / "out" / "in_dir")
        _link(folder / "out" / "link_out", elsewhere)
        _link(folder / "out" / "f.csv", elsewhere / "victim.csv")
        norm = os.path.normpath(output).split(os.sep)
        escapes = norm[0] in ("..", "link_out") or norm == ["f.csv"]
        event("refused" if escapes else "written")
        try:
            summary = go.run_pipeline(write(folder, json.dumps(output)), registry=registry)
        except ConfigError as exc:
            assert escapes, str(exc)
            return
        finally:
            assert sorted(p.name for p in elsewhere.iterdir()) == ["victim.csv"]
            assert (elsewhere / "victim.csv").read_text() == "keep me\n"
        assert not escapes
        written = Path(summary.steps[0].output)
        assert written.is_file() and Path(os.path.realpath(written)).is_relative_to(folder / "out")
