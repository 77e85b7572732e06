"""The file's own keys (pass 1): a number as YAML writes it where a key wants one (never true/false,
text or, for an integer, a decimal), and a path that names something a file system can hold (not
empty, no NUL), refused with the key's trail by ``graphops validate``, never by the run."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import graphops as go
from graphops.errors import ConfigError

BOOL = "Input should be {wanted}, not a boolean (true/false); write the number itself (got {got})"
TEXT = "Input should be {wanted}, not text; write the number without quotes (got {got})"
DECIMAL = "Input should be an integer, not a decimal number; {fix} (got {got})"
NUL = "This path holds a NUL character (\\0), which no file system takes in a path; remove it (got {got})"
EMPTY = "An empty path names no file or folder; give one, or leave the key out (got '')"


@pytest.fixture(scope="module")
def describe_only():
    from graphops.host.manager import make_plugin_manager
    from graphops.host.registry import Registry

    return Registry(make_plugin_manager(autoload=False, plugins=["describe"]))


# key -> (the file with VALUE in its place, the trail, what the key wants)
KEYS = {
    "version": ("version: VALUE\nGRAPHS\nSTEPS", ("At key: version",), "an integer"),
    "bench.repeat": ("version: 1\nGRAPHS\nSTEPS\nbench: {repeat: VALUE}", ("At key: bench.repeat",), "an integer"),
    "bench.warmup": ("version: 1\nGRAPHS\nSTEPS\nbench: {warmup: VALUE}", ("At key: bench.warmup",), "an integer"),
    "cluster.workers": ("version: 1\nGRAPHS\nSTEPS\ncluster: {kind: local, workers: VALUE}",
                        ("At key: cluster.workers",), "an integer"),
    "cluster.timeout": ("version: 1\nGRAPHS\nSTEPS\ncluster: {address: 'tcp://h:8786', timeout: VALUE}",
                        ("At key: cluster.timeout",), "a number"),
    "src": ("version: 1\ngraphs: {g: {path: g.txt, src: VALUE}}\nSTEPS", ("At graphs.g", "At key: src"), "an integer"),
    "weight": ("version: 1\ngraphs: {g: {path: g.txt, weight: VALUE}}\nSTEPS", ("At graphs.g", "At key: weight"),
               "an integer"),
}
TAKES_TEXT = {"src", "weight"}  # a column's name


def _file(key: str, value: str) -> str:
    return (KEYS[key][0].replace("VALUE", value).replace("GRAPHS", "graphs: {g: {path: g.txt}}")
            .replace("STEPS", "steps: [{id: s, algorithm: describe, inputs: {graph: g}}]") + "\n")


def _errors(folder: Path, text: str, registry) -> str:
    (folder / "g.txt").write_text("1 2\n2 3\n")
    path = folder / "p.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        go.load_pipeline(path, registry)
    return str(info.value).replace(str(path), "p.yaml")


def _report(key: str, message: str) -> str:
    return "p.yaml is invalid (1 error)\n" + "".join(f"==> {c}\n" for c in KEYS[key][1]) + f"=====> {message}"


@pytest.mark.parametrize("key", sorted(KEYS))
@pytest.mark.parametrize("value", ["true", "false"])
def test_a_boolean_where_a_key_wants_a_number_is_refused(tmp_path, describe_only, key, value):
    got = {"true": True, "false": False}[value]
    assert _errors(tmp_path, _file(key, value), describe_only) == _report(
        key, BOOL.format(wanted=KEYS[key][2], got=got))


@pytest.mark.parametrize("key", sorted(set(KEYS) - TAKES_TEXT))
def test_text_where_a_key_wants_a_number_is_refused(tmp_path, describe_only, key):
    assert _errors(tmp_path, _file(key, "'5'"), describe_only) == _report(key, TEXT.format(wanted=KEYS[key][2],
                                                                                           got="'5'"))


@pytest.mark.parametrize("key", sorted(k for k in KEYS if KEYS[k][2] == "an integer"))
@pytest.mark.parametrize("value, fix", [("1.0", "write 1"), ("2.5", "write a whole number")])
def test_a_decimal_where_a_key_wants_an_integer_is_refused(tmp_path, describe_only, key, value, fix):
    assert _errors(tmp_path, _file(key, value), describe_only) == _report(
        key, DECIMAL.format(fix=fix, got=float(value)))


def test_a_column_position_of_true_is_refused_not_read_as_column_1(tmp_path, describe_only):
    """``src: true`` was column 1 at run time, ``src: 1.0`` too."""
    text = ("version: 1\ngraphs: {g: {path: g.txt, src: true, dst: 1.0}}\n"
            "steps: [{id: s, algorithm: describe, inputs: {graph: g}}]\n")
    assert _errors(tmp_path, text, describe_only) == (
        "p.yaml is invalid (2 errors)\n==> At graphs.g\n==> At key: src\n=====> "
        + BOOL.format(wanted="an integer", got=True) + "\n==> At graphs.g\n==> At key: dst\n=====> "
        + DECIMAL.format(fix="write 1", got=1.0))


@settings(max_examples=60, deadline=None)
@given(key=st.sampled_from(sorted(KEYS)),
       value=st.one_of(st.booleans(), st.integers(1, 50).map(str), st.integers(1, 50).map(float),
                       st.integers(1, 50)))
def test_a_numeric_key_takes_a_number_as_yaml_writes_it_and_nothing_else(key, value):
    """Over every numeric key: an integer (or, for a float key, any number) in range loads; a bool, the
    number as text, or a decimal where an integer is wanted is refused at that key, with nothing else."""
    from graphops.host.manager import make_plugin_manager
    from graphops.host.registry import Registry

    wanted = KEYS[key][2]
    good = (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, float) and wanted == "a number")
    if key in TAKES_TEXT and isinstance(value, str):
        good = True  # a column's name
    if key == "version" and good:
        value = 1  # the only version there is
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        (folder / "g.txt").write_text("1 2\n2 3\n")
        path = folder / "p.yaml"
        path.write_text(_file(key, json.dumps(value)))
        registry = Registry(make_plugin_manager(autoload=False, plugins=["describe"]))
        try:
            go.load_pipeline(path, registry)
        except ConfigError as exc:
            assert not good, str(exc)
            assert [i.where for i in exc.issues] == [KEYS[key][1]], str(exc)
            return
        assert good, (key, value)


# --- paths -------------------------------------------------------------------------------------

PATHS = {
    "output_dir": ('version: 1\noutput_dir: VALUE\ngraphs: {g: {dataset: karate}}\n'
                   'steps: [{id: s, algorithm: describe, inputs: {graph: g}}]\n', ("At key: output_dir",)),
    "output": ('version: 1\ngraphs: {g: {dataset: karate}}\n'
               'steps: [{id: s, algorithm: describe, inputs: {graph: g}, output: VALUE}]\n',
               ("At steps[0] (id='s', algorithm='describe')", "At key: output")),
    "path": ('version: 1\ngraphs: {g: {path: VALUE}}\nsteps: [{id: s, algorithm: describe, inputs: {graph: g}}]\n',
             ("At graphs.g", "At key: path")),
    "nodes": ('version: 1\ngraphs: {g: {path: g.txt, nodes: VALUE}}\n'
              'steps: [{id: s, algorithm: describe, inputs: {graph: g}}]\n', ("At graphs.g", "At key: nodes")),
    "smiles": ('version: 1\ngraphs: {g: {smiles: VALUE}}\nsteps: [{id: s, algorithm: describe, inputs: {graph: g}}]\n',
               ("At graphs.g", "At key: smiles")),
}


@pytest.mark.parametrize("key", sorted(PATHS))
@pytest.mark.parametrize("value", ["a\\0.csv", "o\\0ut", "\\0"])
def test_a_nul_in_any_path_of_the_file_is_refused_at_its_key(tmp_path, describe_only, key, value):
    """A NUL (``"a\\0.csv"`` in YAML) passed validate and ended in a 'This is a bug' traceback at run time."""
    text, trail = PATHS[key]
    given = value.replace("\\0", "\0")
    expected = "p.yaml is invalid (1 error)\n" + "".join(f"==> {c}\n" for c in trail) + "=====> " + NUL.format(
        got=repr(given))
    assert _errors(tmp_path, text.replace("VALUE", f'"{value}"'), describe_only) == expected
    with pytest.raises(ConfigError):
        go.run_pipeline(tmp_path / "p.yaml", registry=describe_only)


@pytest.mark.parametrize("key", sorted(PATHS))
def test_an_empty_path_is_refused_at_its_key(tmp_path, describe_only, key):
    """``output_dir: ''`` wrote beside the pipeline file; ``output: ''`` named the output folder itself."""
    text, trail = PATHS[key]
    assert _errors(tmp_path, text.replace("VALUE", "''"), describe_only) == (
        "p.yaml is invalid (1 error)\n" + "".join(f"==> {c}\n" for c in trail) + f"=====> {EMPTY}")
