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


# --- a file trusted to write outside: said first, and never past a folder given to the run ----------

def _trusting(folder, output="../../victim/notes.csv"):
    """The file someone sent: trusted by its own flag to write a file two folders up."""
    return write(folder, output, top="allow_outside_output_dir: true")


@pytest.fixture
def victim(here):
    folder, elsewhere = here
    (elsewhere.parent / "victim").mkdir()
    notes = elsewhere.parent / "victim" / "notes.csv"
    notes.write_text("precious\n")
    return notes


def test_a_folder_given_to_the_run_holds_every_output_whatever_the_file_says(here, registry, victim, caplog):
    folder, elsewhere = here
    path = _trusting(folder)
    with pytest.raises(ConfigError) as info:
        go.run_pipeline(path, registry=registry, out=elsewhere / "inner")
    assert str(info.value).replace(str(path), "p.yaml") == (
        "p.yaml is invalid (1 error)\n==> At steps[0] (id='one', algorithm='act')\n==> At key: output\n"
        "=====> '../../victim/notes.csv' would be written outside the output folder (it climbs out of the folder "
        "with '..'). Give a path inside it: the folder given to the run (--out) holds every output, whatever the "
        "file says")
    assert victim.read_text() == "precious\n"
    with pytest.raises(OutputError) as info:  # validated for its own folder, then run with one of the caller's
        go.run_pipeline(go.load_pipeline(path, registry), out=elsewhere / "inner")
    assert str(info.value) == (
        f"step 'one': output '../../victim/notes.csv' would be outside the output folder "
        f"{str(elsewhere / 'inner')!r} (it climbs out of the folder with '..'); nothing was written there. Give a "
        f"path inside it, the folder given to the run (--out) holds every output, whatever the file says")
    assert victim.read_text() == "precious\n"


def test_the_flag_that_does_not_apply_is_said_in_the_log_and_the_summary(here, registry, caplog):
    folder, elsewhere = here
    summary = go.run_pipeline(_trusting(folder, "x.csv"), registry=registry, out=elsewhere)
    note = (f"{folder / 'p.yaml'} sets allow_outside_output_dir: true, which does not apply to this run: every "
            f"output stays inside {str(elsewhere)!r}, the folder given to the run (--out)")
    assert summary.warnings == [note] and note in caplog.text
    assert json.loads((elsewhere / "p.summary.json").read_text())["warnings"] == [note]


def test_a_trusted_file_is_run_after_a_warning_naming_every_path_it_writes_outside(here, registry, victim, caplog):
    from graphops.pipeline.confine import trust_note

    folder, _ = here
    path = _trusting(folder)
    note = (f"{path} sets allow_outside_output_dir: true and will write 1 file(s) outside its output folder "
            f"{str(folder / 'out')!r}: step 'one': output {str(victim)!r}. Run it only if you trust it; graphops "
            f"run --out DIR keeps every output inside DIR")
    assert trust_note(go.load_pipeline(path, registry)) == note
    caplog.set_level("WARNING", logger="graphops")
    summary = go.run_pipeline(path, registry=registry)  # the documented contract: honoured, and said first
    assert victim.read_text() != "precious\n" and summary.warnings == [note]
    assert [r.getMessage() for r in caplog.records if r.name == "graphops"] == [note]


def test_a_trusted_output_dir_outside_the_files_folder_names_every_file_there(here, registry):
    from graphops.pipeline.confine import trust_note

    folder, elsewhere = here
    path = write(folder, "x.csv", top="output_dir: ../elsewhere\nallow_outside_output_dir: true")
    assert trust_note(go.load_pipeline(path, registry)) == (
        f"{path} sets allow_outside_output_dir: true and will write 2 file(s) outside the folder of the file: "
        f"step 'one': output {str(elsewhere / 'x.csv')!r}; the run summary {str(elsewhere / 'p.summary.json')!r}. "
        f"Run it only if you trust it; graphops run --out DIR keeps every output inside DIR")


def test_a_trusted_file_writing_only_inside_gets_no_warning(here, registry, caplog):
    from graphops.pipeline.confine import trust_note

    folder, _ = here
    path = _trusting(folder, "x.csv")
    assert trust_note(go.load_pipeline(path, registry)) is None
    assert go.run_pipeline(path, registry=registry).warnings == []


# --- one file by two names: compared by real path -------------------------------------------------

def test_an_input_named_through_a_link_is_not_overwritten(tmp_path, registry):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "e.csv").write_text("0,1\n1,2\n")
    os.symlink("e.csv", tmp_path / "data" / "alias.csv")
    path = tmp_path / "p.yaml"
    path.write_text("version: 1\noutput_dir: data\ngraphs: {g: {path: data/alias.csv}}\n"
                    "steps: [{id: s1, algorithm: act, inputs: {graph: g}, backend: cpu, output: e.csv}]\n")
    data = tmp_path.resolve() / "data"
    assert refused(path, registry) == (
        "p.yaml is invalid (1 error)\n==> At steps[0] (id='s1', algorithm='act')\n==> At key: output\n"
        f"=====> 'e.csv' would overwrite the input of graph 'g' ({str(tmp_path / 'data' / 'alias.csv')!r} and "
        f"{str(data / 'e.csv')!r} are both {str(data / 'e.csv')!r}); choose another path")
    assert (tmp_path / "data" / "e.csv").read_text() == "0,1\n1,2\n"


def test_an_input_linked_after_validation_is_not_overwritten_at_run_time(tmp_path, registry, monkeypatch):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "e.csv").write_text("0,1\n1,2\n")
    path = tmp_path / "p.yaml"
    path.write_text("version: 1\ngraphs: {g: {path: data/e.csv}}\n"
                    "steps: [{id: s1, algorithm: act, inputs: {graph: g}, backend: cpu, output: x.csv}]\n")
    loaded = go.load_pipeline(path, registry)
    _link(tmp_path / "out" / "x.csv", tmp_path / "data" / "e.csv")  # a link inside the output folder... to the input
    os.replace(tmp_path / "data" / "e.csv", tmp_path / "out" / "e.csv")
    os.symlink(tmp_path / "out" / "e.csv", tmp_path / "data" / "e.csv")  # the input now lives in the output folder
    os.unlink(tmp_path / "out" / "x.csv")
    os.symlink("e.csv", tmp_path / "out" / "x.csv")
    ran = []
    monkeypatch.setattr("graphops.pipeline.run._run_step", lambda *a: ran.append(a))
    with pytest.raises(OutputError) as info:
        go.run_pipeline(loaded)
    real = str((tmp_path / "out" / "e.csv").resolve())
    assert str(info.value) == (
        f"step 's1': output 'x.csv' would overwrite the input of graph 'g' ({str(tmp_path / 'data' / 'e.csv')!r} and "
        f"{str(tmp_path / 'out' / 'x.csv')!r} are both {real!r}); nothing was written there. Choose another path")
    assert ran == [] and (tmp_path / "out" / "e.csv").read_text() == "0,1\n1,2\n"


def test_two_outputs_that_are_one_file_through_a_link_are_refused(here, registry):
    folder, _ = here
    (folder / "out" / "a").mkdir(parents=True)
    os.symlink("a", folder / "out" / "b")
    path = folder / "p.yaml"
    path.write_text("version: 1\ngraphs: {g: {dataset: karate}}\nsteps:\n"
                    "  - {id: s1, algorithm: act, inputs: {graph: g}, backend: cpu, output: a/x.csv}\n"
                    "  - {id: s2, algorithm: act, inputs: {graph: g}, backend: cpu, output: b/x.csv}\n")
    out = folder / "out"
    assert refused(path, registry) == (
        "p.yaml is invalid (1 error)\n==> At steps[1] (id='s2', algorithm='act')\n==> At key: output\n"
        f"=====> 'b/x.csv' would overwrite the output of step 's1' ({str(out / 'a' / 'x.csv')!r} and "
        f"{str(out / 'b' / 'x.csv')!r} are both {str(out / 'a' / 'x.csv')!r}); choose another path")


def test_two_outputs_made_one_file_by_a_link_during_the_run_are_refused(here, registry):
    """Step one makes ``out/b`` a link to ``out/a`` as it runs: step two's output would replace step one's."""
    folder, _ = here
    (folder / "out" / "a").mkdir(parents=True)
    path = folder / "p.yaml"
    path.write_text("version: 1\ngraphs: {g: {dataset: karate}}\nsteps:\n"
                    f"  - {{id: s1, algorithm: act, inputs: {{graph: g}}, backend: cpu, output: a/x.csv,\n"
                    f"     params: {{at: {json.dumps(str(folder / 'out' / 'b'))}, to: a}}}}\n"
                    "  - {id: s2, algorithm: act, inputs: {graph: g}, backend: cpu, output: b/x.csv}\n")
    with pytest.raises(PipelineError) as info:
        go.run_pipeline(path, registry=registry)
    out = folder / "out"
    assert str(info.value) == (
        f"step 's2' (act) failed: OutputError: step 's2': output 'b/x.csv' would overwrite the output of step 's1' "
        f"({str(out / 'a' / 'x.csv')!r} and {str(out / 'b' / 'x.csv')!r} are both {str(out / 'a' / 'x.csv')!r}); "
        f"nothing was written there. Choose another path")
    assert info.value.summary.steps[0].status == "ok"


# --- a file that cannot be written there: found before any step computes ----------------------------

@pytest.mark.parametrize("output, made, why", [
    ("x" * 252 + ".csv", None, "the name '{cut}' is 256 bytes (its temporary twin .NAME.XXXXXXXX.tmp: 270); this "
                               "file system takes names of at most {most} bytes: give a shorter name"),
    ("x" * 238 + ".csv", None, "the name '{cut}' is 242 bytes (its temporary twin .NAME.XXXXXXXX.tmp: 256); this "
                               "file system takes names of at most {most} bytes: give a shorter name"),
    ("d.csv", "d.csv", "{out}/d.csv' is a folder; give a file name"),
    ("sub/" + "y" * 300 + "/x.csv", None, "the name '{cut}' is 300 bytes; this file system takes names of at most "
                                          "{most} bytes: give a shorter name"),
])
def test_an_output_that_cannot_be_written_there_is_refused_by_validate_and_before_any_step(
        here, registry, monkeypatch, output, made, why):
    folder, _ = here
    out = folder / "out"
    if made:
        (out / made).mkdir(parents=True)
    most = os.pathconf(folder, "PC_NAME_MAX")
    long = max(output.split("/"), key=len)
    cut = repr(long)[1:40] + "..." + repr(long)[-20:-1]
    problem = why.format(cut=cut, most=most, out=f"'{out}")
    path = write(folder, output)
    assert refused(path, registry) == ("p.yaml is invalid (1 error)\n==> At steps[0] (id='one', algorithm='act')\n"
                                       f"==> At key: output\n=====> Cannot write the output there: {problem}")
    monkeypatch.setattr("graphops.pipeline.meaning.write_problem", lambda *a: None)  # the run checks on its own
    ran = []
    monkeypatch.setattr("graphops.pipeline.run._run_step", lambda *a: ran.append(a))
    with pytest.raises(OutputError) as info:
        go.run_pipeline(path, registry=registry)
    assert str(info.value) == f"step 'one': output: cannot write it there: {problem}; nothing was run"
    assert ran == []


# --- a partitioned graph's files: each one, and those its pattern or folder would take later ------

@pytest.mark.parametrize("source, output, taken", [
    ('"ok/*.csv"', "e0.csv", "the input of graph 'big'; choose"),  # a file the pattern reads now
    ('"ok/*.csv"', "scores.csv", "the input of graph 'big' ('{ok}/*.csv' takes it: a later run would read it as edges)"),
    ("ok, format: csv", "e1.csv", "the input of graph 'big'; choose"),  # a folder's file
    ("ok, format: csv", "more.csv", "the input of graph 'big' ('{ok}' takes it: a later run would read it as edges)"),
    # the workers write a .parquet result as a folder of part.<i>.parquet files: the pattern takes those
    ('"ok/*/*.parquet"', "j.parquet", "the input of graph 'big' ('{ok}/*/*.parquet' takes it: a later run would read "
                                      "it as edges)"),
])
def test_an_output_among_a_partitioned_graphs_files_is_refused(tmp_path, source, output, taken):
    """Written over one of the edge files a pattern or folder reads, a run lost its input; named
    like them, its output would be read as edges the next time."""
    (tmp_path / "ok").mkdir()
    for i in range(2):
        (tmp_path / "ok" / f"e{i}.csv").write_text("src,dst\n0,1\n1,2\n")
    path = tmp_path / "p.yaml"
    path.write_text(f"version: 1\noutput_dir: ok\ngraphs: {{big: {{path: {source}, partitioned: true}}}}\n"
                    f"steps: [{{id: s, algorithm: jaccard, inputs: {{graph: big}}, backend: cpu, output: {output}}}]\n")
    said = refused(path, None)
    assert f"=====> '{output}' would overwrite " + taken.format(ok=str(tmp_path.resolve() / "ok")) in said, said


def test_a_parquet_file_output_of_a_graph_held_here_is_not_taken_for_a_folder(tmp_path):
    """A step on a graph read whole writes one .parquet file, which a partitioned graph's pattern
    of files in subfolders (ok/*/*.parquet) never reads: allowed (only a partitioned step's .parquet
    output is a folder of part files)."""
    import pandas as pd

    (tmp_path / "ok" / "a").mkdir(parents=True)
    pd.DataFrame({"src": [0, 1], "dst": [1, 2]}).to_parquet(tmp_path / "ok" / "a" / "e.parquet")
    (tmp_path / "small.csv").write_text("0,1\n1,2\n")
    path = tmp_path / "p.yaml"
    path.write_text('version: 1\noutput_dir: ok\ngraphs: {big: {path: "ok/*/*.parquet", partitioned: true}, '
                    "small: {path: small.csv}}\n"
                    "steps: [{id: s, algorithm: jaccard, inputs: {graph: small}, backend: cpu, output: j.parquet}]\n")
    go.load_pipeline(path)


def test_an_output_beside_a_pattern_but_not_taken_by_it_is_written(tmp_path):
    """A pattern's * stays within its folder, and another suffix is not its: those outputs are fine."""
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "e0.csv").write_text("src,dst\n0,1\n")
    path = tmp_path / "p.yaml"
    path.write_text('version: 1\noutput_dir: ok\ngraphs: {big: {path: "ok/*.csv", partitioned: true}}\n'
                    "steps: [{id: s, algorithm: jaccard, inputs: {graph: big}, backend: cpu, output: sub/j.csv},\n"
                    "        {id: t, algorithm: jaccard, inputs: {graph: big}, backend: cpu, output: j.parquet}]\n")
    go.load_pipeline(path)


# --- a partitioned step's .parquet result: a folder that takes the place of what is there ---------

@pytest.mark.parametrize("graphs, output", [
    ('{big: {path: "x.parquet/sub/*.csv", partitioned: true}}', "x.parquet"),  # the pattern's files inside it
    ("{big: {path: x.parquet/sub, format: csv, partitioned: true}}", "x.parquet"),  # the folder inside it
    ('{big: {path: "e/*.csv", partitioned: true}, small: {path: x.parquet/small.csv}}', "x.parquet"),  # a whole file
])
def test_a_folder_result_over_the_runs_own_input_files_is_refused(tmp_path, graphs, output):
    """A partitioned step's .parquet result is a folder that replaces whatever is at its path: a run
    whose inputs lie inside that folder would remove them. Refused before any work, the files kept."""
    (tmp_path / "x.parquet" / "sub").mkdir(parents=True)
    (tmp_path / "e").mkdir()
    for folder in ("x.parquet/sub", "e"):
        (tmp_path / folder / "a.csv").write_text("src,dst\n0,1\n1,2\n")
    (tmp_path / "x.parquet" / "small.csv").write_text("0,1\n1,2\n")
    path = tmp_path / "p.yaml"
    path.write_text(f"version: 1\noutput_dir: .\ncluster: {{kind: local, workers: 1}}\ngraphs: {graphs}\n"
                    f"steps: [{{id: s, algorithm: jaccard, inputs: {{graph: big}}, backend: cpu, output: {output}}}]\n")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    said = refused(path, None)
    assert "lies inside it: writing the result there would remove it" in said, said
    with pytest.raises((ConfigError, OutputError)):
        go.run_pipeline(path)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_a_folder_at_a_folder_results_path_holding_other_files_is_refused(tmp_path):
    """An earlier result (part files only) is replaced; a folder holding anything else (a user's note,
    a subfolder) is named, not removed."""
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "a.csv").write_text("src,dst\n0,1\n1,2\n")
    out = tmp_path / "out" / "s.parquet"
    out.mkdir(parents=True)
    (out / "mine.txt").write_text("keep me")
    path = tmp_path / "p.yaml"
    path.write_text('version: 1\noutput_dir: out\ncluster: {kind: local, workers: 1}\n'
                    'graphs: {big: {path: "e/*.csv", partitioned: true}}\n'
                    "steps: [{id: s, algorithm: jaccard, inputs: {graph: big}, backend: cpu, output: s.parquet}]\n")
    said = refused(path, None)
    assert "is a folder holding more than an earlier result's part files ('mine.txt')" in said, said
    assert (out / "mine.txt").read_text() == "keep me"


_ENTRY = st.one_of(st.integers(0, 12).map(lambda i: ("file", f"part.{i}.parquet")),
                   st.sampled_from([("file", "_metadata"), ("file", "_common_metadata"), ("file", "notes.txt"),
                                    ("file", "part.x.parquet"), ("file", "part.1.parquet.bak"), ("dir", "sub"),
                                    ("dir", "part.3.parquet"), ("link", "part.4.parquet"), ("file", ".hidden")]))


@given(entries=st.lists(_ENTRY, max_size=6, unique_by=lambda e: e[1]))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_dask_result_replaces_only_an_earlier_results_part_files(tmp_path_factory, entries):
    """Whatever stands in the folder at a Dask frame's .parquet path: written over only when it holds
    nothing but part.<i>.parquet files (and parquet's metadata files) as plain files; else refused
    with the entries named, and every entry still there."""
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    from graphops.io.outputs import write_result

    folder = tmp_path_factory.mktemp("out")
    target = folder / "s.parquet"
    target.mkdir()
    (folder / "elsewhere").write_text("x")
    for kind, name in entries:
        if kind == "file":
            (target / name).write_text("mine")
        elif kind == "dir":
            (target / name).mkdir()
        else:
            (target / name).symlink_to(folder / "elsewhere")
    foreign = [name for kind, name in entries
               if kind != "file" or name not in ("_metadata", "_common_metadata") and not (
                   name.startswith("part.") and name.endswith(".parquet") and name[5:-8].isdigit())]
    frame = dd.from_pandas(pd.DataFrame({"first": [0, 1], "second": [1, 2], "jaccard": [0.5, 1.0]}), npartitions=2)
    before = sorted(p.name for p in target.iterdir())
    if foreign:
        with pytest.raises(OutputError, match="is a folder holding more than an earlier result's part files") as info:
            write_result(frame, target)
        assert repr(sorted(foreign)[0]) in str(info.value)
        assert sorted(p.name for p in target.iterdir()) == before
    else:
        write_result(frame, target)
        assert sorted(p.name for p in target.iterdir()) == ["part.0.parquet", "part.1.parquet"]
    assert (folder / "elsewhere").read_text() == "x"
    assert sorted(p.name for p in folder.iterdir()) == ["elsewhere", "s.parquet"]  # no temporary left


@pytest.mark.parametrize("order", ["folder first", "file first"])
def test_an_output_inside_a_folder_result_is_refused_in_either_order(tmp_path, order):
    """A step writing a file inside another step's folder result: the folder would remove it (and the
    next run would find the file there and refuse); refused whichever step comes first."""
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "a.csv").write_text("src,dst\n0,1\n1,2\n")
    steps = ["{id: s, algorithm: jaccard, inputs: {graph: big}, backend: cpu, output: a.parquet}",
             "{id: t, algorithm: jaccard, inputs: {graph: big}, backend: cpu, output: a.parquet/x.csv}"]
    if order == "file first":
        steps.reverse()
    path = tmp_path / "p.yaml"
    path.write_text('version: 1\noutput_dir: .\ncluster: {kind: local, workers: 1}\n'
                    'graphs: {big: {path: "e/*.csv", partitioned: true}}\n'
                    f"steps: [{', '.join(steps)}]\n")
    said = refused(path, None)
    assert "would remove it" in said, said
