"""Numeric command-line options: every one has its range checked by argparse (exit 2, one line naming
the option, the value and the range), the same range as the pipeline key it overrides."""
from __future__ import annotations

import argparse
import contextlib
import io
import math
import re

import pytest
from hypothesis import given, settings, strategies as st

from graphops.cli import build_parser, main
from graphops.cli.options import Bounds, bounded
from graphops.pipeline.schema import BenchSettings, ClusterSettings

# option -> the pipeline key whose range it has
KEYS = {("run", "--cluster-timeout"): (ClusterSettings, "timeout"), ("bench", "--repeat"): (BenchSettings, "repeat"),
        ("bench", "--warmup"): (BenchSettings, "warmup")}


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def numeric_options() -> dict[tuple[str, str], tuple[argparse.Action, list[str]]]:
    """(command, option) -> the action, and the arguments the command needs besides it."""
    found = {}
    for name, cmd in _commands(build_parser()).items():
        needed = ["p.yaml" for a in cmd._actions if not a.option_strings and a.required and a.nargs is None]
        for action in cmd._actions:
            if action.type in (int, float) or hasattr(action.type, "bounds"):
                found[(name, action.option_strings[-1])] = (action, needed)
    return found


def test_every_numeric_option_of_the_commands_has_a_range():
    options = numeric_options()
    assert set(options) == set(KEYS)
    assert [k for k, (action, _) in options.items() if not hasattr(action.type, "bounds")] == []


@pytest.mark.parametrize("command, option", sorted(KEYS))
def test_an_option_has_the_range_of_the_pipeline_key_it_overrides(command, option):
    model, key = KEYS[command, option]
    limits = {k: getattr(m, k) for m in model.model_fields[key].metadata for k in ("ge", "gt", "le", "lt")
              if getattr(m, k, None) is not None}
    action, _ = numeric_options()[command, option]
    assert action.type.bounds == Bounds(action.type.bounds.kind, **limits)


def _outside(bounds: Bounds) -> st.SearchStrategy[str]:
    """Texts the option must refuse: below, above, not finite, not a number (or not whole)."""
    texts = [st.sampled_from(["nan", "inf", "-inf", "x", "", "1e400", "0x10", "1,5"])]
    low = bounds.ge if bounds.ge is not None else bounds.gt
    if low is not None:
        texts.append(st.integers(max_value=math.ceil(low) - (bounds.ge is not None)).map(str))
        texts.append(st.floats(max_value=low, exclude_max=bounds.ge is not None, allow_nan=False).map(repr))
    if bounds.le is not None:
        texts.append(st.integers(min_value=math.floor(bounds.le) + 1).map(str))
        texts.append(st.floats(min_value=bounds.le, exclude_min=True, allow_nan=False).map(repr))
    if bounds.kind is int:
        texts.append(st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: x != int(x)).map(repr))
    return st.one_of(texts)


def _run(argv: list[str]) -> tuple[object, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    return code, err.getvalue()


@settings(max_examples=80, deadline=None)
@given(data=st.data(), which=st.sampled_from(sorted(KEYS)))
def test_an_out_of_range_value_is_exit_2_and_one_line_never_a_traceback(data, which):
    action, needed = numeric_options()[which]
    bounds = action.type.bounds
    text = data.draw(_outside(bounds))
    command, option = which
    code, err = _run([command, *needed, f"{option}={text}"])
    assert code == 2 and "Traceback" not in err
    assert err.splitlines()[-1] == (f"graphops {command}: error: argument {option}: {option} {text!r} is not "
                                    f"{bounds.text}")


@settings(max_examples=40, deadline=None)
@given(data=st.data(), which=st.sampled_from(sorted(KEYS)))
def test_a_value_in_range_is_taken(data, which):
    action, needed = numeric_options()[which]
    b = action.type.bounds
    if b.kind is int:
        value = data.draw(st.integers(b.ge, b.le))
    else:
        value = data.draw(st.floats(b.gt, b.le, exclude_min=True))
    args = _commands(build_parser())[which[0]].parse_args([*needed, f"{which[1]}={value!r}"])
    assert getattr(args, action.dest) == value


def test_bench_repeat_0_is_a_usage_error_not_a_bug(tmp_path):
    """It ran the benchmark and failed in statistics.median with "this is a bug"."""
    (tmp_path / "b.yaml").write_text("version: 1\ngraphs: {g: {dataset: karate}}\n"
                                     "steps: [{id: s, algorithm: describe, inputs: {graph: g}}]\n")
    code, err = _run(["bench", str(tmp_path / "b.yaml"), "--repeat", "0", "--json", str(tmp_path / "r.json")])
    assert code == 2 and "bug" not in err
    assert err.splitlines()[-1] == ("graphops bench: error: argument --repeat: --repeat '0' is not a whole number "
                                    "from 1 to 1000")
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("kwargs, line", [
    ({"repeat": 0}, "  repeat: Input should be greater than or equal to 1 (got 0)"),
    ({"warmup": 101}, "  warmup: Input should be less than or equal to 100 (got 101)"),
])
def test_run_bench_checks_its_counts_before_timing(tmp_path, kwargs, line):
    from graphops.cli.bench import run_bench

    with pytest.raises(ValueError) as info:
        run_bench([tmp_path / "missing.yaml"], **kwargs)
    assert str(info.value) == "run_bench: invalid parameters\n" + line


@pytest.mark.parametrize("make, text", [
    (lambda: bounded("--k", int, ge=1, le=10), "a whole number from 1 to 10"),
    (lambda: bounded("--t", float, gt=0, le=3600), "a number above 0 and at most 3600"),
    (lambda: bounded("--n", int, ge=0), "a whole number from 0"),
    (lambda: bounded("--x", float, lt=1), "a number below 1"),
])
def test_a_range_is_said_in_words(make, text):
    assert make().bounds.text == text


def test_bounded_takes_int_or_float_only():
    with pytest.raises(ValueError, match=r"bounded: kind must be int or float; got <class 'str'>"):
        bounded("--name", str)


def test_every_numeric_option_of_the_plugins_commands_has_a_range():
    from graphops.host.registry import get_registry

    builtin = set(_commands(build_parser()))
    plugin = {name: cmd for name, cmd in _commands(build_parser(get_registry())).items() if name not in builtin}
    options = {(name, a.option_strings[-1]): a.type for name, cmd in plugin.items() for a in cmd._actions
               if a.type in (int, float) or hasattr(a.type, "bounds")}
    assert ("jaccard-sweep", "--repeat") in options
    assert [k for k, kind in options.items() if not hasattr(kind, "bounds")] == []
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as info:
        main(["jaccard-sweep", "--repeat", "0"])
    assert info.value.code == 2
    assert err.getvalue().splitlines()[-1] == ("graphops jaccard-sweep: error: argument --repeat: --repeat '0' is not "
                                               "a whole number from 1 to 1000")


@pytest.mark.parametrize("seconds, why", [(0, "greater than 0 (got 0)"), (-1.5, "greater than 0 (got -1.5)"),
                                          (float("nan"), "a finite number (got nan)"),
                                          (1e9, "less than or equal to 3600 (got 1000000000.0)")])
def test_run_pipeline_checks_its_cluster_timeout(tmp_path, seconds, why):
    import graphops as go

    path = tmp_path / "p.yaml"
    path.write_text("version: 1\ngraphs: {g: {dataset: karate}}\nsteps: [{id: d, algorithm: describe, inputs: "
                    "{graph: g}}]\n")
    with pytest.raises(go.InputError) as info:
        go.run_pipeline(path, cluster="tcp://127.0.0.1:9", cluster_timeout=seconds)
    assert str(info.value) == (f"run_pipeline: cluster_timeout (graphops run --cluster-timeout): Input should be {why} "
                               f"(checked as the file key cluster.timeout is)")


@pytest.mark.parametrize("cluster, has", [
    ("", "p.yaml has no cluster: section and no --cluster ADDRESS was given"),
    ("cluster: {kind: local, workers: 2}\n", "p.yaml's cluster: section starts a local cluster (kind: local), which "
                                             "has none")])
def test_a_cluster_timeout_without_a_running_scheduler_is_one_line(tmp_path, cluster, has):
    """--cluster-timeout with no scheduler's address to wait for: said, not ignored (no cluster) nor
    answered with the timeout key's rule (a local cluster)."""
    import graphops as go

    path = tmp_path / "p.yaml"
    path.write_text("version: 1\ngraphs: {g: {dataset: karate}}\nsteps: [{id: d, algorithm: describe, inputs: "
                    "{graph: g}}]\n" + cluster)
    with pytest.raises(go.InputError, match="^cluster_timeout \\(graphops run --cluster-timeout\\) is how long a "
                                            "running scheduler has to answer; .*" + re.escape(has) +
                                            "\\. Drop the timeout, or give the scheduler's address"):
        go.run_pipeline(path, cluster_timeout=5)
    assert not (tmp_path / "out").exists()


def test_a_large_bound_is_written_out():
    """'from 1 to 1e+06' was the degree example's -k range."""
    assert Bounds(int, 1, None, 1_000_000, None).text == "a whole number from 1 to 1000000"
