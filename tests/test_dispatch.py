"""Dispatch: backend choice (strict when explicit, explained when auto), params, inputs, families."""
from __future__ import annotations

import logging

import numpy as np

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphops as go
from graphops.base.device import gpu_available
from graphops.host.registry import get_registry


@pytest.fixture
def g():
    return go.Graph.from_edgelist(pd.DataFrame({"src": [0, 1], "dst": [1, 2]}))


@pytest.mark.skipif(gpu_available(), reason="checks the error raised where no GPU is usable")
def test_explicit_gpu_without_gpu_says_what_was_tried(g):
    with pytest.raises(go.BackendUnavailableError) as info:
        go.run("describe", g, backend="gpu")
    text = str(info.value)
    assert text.startswith("describe: backend 'gpu' was requested but cannot run here: ")
    assert "To remedy this: install the GPU extra (pip install 'graphops[gpu]')" in text


@pytest.mark.skipif(gpu_available(), reason="checks the fallback taken where no GPU is usable")
def test_auto_falls_back_and_logs_why(g, caplog):
    with caplog.at_level(logging.INFO, logger="graphops"):
        outcome = go.execute(get_registry().algorithm("describe"), {"graph": g}, "auto", {})
    assert outcome.backend == "cpu" and outcome.reason.startswith("auto: gpu not used (")
    assert any("describe: backend 'cpu' (auto: gpu not used" in r.getMessage() for r in caplog.records)


def test_describe_sends_small_graphs_to_the_cpu_under_auto(g, monkeypatch):
    """As on a GPU host (the GPU backend looks usable): describe's own hook picks the CPU for a
    small graph, and defers to the default rule (GPU) for a large one."""
    import numpy as np

    from graphops.engine import choose, dispatch

    monkeypatch.setattr(choose, "_usable", lambda spec: (True, "usable (pretended)"))
    algo = get_registry().algorithm("describe")
    small = dispatch.plan(algo, {"graph": g}, "auto", {})
    assert (small.backend, small.reason) == ("cpu", "auto: chosen by a graphops_choose_backend hook")
    rng = np.random.default_rng(1)
    big = go.Graph.from_edgelist(pd.DataFrame({"src": rng.integers(0, 50_000, 200_000),
                                               "dst": rng.integers(0, 50_000, 200_000)}))
    large = dispatch.plan(algo, {"graph": big}, "auto", {})
    assert (large.backend, large.reason) == ("gpu", "auto: a usable GPU was found")


@pytest.mark.gpu
def test_auto_prefers_a_usable_gpu_for_large_graphs():
    import numpy as np

    rng = np.random.default_rng(1)
    big = go.Graph.from_edgelist(pd.DataFrame({"src": rng.integers(0, 50_000, 200_000),
                                               "dst": rng.integers(0, 50_000, 200_000)}))
    outcome = go.execute(get_registry().algorithm("describe"), {"graph": big}, "auto", {})
    assert outcome.backend == "gpu" and outcome.device == "gpu"
    assert isinstance(outcome.result, pd.DataFrame)  # pandas in, pandas out, whichever backend ran


def test_unknown_backend(g):
    with pytest.raises(ValueError) as info:
        go.run("describe", g, backend="cpx")
    assert str(info.value) == ("describe: unknown backend 'cpx'. Offered: auto, cpu, gpu, networkx. "
                               "Did you mean 'cpu'?")


def test_unknown_parameter(g):
    with pytest.raises(ValueError) as info:
        go.run("describe", g, backend="cpu", threshold=0.5)
    assert str(info.value) == ("describe: invalid parameters\n  threshold: Unknown key 'threshold'. "
                               "Allowed keys: (none).")


def test_wrong_input_kind_and_count(g):
    with pytest.raises(TypeError, match="describe: input 'graph' takes a graphops.Graph or a networkx graph, or a "
                                        "graphops.GraphSet .*; got pandas.DataFrame"):
        go.run("describe", pd.DataFrame({"src": [0]}))
    with pytest.raises(TypeError, match=r"describe takes inputs \(graph\); got 2 input\(s\)"):
        go.run("describe", g, g)


def test_backend_named_by_user_is_case_insensitive(g):
    assert go.execute(get_registry().algorithm("describe"), {"graph": g}, "CPU", {}).backend == "cpu"


def test_peer_backend_missing_package(monkeypatch, g):
    monkeypatch.setattr("graphops.engine.choose.module_available", lambda name: name != "networkx")
    with pytest.raises(go.BackendUnavailableError, match="the package\\(s\\) 'networkx' could not be imported. "
                                                        "To remedy this: install networkx"):
        go.run("describe", g, backend="networkx")


def _wrong_columns(csr, params):
    return {"vertex": [0], "deg": [1]}


def _not_an_array(csr, params):
    return {"K": [[1.0]]}


def test_returned_columns_are_checked_against_the_declaration(g):
    from graphops import Algorithm, Params, PluginError
    from graphops.engine.dispatch import execute

    frame = Algorithm(name="cols", params=Params, inputs=("graph",), outputs=("vertex", "degree"),
                      backends={"cpu": "tests.test_dispatch:_wrong_columns"}, plugin="sample")
    with pytest.raises(PluginError) as info:
        execute(frame, {"graph": g}, "cpu", {})
    assert str(info.value) == ("backend 'cpu' of algorithm 'cols' (plugin sample) returned columns ['vertex', "
                               "'deg']; the algorithm declares ['vertex', 'degree'] (missing: degree) "
                               "(undeclared: deg). Declare every output column in Algorithm(outputs=...)")
    array = Algorithm(name="arr", params=Params, inputs=("graph",), result="array",
                      backends={"cpu": "tests.test_dispatch:_not_an_array"}, plugin="sample")
    with pytest.raises(PluginError, match="returned a dict; the algorithm declares an array result"):
        execute(array, {"graph": g}, "cpu", {})


def test_string_ids_through_jaccard_pairs():
    g = go.Graph.from_edgelist(pd.DataFrame({"src": ["ann", "ann", "cy"], "dst": ["bob", "cy", "bob"]}))
    res = go.run("jaccard", g, pairs=pd.DataFrame({"first": ["bob", "ann"], "second": ["cy", "bob"]}),
                 backend="cpu")
    assert res["first"].tolist() == ["bob", "ann"] and res["jaccard_coeff"].tolist() == [1 / 3, 1 / 3]
    with pytest.raises(ValueError, match=r"names 1 vertex id\(s\) that are not in the graph, in 1 of its rows \(e.g. 'zed'\)"):
        go.run("jaccard", g, pairs=pd.DataFrame({"first": ["zed"], "second": ["ann"]}), backend="cpu")


def test_execute_call_reports_details_and_pairs_bind_by_keyword(g):
    outcome = go.execute_call("jaccard", g, pairs=pd.DataFrame({"a": [0], "b": [2]}), backend="cpu")
    assert outcome.backend == "cpu" and outcome.details == {} and outcome.result["second"].tolist() == [2]
    with pytest.raises(TypeError, match="input 'pairs' given twice"):
        go.run("jaccard", g, pd.DataFrame({"a": [0], "b": [2]}), pairs=pd.DataFrame({"a": [0], "b": [2]}))


def test_result_frames_own_their_columns():
    """Result frames take the backend's arrays without copying them into one block, so they
    must never share memory with what a graph caches: editing a result changes no later one."""

    g = go.Graph.from_edgelist(pd.DataFrame({"src": [0, 1, 2, 0], "dst": [1, 2, 0, 2]}))
    first = go.run("jaccard", g, backend="cpu")
    keep = first.copy()
    first.loc[0, "first"] = 99
    first.loc[0, "jaccard_coeff"] = -1.0
    pd.testing.assert_frame_equal(go.run("jaccard", g, backend="cpu"), keep)
    tour = go.run("euler", go.Graph.from_edgelist(pd.DataFrame({"src": [0, 1], "dst": [1, 0]}), directed=True))
    assert not np.shares_memory(tour["src"].to_numpy(), tour["dst"].to_numpy())


def test_numba_allocations_count_as_fresh_but_numba_views_do_not():
    """A backend's array that Numba allocated may become the result frame's own column; a
    view Numba made of the caller's array may not (it would be copied)."""
    from graphops.engine.plan import _fresh
    from graphops.base.jit import njit

    @njit
    def made(n):
        return np.arange(n)

    @njit
    def view(a):
        return a[1:]

    given = np.arange(5)
    assert _fresh(made(4), {"x": 0})
    assert not _fresh(view(given), {"x": 0})
    assert not _fresh(given[1:], {"x": 0})
    a = made(3)
    assert not _fresh(a, {"x": a, "y": a})  # one array in two columns


def _literal_choices(annotation) -> list[str]:
    import typing

    if typing.get_origin(annotation) is typing.Literal:
        return [a for a in typing.get_args(annotation) if isinstance(a, str)]
    return [c for arg in typing.get_args(annotation) for c in _literal_choices(arg)]


def _enumerated():
    from graphops.host.registry import get_registry

    for algo in sorted(get_registry().algorithms.values(), key=lambda a: a.name):
        for name, field in algo.params.model_fields.items():
            for choice in _literal_choices(field.annotation):
                if len(choice) > 3:
                    yield algo.name, name, choice


@pytest.mark.parametrize("algorithm, field, choice", list(_enumerated()))
def test_every_enumerated_parameter_value_gets_a_did_you_mean(algorithm, field, choice):
    from graphops.host.registry import get_registry
    from graphops.host.validation import build_params

    typo = choice[:-1] + ("x" if choice[-1] != "x" else "y")
    with pytest.raises(ValueError) as info:
        build_params(get_registry().algorithm(algorithm), {field: typo})
    assert f"Did you mean {choice!r}?" in str(info.value)


@pytest.mark.parametrize("algorithm, params, choice", [
    ("sp_kernel", {"node_kernel": "gausian"}, "gaussian"),
    ("sp_kernel", {"length_kernel": "delt"}, "delta"),
    ("sp_kernel", {"node_kernel": {"gausian": {"gamma": 1}}}, "gaussian"),
    ("mg_kernel", {"node_kernel": {"kronecker_delt": {"h": 0.5}}}, "kronecker_delta"),
    ("mg_kernel", {"node_kernel": {"square_exponentail": {"length_scale": 1.0}}}, "square_exponential"),
    ("mg_kernel", {"edge_kernel": {"kronecker_delta": {"hh": 0.5}}}, "h"),
])
def test_kernel_names_get_a_did_you_mean(algorithm, params, choice):
    from graphops.host.registry import get_registry
    from graphops.host.validation import build_params

    with pytest.raises(ValueError) as info:
        build_params(get_registry().algorithm(algorithm), params)
    assert f"Did you mean {choice!r}?" in str(info.value)


def test_read_options_and_generator_kinds_get_a_did_you_mean(tmp_path):
    (tmp_path / "e.txt").write_text("1 2\n")
    with pytest.raises(ValueError, match="Did you mean 'string'"):
        go.read_graph(tmp_path / "e.txt", ids="strng")
    (tmp_path / "p.yaml").write_text("version: 1\ngraphs: {g: {generate: {kind: rmatt, scale: 3}}}\n"
                                     "steps: [{id: s, algorithm: describe, inputs: {graph: g}}]\n")
    with pytest.raises(go.ConfigError) as info:
        go.load_pipeline(tmp_path / "p.yaml")
    assert "==> At key: generate.kind\n=====> Unknown generator kind 'rmatt'. Installed: " in str(info.value)
    assert str(info.value).endswith("Did you mean 'rmat'?")


def _molecules():
    nx = pytest.importorskip("networkx")
    a, b = nx.Graph(), nx.Graph()
    a.add_nodes_from([(0, {"label": 1, "element": "C"}), (1, {"label": 2, "element": "O"})])
    a.add_edge(0, 1, label=1, order=2.0)
    b.add_nodes_from([(0, {"label": 1, "element": "C"}), (1, {"label": 1, "element": "C"}),
                      (2, {"label": 2, "element": "N", "pos": (0, 1)})])
    b.add_edges_from([(0, 1, {"label": 1, "order": 1.0}), (1, 2, {"label": 2, "order": 1.0})])
    return a, b


def test_networkx_graphs_go_in_as_graphs_and_lists_as_graph_sets():
    nx = pytest.importorskip("networkx")
    karate = nx.karate_club_graph()
    pd.testing.assert_frame_equal(go.run("describe", karate, backend="cpu"),
                                  go.run("describe", go.Graph.from_networkx(karate), backend="cpu"))
    a, b = _molecules()
    named = go.GraphSet.from_networkx([a, b], node_label="label", edge_label="label",
                                      node_features=["element"], edge_features=["order"])
    auto = go.GraphSet.from_networkx([a, b])  # 'pos' is not on every node: not a feature
    assert sorted(auto.node_feature_table()) == sorted(named.node_feature_table()) == ["element", "label"]
    for given in ([a, b], (a, b), [go.Graph.from_networkx(a), go.Graph.from_networkx(b)],
                  np.array([go.Graph.from_networkx(a), go.Graph.from_networkx(b)], dtype=object)):
        np.testing.assert_array_equal(go.run("sp_kernel", given, backend="cpu"),
                                      go.run("sp_kernel", named, backend="cpu"))
        np.testing.assert_allclose(go.run("mg_kernel", given, backend="cpu"), go.run("mg_kernel", named, backend="cpu"))


@pytest.mark.parametrize("algorithm, given, message", [
    ("mg_kernel", "nx", "mg_kernel: input 'graphs' takes a graphops.GraphSet or a list of networkx graphs or of "
                        "graphops.Graph objects; got networkx.classes.graph.Graph (one graph: pass a list of it, [G])"),
    ("describe", 5, "describe: input 'graph' takes a graphops.Graph or a networkx graph, or a graphops.GraphSet or "
                    "a list of networkx graphs or of graphops.Graph objects; got int."),
    ("sp_kernel", [], "got an empty list."),
    ("sp_kernel", [1, "a"], "got a list of int and str."),
    ("jaccard", "df", "jaccard: input 'graph' takes a graphops.Graph or a networkx graph, or a graphops.DaskGraph; "
                      "got pandas.DataFrame."),
])
def test_other_inputs_are_named_in_full_with_what_is_accepted(algorithm, given, message):
    nx = pytest.importorskip("networkx")
    given = {"nx": nx.path_graph(3), "df": pd.DataFrame({"src": [1]})}.get(given, given) \
        if isinstance(given, str) else given
    with pytest.raises(TypeError) as info:
        go.run(algorithm, given, backend="cpu")
    assert message in str(info.value)


def test_kernel_estimators_take_lists_of_networkx_graphs_and_of_graphs():
    from graphops.kernels import ShortestPathKernel

    a, b = _molecules()
    k = ShortestPathKernel(backend="cpu")
    square = k.fit_transform([a, b])
    np.testing.assert_array_equal(square, go.run("sp_kernel", [a, b], backend="cpu"))
    np.testing.assert_array_equal(k.transform([go.Graph.from_networkx(b)]), square[1:])
    with pytest.raises(TypeError, match="ShortestPathKernel.fit takes .*; got a list of int"):
        k.fit([1, 2])


@st.composite
def _shaped_results(draw):
    n = draw(st.integers(1, 6))
    dtype = draw(st.sampled_from(["int64", "int32", "uint32", "uint64", "float64"]))
    low = 0 if dtype.startswith("u") else -3
    values = draw(st.lists(st.integers(low, n + 3), max_size=8))
    if dtype == "float64" and values and draw(st.booleans()):
        values[draw(st.integers(0, len(values) - 1))] = float("nan")
    degree_len = draw(st.sampled_from([len(values), len(values), len(values) + 1]))
    return n, {"vertex": values, "dtype": dtype, "degree_len": degree_len}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_shaped_results())
def test_results_are_checked_for_lengths_and_vertex_index_ranges(case):
    """Columns of different lengths, and vertex indices that are not integers in 0..n-1 (negative,
    past the last vertex, a float dtype, NaN), are the plugin's bug, named as such with the plugin,
    its distribution, the algorithm, the backend and the column; good indices map to the ids."""
    from graphops import Algorithm, PluginError
    from graphops.engine.dispatch import execute
    from tests.shaped_backend import ShapedParams

    n, params = case
    ids = [10 * (i + 1) for i in range(n)]
    g = go.Graph.from_edgelist(pd.DataFrame({"src": ids[:1], "dst": ids[-1:]}),
                               nodes=pd.DataFrame({"id": ids}))
    algo = Algorithm(name="shaped", params=ShapedParams, inputs=("graph",), outputs=("vertex", "degree"),
                     vertex_columns=("vertex",), backends={"cpu": "tests.shaped_backend:shaped"},
                     plugin="sample", distribution="sample-plugin 0.1")
    values = params["vertex"]
    where = "backend 'cpu' of algorithm 'shaped' (plugin sample, sample-plugin 0.1) returned "
    if params["degree_len"] != len(values):
        message = (f"{where}columns of different lengths (vertex: {len(values)}, degree: {params['degree_len']}); "
                   f"a frame result has one value per row in every column. Fix the backend")
    elif params["dtype"] == "float64":
        nan = " and holds NaN" if any(v != v for v in values) else ""
        message = (f"{where}vertex column 'vertex' (indices of input 'graph', 0..{n - 1}) has dtype float64{nan}; "
                   f"vertex indices are integers (int32 or int64); graphops maps these indices to the caller's "
                   f"ids. Fix the backend")
    elif any(not 0 <= v < n for v in values):
        bad = [i for i, v in enumerate(values) if not 0 <= v < n]
        message = (f"{where}vertex column 'vertex' (indices of input 'graph', 0..{n - 1}) holds {len(bad)} value(s) "
                   f"out of range (row {bad[0]}: {values[bad[0]]}; smallest {min(values)}, largest {max(values)}); "
                   f"graphops maps these indices to the caller's ids. Fix the backend")
    else:
        out = execute(algo, {"graph": g}, "cpu", params).result
        assert out["vertex"].tolist() == [ids[v] for v in values]
        return
    with pytest.raises(PluginError) as info:
        execute(algo, {"graph": g}, "cpu", params)
    assert str(info.value) == message


@pytest.mark.gpu
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(-3, 9), max_size=8), st.sampled_from(["int32", "int64", "uint32", "float32"]),
       st.integers(1, 6))
def test_vertex_index_check_says_the_same_of_cupy_and_numpy_arrays(xp, values, dtype, n):
    from graphops.engine.plan import index_problem

    host = np.array(values).astype(dtype)
    assert index_problem(xp.asarray(host), n) == index_problem(host, n)


def test_an_input_that_is_none_is_named():
    """go.run('describe', None) said 'got 0 input(s)'."""
    with pytest.raises(TypeError) as info:
        go.run("describe", None)
    assert str(info.value) == "describe: input 'graph' is None; it takes a graph or a graphset"
