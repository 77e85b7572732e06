"""Pipelines as dataflow: graphs made from earlier steps' results (from_step, a structured where:
filter), steps in dependency order, cycles and unknown columns refused by validation, and
--keep-going marking what reads a failed step not run."""
from __future__ import annotations

import json
import textwrap

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphops as go
from graphops.errors import ConfigError, PipelineError
from graphops.host.manager import make_plugin_manager
from graphops.host.registry import Registry
from tests.test_pipeline_run import _Failing


def write(folder, text, name="p.yaml"):
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


FLOW = """\
version: 1
name: p
graphs:
  karate: {dataset: karate}
  strong: {from_step: sim, src: first, dst: second, weight: jaccard_coeff, where: {jaccard_coeff: {ge: 0.3}, first: {ne: 0}}}
steps:
  - {id: look, algorithm: describe, inputs: {graph: strong}, output: strong.csv}
  - {id: sim, algorithm: jaccard, inputs: {graph: karate}, output: sim.csv}
"""


def test_a_graph_from_a_steps_result_runs_after_that_step(tmp_path):
    """The step reading the graph comes first in the file and runs second; the graph holds the
    result's rows that pass every where: condition, with its weight column."""
    summary = go.run_pipeline(write(tmp_path, FLOW))
    assert summary.order == ["sim", "look"] and [s.status for s in summary.steps] == ["ok", "ok"]
    sim = pd.read_csv(tmp_path / "out" / "sim.csv")
    kept = sim[(sim.jaccard_coeff >= 0.3) & (sim["first"] != 0)]
    stats = pd.read_csv(tmp_path / "out" / "strong.csv")
    assert stats.n_edges[0] == len(kept) and stats.n_vertices[0] == len(set(kept["first"]) | set(kept["second"]))
    assert json.loads((tmp_path / "out" / "p.summary.json").read_text())["graphs"]["strong"]["from_step"] == "sim"


@pytest.mark.parametrize("graphs, message", [
    ("{from_step: sim, src: first, dst: secnd}", "returns the columns first, jaccard_coeff, second; 'secnd' is not one "
                                                 "of them. Did you mean 'second'?"),
    ("{from_step: sim, src: first, dst: second, where: {coef: {ge: 1}}}", "'coef' is not one of them"),
    ("{from_step: simm, src: first, dst: second}", "Unknown step 'simm'. Steps of this file: look, sim"),
    ("{from_step: sim, src: first}", "names both columns, src: and dst:"),
    ("{from_step: sim, src: first, dst: second, where: {first: {in: 3}}}", "'in' takes a list of values"),
    ("{from_step: sim, src: first, dst: second, where: {first: {like: 3}}}", "Input should be 'eq', 'ne', 'lt'"),
    ("{from_step: sim, weight: jaccard_coeff}", "give src: and dst: too"),
    ("{from_step: look, src: n_vertices, dst: n_edges}", "step 'look' reads graph 'strong', which is made from the "
                                                         "step's own result, so it can never run"),
    ("{dataset: karate, where: {a: {eq: 1}}}", "'where' filters the rows of an earlier step's result"),
])
def test_validation_names_the_step_the_column_and_the_fix(tmp_path, graphs, message):
    text = FLOW.replace("{from_step: sim, src: first, dst: second, weight: jaccard_coeff, where: {jaccard_coeff: "
                        "{ge: 0.3}, first: {ne: 0}}}", graphs)
    with pytest.raises(ConfigError) as info:
        go.load_pipeline(write(tmp_path, text))
    assert message in str(info.value).replace("\n", " ") or message in str(info.value)


def test_a_cycle_of_two_steps_is_spelled_out(tmp_path):
    text = """\
    version: 1
    graphs:
      a: {from_step: two, src: first, dst: second}
      b: {from_step: one, src: first, dst: second}
    steps:
      - {id: one, algorithm: jaccard, inputs: {graph: a}}
      - {id: two, algorithm: jaccard, inputs: {graph: b}}
    """
    with pytest.raises(ConfigError) as info:
        go.load_pipeline(write(tmp_path, text))
    assert ("steps feed each other in a cycle: 'one' reads graph 'a' (made from step 'two'), 'two' reads graph 'b' "
            "(made from step 'one'); none of them can run first") in str(info.value)
    assert "At steps[0] (id='one', algorithm='jaccard')" in str(info.value)


def test_keep_going_leaves_the_readers_of_a_failed_step_not_run(tmp_path):
    pm = make_plugin_manager(autoload=False, plugins=["describe", "jaccard"])
    pm.register(_Failing(), name="flaky")
    registry = Registry(pm)
    text = """\
    version: 1
    name: p
    graphs:
      karate: {dataset: karate}
      counted: {from_step: bad, src: n, dst: n}
      strong: {from_step: sim, src: first, dst: second}
    steps:
      - {id: bad, algorithm: flaky, inputs: {graph: karate}, params: {mode: value}}
      - {id: after, algorithm: describe, inputs: {graph: counted}, output: after.csv}
      - {id: sim, algorithm: jaccard, inputs: {graph: karate}}
      - {id: fine, algorithm: describe, inputs: {graph: strong}, output: fine.csv}
    """
    with pytest.raises(PipelineError):
        go.run_pipeline(write(tmp_path, text), registry=registry, keep_going=True)
    summary = json.loads((tmp_path / "out" / "p.summary.json").read_text())
    status = {s["id"]: (s["status"], s["reason"]) for s in summary["steps"]}
    assert status["bad"][0] == "failed" and status["sim"][0] == "ok" and status["fine"][0] == "ok"
    assert status["after"] == ("not run", "not run: its input graph 'counted' is made from step 'bad', which failed")
    assert not (tmp_path / "out" / "after.csv").exists() and (tmp_path / "out" / "fine.csv").exists()


def test_bench_makes_a_steps_result_for_the_graphs_made_from_it(tmp_path):
    from graphops.cli.bench import run_bench

    path = write(tmp_path, FLOW + "bench: {repeat: 1, warmup: 0}\n")
    report = run_bench([path])
    assert {r.step: bool(r.median) for r in report.rows} == {"look": True, "sim": True}


# Pipelines of jaccard steps, each reading karate or a graph made from another step's result.
shapes = st.integers(1, 5).flatmap(lambda n: st.lists(st.one_of(st.none(), st.integers(0, n - 1)), min_size=n,
                                                      max_size=n))


@settings(max_examples=25, deadline=None)
@given(shapes)
def test_any_wiring_of_steps_runs_in_dependency_order_or_is_refused_as_a_cycle(tmp_path_factory, reads):
    """Every step reads karate (None) or the graph made from step j: with no cycle the run takes each
    step after the one it reads and every step succeeds; with one, validation refuses the file naming
    a cycle and nothing runs."""
    folder = tmp_path_factory.mktemp("flow")
    graphs = "".join(f"  g{j}: {{from_step: s{j}, src: first, dst: second}}\n" for j in sorted(set(reads) - {None}))
    steps = "".join(f"  - {{id: s{i}, algorithm: jaccard, inputs: {{graph: {'karate' if r is None else f'g{r}'}}}}}\n"
                    for i, r in enumerate(reads))
    path = write(folder, f"version: 1\nname: p\ngraphs:\n  karate: {{dataset: karate}}\n{graphs}steps:\n{steps}")
    cyclic = _has_cycle(reads)
    if cyclic:
        with pytest.raises(ConfigError, match="cycle|own result, so it can never run"):
            go.load_pipeline(path)
        assert not (folder / "out").exists()
        return
    summary = go.run_pipeline(path)
    assert all(s.status in ("ok", "cached") for s in summary.steps)  # (a step like another: read from the cache)
    at = {sid: k for k, sid in enumerate(summary.order)}
    assert sorted(at) == sorted(f"s{i}" for i in range(len(reads)))
    for i, r in enumerate(reads):
        if r is not None:
            assert at[f"s{r}"] < at[f"s{i}"]


def _has_cycle(reads):
    for start in range(len(reads)):
        seen, at = set(), start
        while reads[at] is not None and at not in seen:
            seen.add(at)
            at = reads[at]
            if at == start:
                return True
    return False


def test_set_overrides_values_with_the_files_checks_and_trails(tmp_path, capsys):
    from graphops.cli import main

    path = write(tmp_path, FLOW)
    assert main(["run", str(path), "--set", "steps.sim.params.top_k=5", "--set",
                 "graphs.strong.where={jaccard_coeff: {ge: 0.5}}"]) == 0
    assert len(pd.read_csv(tmp_path / "out" / "sim.csv")) == 5
    summary = json.loads((tmp_path / "out" / "p.summary.json").read_text())
    assert summary["overrides"] == {"steps.sim.params.top_k": 5, "graphs.strong.where": {"jaccard_coeff": {"ge": 0.5}}}
    assert main(["validate", str(path), "--set", "steps.sim.params.top_k=0"]) == 1
    err = capsys.readouterr().err
    assert "At steps[1] (id='sim', algorithm='jaccard')" in err and "At key: params.top_k" in err
    with pytest.raises(ConfigError, match=r"(?s)At --set steps.simm.backend.*no step 'simm' in the file.*Did you mean 'sim'"):
        go.load_pipeline(path, overrides={"steps.simm.backend": "cpu"})
    with pytest.raises(ConfigError, match="Unknown algorithm 'jacard'"):
        go.load_pipeline(path, overrides={"steps.sim.algorithm": "jacard"})
    with pytest.raises(ConfigError, match=r"inputs.graph is 'karate', not a mapping, so it has no key 'x'"):
        go.load_pipeline(path, overrides={"steps.sim.inputs.graph.x": 1})
    assert main(["run", str(path), "--set", "steps.sim.params.top_k"]) != 0
    assert "give KEY=VALUE with a dotted key into the file" in capsys.readouterr().err
    with pytest.raises(go.errors.InputError, match="overrides are set when the file is read"):
        go.run_pipeline(go.load_pipeline(path), overrides={"steps.sim.params.top_k": 3})


keys = st.lists(st.sampled_from(["steps", "graphs", "sim", "look", "strong", "karate", "params", "top_k", "where",
                                 "backend", "output", "inputs", "graph", "x", "src", "path", "name", "version"]),
                min_size=1, max_size=5).map(".".join)
values = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**6), st.floats(allow_nan=True),
                   st.text(max_size=8), st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3),
                                                                                            st.integers(), max_size=2))


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(keys, values, min_size=1, max_size=3))
def test_any_override_is_taken_or_refused_with_a_config_error(tmp_path_factory, overrides):
    """Whatever keys and values are set over a file, loading it succeeds or raises one ConfigError;
    the file on disk is never changed."""
    folder = tmp_path_factory.mktemp("set")
    path = write(folder, FLOW)
    before = path.read_text()
    try:
        go.load_pipeline(path, overrides=overrides)
    except ConfigError:
        pass
    assert path.read_text() == before


@pytest.mark.parametrize("graph, message", [
    ("{from_step: sim, src: first, dst: second, where: {first: {eq: 'x'}}}",
     "where: first: eq: 'x' is text, and the column holds number values"),
    ("{from_step: sim, src: first, dst: second, where: {first: {in: [1, true]}}}",
     "True is bool, and the column holds number values"),
    ("{from_step: look, src: n_vertices, dst: n_edges, where: {graph: {gt: 5}}}",
     "the step's result has no column 'graph' (where.graph)"),
])
def test_what_only_the_result_shows_is_one_line_at_run(tmp_path, graph, message):
    """A where: value of another kind than its column (never a silent empty or misread filter), and a
    column the algorithm declares but this result lacks: the step fails with one line naming both."""
    text = FLOW.replace("{from_step: sim, src: first, dst: second, weight: jaccard_coeff, where: {jaccard_coeff: "
                        "{ge: 0.3}, first: {ne: 0}}}", graph)
    if "look" in graph:
        text = text.replace("inputs: {graph: strong}", "inputs: {graph: karate}") + \
            "  - {id: again, algorithm: describe, inputs: {graph: strong}}\n"
    with pytest.raises(PipelineError) as info:
        go.run_pipeline(write(tmp_path, text))
    assert message in str(info.value) and "Traceback" not in str(info.value)
    from graphops.errors import is_user_error

    assert is_user_error(info.value)


def test_a_matrix_where_rows_are_wanted_and_rows_where_a_matrix_is(tmp_path):
    text = """\
    version: 1
    graphs:
      karate: {dataset: karate}
      mutag: {dataset: MUTAG}
      rows: {from_step: sim}
    steps:
      - {id: sim, algorithm: jaccard, inputs: {graph: karate}}
      - {id: acc, algorithm: classify, inputs: {graphs: mutag, gram: rows}}
    """
    with pytest.raises(ConfigError, match="returns a frame of rows, not a matrix: give src: and dst:"):
        go.load_pipeline(write(tmp_path, text))
    with pytest.raises(ConfigError, match="orders by true/false"):
        go.load_pipeline(write(tmp_path, FLOW.replace("{ge: 0.3}", "{ge: true}")))


def test_a_long_chain_validates_and_a_long_cycle_is_said_briefly(tmp_path):
    n = 1500
    graphs = "".join(f"  g{i}: {{from_step: s{i + 1}, src: first, dst: second}}\n" for i in range(n - 1))
    steps = "".join(f"  - {{id: s{i}, algorithm: jaccard, inputs: {{graph: g{i}}}}}\n" for i in range(n - 1))
    head = "version: 1\ngraphs:\n  karate: {dataset: karate}\n"
    chain = write(tmp_path, head + graphs + "steps:\n" + steps +
                  f"  - {{id: s{n - 1}, algorithm: jaccard, inputs: {{graph: karate}}}}\n", "chain.yaml")
    loaded = go.load_pipeline(chain)
    from graphops.pipeline.flow import order

    assert order(loaded)[:2] == [n - 1, n - 2]
    cyclic = write(tmp_path, head + graphs + f"  g{n - 1}: {{from_step: s0, src: first, dst: second}}\nsteps:\n" +
                   steps + f"  - {{id: s{n - 1}, algorithm: jaccard, inputs: {{graph: g{n - 1}}}}}\n", "cyc.yaml")
    with pytest.raises(ConfigError) as info:
        go.load_pipeline(cyclic)
    assert "... 1494 more ..." in str(info.value) and "(1500 steps in all)" in str(info.value)
    dup = write(tmp_path, "version: 1\ngraphs:\n  karate: {dataset: karate}\n  g: {from_step: sim, src: first, dst: "
                          "second}\nsteps:\n  - {id: sim, algorithm: jaccard, inputs: {graph: karate}}\n"
                          "  - {id: sim, algorithm: jaccard, inputs: {graph: g}}\n", "dup.yaml")
    with pytest.raises(ConfigError) as info:
        go.load_pipeline(dup)
    assert "Duplicate step id 'sim'" in str(info.value) and "cycle" not in str(info.value)
    assert "own result" not in str(info.value)


def test_set_through_a_yaml_alias_changes_that_step_only(tmp_path):
    text = """\
    version: 1
    name: p
    graphs:
      karate: {dataset: karate}
    steps:
      - {id: a, algorithm: jaccard, inputs: &in {graph: karate}, params: &p {top_k: 3}, output: a.csv}
      - {id: b, algorithm: jaccard, inputs: *in, params: *p, output: b.csv}
    """
    go.run_pipeline(write(tmp_path, text), overrides={"steps.a.params.top_k": 5})
    assert len(pd.read_csv(tmp_path / "out" / "a.csv")) == 5 and len(pd.read_csv(tmp_path / "out" / "b.csv")) == 3
