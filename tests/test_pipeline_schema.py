"""Pipeline files: valid and invalid YAML, with the exact text of every error report."""
from __future__ import annotations

import textwrap

import pytest

import graphops as go
from graphops.errors import ConfigError


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "g.txt").write_text("1 2\n2 3\n")
    return tmp_path


@pytest.fixture(scope="module")
def describe_only():
    """A registry with only the describe plugin, so the texts below do not change as plugins land."""
    from graphops.host.manager import make_plugin_manager
    from graphops.host.registry import Registry

    return Registry(make_plugin_manager(autoload=False, plugins=["describe"]))


def errors_of(folder, text: str, registry) -> str:
    path = folder / "p.yaml"
    path.write_text(textwrap.dedent(text))
    with pytest.raises(ConfigError) as info:
        go.load_pipeline(path, registry)
    assert info.value.file == str(path)
    return str(info.value).replace(str(path), "p.yaml").replace(str(folder), "DIR")


GOOD = """\
version: 1
graphs:
  web: {path: g.txt}
steps:
  - {id: s1, algorithm: describe, inputs: {graph: web}, output: out/s1.csv}
"""


def test_valid_pipeline_loads_and_runs(folder, describe_only):
    (folder / "p.yaml").write_text(GOOD)
    loaded = go.load_pipeline(folder / "p.yaml")
    assert loaded.model.steps[0].algorithm == "describe" and loaded.sources.kind("web") == "graph"
    summary = go.run_pipeline(loaded, backend="cpu")
    assert (folder / "out" / "out" / "s1.csv").read_text().startswith("n_vertices,n_edges")
    assert summary.steps[0].backend == "cpu" and (folder / "out" / "p.summary.json").exists()


def test_not_a_mapping(folder, describe_only):
    assert errors_of(folder, "- a\n- b\n", describe_only) == (
        "p.yaml is invalid (1 error)\n"
        "=====> The top level must be a mapping (key: value lines); got a list")


def test_empty_file(folder, describe_only):
    assert errors_of(folder, "", describe_only) == (
        "p.yaml is invalid (1 error)\n"
        "=====> The top level must be a mapping (key: value lines); got an empty file")


def test_yaml_syntax_error(folder, describe_only):
    assert errors_of(folder, "version: 1\nsteps: [\n", describe_only) == (
        "p.yaml is invalid (1 error)\n"
        "==> At line 3, column 1\n"
        "=====> YAML syntax error: expected the node content, but found '<stream end>'")


def test_newer_schema_version(folder, describe_only):
    assert errors_of(folder, "version: 2\nanything: else\n", describe_only) == (
        "p.yaml is invalid (1 error)\n"
        "==> At key: version\n"
        f"=====> This file uses schema version 2; graphops {go.__version__} reads version 1 and "
        "older. Upgrade graphops (pip install -U graphops)")


def test_missing_version(folder, describe_only):
    assert errors_of(folder, "graphs: {}\n", describe_only) == (
        "p.yaml is invalid (1 error)\n"
        "==> At key: version\n"
        "=====> Missing required key 'version'. Add 'version: 1' at the top")


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError) as info:
        go.load_pipeline(tmp_path / "none.yaml")
    assert str(info.value).endswith("is invalid (1 error)\n=====> File not found (resolved to "
                                    f"'{tmp_path / 'none.yaml'}')")


def test_structure_and_meaning_errors_are_collected_in_file_order(folder, describe_only):
    text = """\
    version: 1
    backend: gpux
    graphs:
      web: {path: g.txt, diected: true}
      other: {path: g.txt}
    steps:
      - id: s1
        algoritm: describe
        inputs: {graph: web}
      - id: s2
        algorithm: describ
        inputs: {graph: webb}
      - id: s2
        algorithm: describe
        inputs: {graph: other, grph: other}
        backend: gpx
        params: {threshold: 1}
        output: out/x.npy
    """
    assert errors_of(folder, text, describe_only) == """\
p.yaml is invalid (11 errors)
==> At key: backend
=====> Input should be 'auto', 'cpu' or 'gpu' (got 'gpux'). Did you mean 'gpu'?
==> At graphs.web
==> At key: diected
=====> Unknown key 'diected'. Allowed keys: columns, dedupe, device, directed, dst, format, header, ids, nodes, partitioned, path, src, weight. Did you mean 'directed'?
==> At steps[0] (id='s1')
==> At key: algorithm
=====> Missing required key 'algorithm'
==> At steps[0] (id='s1')
==> At key: algoritm
=====> Unknown key 'algoritm'. Allowed keys: algorithm, backend, cluster, id, inputs, output, params, plot. Did you mean 'algorithm'?
==> At steps[1] (id='s2', algorithm='describ')
==> At key: algorithm
=====> Unknown algorithm 'describ'. Installed: describe. Did you mean 'describe'?
==> At steps[1] (id='s2', algorithm='describ')
==> At key: inputs.graph
=====> Unknown graph 'webb'. Declared graphs: other, web. Did you mean 'web'?
==> At steps[2] (id='s2', algorithm='describe')
==> At key: id
=====> Duplicate step id 's2' (also used by steps[1])
==> At steps[2] (id='s2', algorithm='describe')
==> At key: backend
=====> Unknown backend 'gpx' for describe. Allowed: auto, cpu, gpu, networkx. Did you mean 'gpu'?
==> At steps[2] (id='s2', algorithm='describe')
==> At key: params.threshold
=====> Unknown key 'threshold'. Allowed keys: (none).
==> At steps[2] (id='s2', algorithm='describe')
==> At key: inputs.grph
=====> Unknown input slot 'grph' for describe. Allowed: graph. Did you mean 'graph'?
==> At steps[2] (id='s2', algorithm='describe')
==> At key: output
=====> describe returns a frame; write it to a file ending in .parquet or .csv (got 'out/x.npy')"""


def test_wrong_types(folder, describe_only):
    text = """\
    version: 1
    graphs:
      web: {path: g.txt, directed: maybe, src: [1]}
    steps:
      - {id: s1, algorithm: describe, inputs: {graph: web}, params: [1, 2]}
    """
    assert errors_of(folder, text, describe_only) == """\
p.yaml is invalid (4 errors)
==> At graphs.web
==> At key: src.str
=====> Input should be a valid string (got [1])
==> At graphs.web
==> At key: src.int
=====> Input should be a valid integer (got [1])
==> At graphs.web
==> At key: directed
=====> Input should be a boolean (true or false), not text; write true or false (got 'maybe')
==> At steps[0] (id='s1', algorithm='describe')
==> At key: params
=====> Input should be a valid dictionary (got [1, 2])"""


def test_files_formats_and_outputs(folder, describe_only):
    (folder / "tu").mkdir()
    text = """\
    version: 1
    output_dir: .
    graphs:
      web: {path: g.csv}
      gone: {path: nofile.tsv}
      odd: {path: g.txt, format: tvs}
      weird: {path: g.gml}
      set: {path: tu, format: tsv}
    steps:
      - {id: s1, algorithm: describe, inputs: {graph: web}, output: g.csv}
      - {id: s2, algorithm: describe, inputs: {graph: web}, output: out/a.csv}
      - {id: s3, algorithm: describe, inputs: {graph: web}, output: out/a.csv}
      - {id: s4, algorithm: describe, inputs: {}}
    """
    (folder / "g.gml").write_text("x")
    (folder / "g.csv").write_text("1,2\n")
    assert errors_of(folder, text, describe_only) == """\
p.yaml is invalid (7 errors)
==> At graphs.gone
==> At key: path
=====> File not found: 'nofile.tsv' (resolved to 'DIR/nofile.tsv')
==> At graphs.odd
==> At key: format
=====> Unknown format 'tvs'. Allowed: csv, edges, mtx, parquet, tsv, tu, txt. Did you mean 'tsv'?
==> At graphs.weird
==> At key: format
=====> Cannot tell the format of 'g.gml' from its suffix '.gml'. Known suffixes: .csv, .edges, .el, .mtx, .parquet, .pq, .tsv, .txt; or set format: to one of csv, edges, mtx, parquet, tsv, tu, txt
==> At graphs.set
==> At key: path
=====> 'tu' is a folder; a folder is read as a TU dataset (format: tu)
==> At steps[0] (id='s1', algorithm='describe')
==> At key: output
=====> 'g.csv' would overwrite the input of graph 'web'; choose another path
==> At steps[2] (id='s3', algorithm='describe')
==> At key: output
=====> 'out/a.csv' would overwrite the output of step 's2'; choose another path
==> At steps[3] (id='s4', algorithm='describe')
==> At key: inputs
=====> Missing input slot 'graph' of describe (slots: graph)"""


def test_bad_names(folder, describe_only):
    text = """\
    version: 1
    graphs:
      Web: {path: g.txt}
    steps:
      - {id: Step One, algorithm: describe, inputs: {graph: Web}}
    """
    assert errors_of(folder, text, describe_only) == """\
p.yaml is invalid (2 errors)
==> At graphs.Web
=====> Invalid name 'Web': names start with a lowercase letter and use only a-z, 0-9, '_' and '-'
==> At steps[0] (id='Step One', algorithm='describe')
==> At key: id
=====> Invalid name 'Step One': names start with a lowercase letter and use only a-z, 0-9, '_' and '-'"""


class _CpuOnly:
    @staticmethod
    @go.hookimpl
    def graphops_register_algorithms():
        from graphops_describe.params import DescribeParams

        return [go.Algorithm(name="cpu_only", params=DescribeParams, inputs=("graph",),
                             backends={"cpu": "graphops_describe.cpu:run"})]


def test_pipeline_device_not_offered_by_algorithm(folder, fresh_pm):
    from graphops.host.registry import Registry

    fresh_pm.register(_CpuOnly(), name="cpu-only-plugin")
    text = """\
    version: 1
    backend: gpu
    graphs: {web: {path: g.txt}}
    steps: [{id: a, algorithm: cpu_only, inputs: {graph: web}}]
    """
    path = folder / "p.yaml"
    path.write_text(textwrap.dedent(text))
    with pytest.raises(ConfigError) as info:
        go.load_pipeline(path, Registry(fresh_pm))
    assert str(info.value).endswith(
        "==> At steps[0] (id='a', algorithm='cpu_only')\n==> At key: backend\n=====> The pipeline's "
        "backend 'gpu' is not offered by cpu_only (offered: auto, cpu); set backend: on this step")


def test_yaml_booleans_are_only_true_and_false():
    """A bare `on` (a base kernel's feature key) stays a string, as in YAML 1.2."""
    from graphops.pipeline.load import load_yaml

    assert load_yaml("k: {kronecker_delta: {h: 0.5, on: label}}\nyes: no\nt: true\nf: False\n") == {
        "k": {"kronecker_delta": {"h": 0.5, "on": "label"}}, "yes": "no", "t": True, "f": False}


def test_graphs_generated_from_each_other_are_reported_with_the_cycle(folder, fresh_pm):
    from graphops.host.registry import Registry

    assert errors_of(folder, """\
        version: 1
        graphs:
          k: {dataset: karate}
          self: {generate: {kind: pattern, of: self}}
          a: {generate: {kind: pattern, of: b}}
          b: {generate: {kind: symmetric, of: c}}
          c: {generate: {kind: pattern, of: a}}
          fine: {generate: {kind: pattern, of: k}}
          leads_in: {generate: {kind: pattern, of: a}}
        steps:
          - {id: s, algorithm: describe, inputs: {graph: leads_in}}
        """, Registry(fresh_pm)) == (
        "p.yaml is invalid (2 errors)\n"
        "==> At graphs.self\n==> At key: generate.of\n"
        "=====> graph 'self' is generated from itself (self -> self); make it from a graph that is read or generated "
        "on its own (a path, a data set, or e.g. {kind: rmat, scale: 10})\n"
        "==> At graphs.a\n==> At key: generate.of\n"
        "=====> graphs generated from each other in a cycle (a -> b -> c -> a), so none can be made first; make one "
        "of them from a graph that is read or generated on its own (a path, a data set, or e.g. "
        "{kind: rmat, scale: 10})")


def test_a_cycle_met_outside_a_pipeline_is_an_input_error(folder):
    from graphops.pipeline.sources import Sources

    (folder / "p.yaml").write_text("graphs:\n  a: {generate: {kind: pattern, of: b}}\n"
                                   "  b: {generate: {kind: pattern, of: a}}\n")
    with pytest.raises(go.InputError, match=r"graph 'b': graphs generated from each other in a cycle \(b -> a -> b\)"):
        Sources.from_file(folder / "p.yaml").get("b")


def test_what_parameters_decide_is_checked_at_load(folder, fresh_pm):
    """Found by the random pipelines of test_pipeline_property: each of these failed only at run."""
    from graphops.host.registry import Registry

    assert errors_of(folder, """\
        version: 1
        graphs:
          data: {generate: {kind: gnm, n: 8, m: 16, directed: true, node_features: 2, edge_features: 2}}
          pattern: {generate: {kind: pattern, of: data, max_nodes: 4}}
          grid: {generate: {kind: grid2d, rows: 3, cols: 3}}
          sets: {generate: {kind: gnp_set, sizes: {4: 3}}}
        steps:
          - {id: top, algorithm: appclass, inputs: {data: data, pattern: pattern}, params: {top_k: 2}, output: t.npy}
          - {id: mu, algorithm: appclass, inputs: {data: data, pattern: pattern}, output: mu.parquet}
          - {id: j, algorithm: jaccard, inputs: {graph: grid}, params: {use_weight: true}}
          - {id: sp, algorithm: sp_kernel, inputs: {graphs: sets}, params: {path: histogram, node_kernel: gaussian}}
        """, Registry(fresh_pm)) == (
        "p.yaml is invalid (4 errors)\n"
        "==> At steps[0] (id='top', algorithm='appclass')\n==> At key: output\n"
        "=====> appclass returns a frame with these parameters; write it to a file ending in .parquet or .csv "
        "(got 't.npy')\n"
        "==> At steps[1] (id='mu', algorithm='appclass')\n==> At key: output\n"
        "=====> appclass returns an array with these parameters; write it to a file ending in .npy or .csv or .npz "
        "(got 'mu.parquet')\n"
        "==> At steps[2] (id='j', algorithm='jaccard')\n==> At key: inputs\n"
        "=====> use_weight=True but the graph has no edge weights; build it with weight='<column>' (YAML: weight: "
        "<column>) or drop use_weight\n"
        "==> At steps[3] (id='sp', algorithm='sp_kernel')\n==> At key: params\n"
        "=====> path 'histogram' needs delta (or none) node and length kernels; use path 'fcsp' or 'auto' for "
        "Gaussian kernels (got {'path': 'histogram', 'node_kernel': 'gaussian'})")


def test_a_negative_column_position_is_refused_at_validate(folder, describe_only):
    assert errors_of(folder, """\
        version: 1
        graphs:
          web: {path: g.txt, src: -1, dst: 1, weight: -2}
        steps:
          - {id: s, algorithm: describe, inputs: {graph: web}}
        """, describe_only) == (
        "p.yaml is invalid (2 errors)\n"
        "==> At graphs.web\n==> At key: src\n"
        "=====> a column is a name or a position counted from 0 (the first column is 0); got -1\n"
        "==> At graphs.web\n==> At key: weight\n"
        "=====> a column is a name or a position counted from 0 (the first column is 0); got -2")


def test_graph_source_kinds_keep_what_the_flat_keys_allowed(tmp_path):
    """A source key of another kind given as null is absent; partitioned: false may stand on any
    kind; a duplicated key inside a graph is named with its trail (not the kind's tag)."""
    (tmp_path / "g.txt").write_text("0 1\n1 2\n")
    ok = ["{path: g.txt, dataset: null}", "{dataset: karate, partitioned: false}",
          "{generate: {kind: rmat, scale: 3}, partitioned: false, weight: null}", "{path: g.txt, partitioned: false}"]
    for source in ok:
        (tmp_path / "p.yaml").write_text(f"version: 1\ngraphs:\n  g: {source}\nsteps:\n"
                                         "  - {id: s, algorithm: describe, inputs: {graph: g}}\n")
        go.load_pipeline(tmp_path / "p.yaml")
    (tmp_path / "p.yaml").write_text("version: 1\ngraphs:\n  g:\n    path: g.txt\n    path: h.txt\nsteps:\n"
                                     "  - {id: s, algorithm: describe, inputs: {graph: g}}\n")
    with pytest.raises(go.ConfigError) as info:
        go.load_pipeline(tmp_path / "p.yaml")
    assert "At graphs.g\n==> At key: path" in str(info.value), str(info.value)
    (tmp_path / "p.yaml").write_text("version: 1\ngraphs:\n  g: {path: g.txt, partitioned: 'yes'}\nsteps:\n"
                                     "  - {id: s, algorithm: describe, inputs: {graph: g}}\n")
    with pytest.raises(go.ConfigError) as info:
        go.load_pipeline(tmp_path / "p.yaml")
    assert "At key: partitioned" in str(info.value) and "true or false" in str(info.value), str(info.value)


@pytest.mark.parametrize("graphs, key, said", [
    ("g: {generate: {kind: rmat, scale: 4}, directed: true}", None, "its generator's parameter: give it inside generate:"),
    ("g: {dataset: MUTAG, dedupe: true}", "dedupe", "is a set of graphs, read as published; 'dedupe' does not apply"),
    ("h: {dataset: karate}\n  g: {generate: {kind: pattern, of: [h]}}", "generate.of", "Input should be a valid string"),
    ("m: {dataset: MUTAG}\n  g: {generate: {kind: pattern, of: m}}", "generate.of",
     "makes a graph from one graph; 'm' is a graphset"),
])
def test_source_keys_that_would_be_ignored_are_refused(tmp_path, graphs, key, said):
    """A key the graph's loading would not read is refused where it stands (it was taken, then
    ignored: a generated graph's directed, a graph set's dedupe), and a generator's 'of' names one graph."""
    (tmp_path / "p.yaml").write_text(f"version: 1\ngraphs:\n  {graphs}\nsteps:\n"
                                     "  - {id: s, algorithm: describe, inputs: {graph: g}}\n")
    with pytest.raises(go.ConfigError) as info:
        go.load_pipeline(tmp_path / "p.yaml")
    text = str(info.value)
    assert said in text and "At graphs.g" in text and (key is None or f"At key: {key}" in text), text


def test_a_tu_folder_takes_no_edge_file_keys(tmp_path):
    folder = tmp_path / "T"
    folder.mkdir()
    (folder / "T_A.txt").write_text("1, 2\n2, 1\n")
    (folder / "T_graph_indicator.txt").write_text("1\n1\n")
    (tmp_path / "p.yaml").write_text("version: 1\ngraphs:\n  g: {path: T, weight: w, src: 3}\nsteps:\n"
                                     "  - {id: s, algorithm: describe, inputs: {graph: g}}\n")
    with pytest.raises(go.ConfigError) as info:
        go.load_pipeline(tmp_path / "p.yaml")
    text = str(info.value)
    assert "At key: weight" in text and "At key: src" in text and "a TU folder is read whole" in text, text


def test_bench_command_lines_must_split_into_words(tmp_path):
    (tmp_path / "b.yaml").write_text(
        "version: 1\ngraphs: {g: {dataset: karate}}\nsteps: [{id: s, algorithm: describe, inputs: {graph: g}}]\n"
        "bench:\n  setup: [\"echo \\\"open\", \"   \"]\n  commands: {h: graphops --help}\n")
    with pytest.raises(go.ConfigError) as info:
        go.load_pipeline(tmp_path / "b.yaml")
    text = str(info.value)
    assert "bench.setup[0]" in text and "cannot be split into words" in text and "names no program" in text, text


@pytest.mark.parametrize("key", ["cluster", "plot"])
def test_a_steps_switch_given_as_null_is_its_default(tmp_path, key):
    """A step's cluster: or plot: given as null (or left empty) is absent, as at the top level; a
    value that is not true or false is still refused at its key."""
    from graphops.pipeline.schema import Step

    (tmp_path / "g.txt").write_text("0 1\n1 2\n")
    default = Step.model_fields[key].default
    for value, expected in (("null", default), ("", default), ("false", False)):
        (tmp_path / "p.yaml").write_text(f"version: 1\ngraphs: {{g: {{path: g.txt}}}}\ncluster: {{kind: local}}\n"
                                         f"steps:\n  - id: s\n    algorithm: jaccard\n    inputs: {{graph: g}}\n"
                                         f"    {key}: {value}\n")
        step = go.load_pipeline(tmp_path / "p.yaml").model.steps[0]
        assert getattr(step, key) is expected
    (tmp_path / "p.yaml").write_text(f"version: 1\ngraphs: {{g: {{path: g.txt}}}}\n"
                                     f"steps: [{{id: s, algorithm: jaccard, inputs: {{graph: g}}, {key}: sometimes}}]\n")
    with pytest.raises(go.ConfigError) as info:
        go.load_pipeline(tmp_path / "p.yaml")
    assert f"At key: {key}" in str(info.value) and "sometimes" in str(info.value), str(info.value)
