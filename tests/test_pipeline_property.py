"""Random pipelines, valid and broken (hypothesis): a user mistake is a ConfigError at load, never a
traceback at run.

Each generated file either fails ``load_pipeline`` with a ``ConfigError`` (``graphops validate``), or
loads; then ``run_pipeline`` either succeeds or fails with a graphops error (a problem of the input,
said in one line), never with anything the command line would call a bug.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, event, given, settings, strategies as st

import graphops as go
from graphops.errors import ConfigError, GraphopsError, PipelineError, is_user_error
from graphops.io.outputs import OUTPUT_SUFFIXES

NAMES = ["karate", "mutag", "g", "h", "gen", "pat", "Bad Name", "k"]
FILES = {"g.txt": "1 2\n2 3\n3 1\n3 4\n", "w.csv": "src,dst,w\n1,2,0.5\n2,3,1.5\n3,1,2\n",
         "bad.txt": "1 2\n2 x y\n", "d.tsv": "a\tb\nb\tc\nc\ta\n"}
ANY = st.sampled_from([None, 0, 1, -1, 2, 0.5, 1.5, "x", "auto", True, False, [], {}, [1, 2]])

GENERATORS = st.one_of(
    st.fixed_dictionaries({"kind": st.just("rmat"), "scale": st.integers(0, 5), "edge_factor": st.integers(0, 3),
                           "seed": st.integers(0, 2)}),
    st.fixed_dictionaries({"kind": st.just("gnm"), "n": st.integers(0, 12), "m": st.integers(-1, 30),
                           "directed": st.booleans(), "node_features": st.integers(0, 2),
                           "edge_features": st.integers(0, 2)}),
    st.fixed_dictionaries({"kind": st.sampled_from(["pattern", "symmetric"]), "of": st.sampled_from(NAMES)}),
    st.fixed_dictionaries({"kind": st.just("grid2d"), "rows": st.integers(0, 4), "cols": st.integers(1, 4)}),
    st.fixed_dictionaries({"kind": st.just("gnp_set"), "sizes": st.dictionaries(st.integers(0, 8), st.integers(0, 3),
                                                                                 max_size=2),
                           "p": st.sampled_from([0.0, 0.5, 1.0, 1.5])}),
    st.fixed_dictionaries({"kind": st.just("random_cycles"), "n": st.integers(1, 6), "cycles": st.integers(1, 3),
                           "length": st.integers(1, 5)}),
    st.fixed_dictionaries({"kind": st.just("de_bruijn"), "k": st.integers(1, 4), "length": st.integers(2, 30)}),
    st.fixed_dictionaries({"kind": st.sampled_from(["nosuch", "rmat"])}),
)
SOURCES = st.one_of(
    st.fixed_dictionaries({"dataset": st.sampled_from(["karate", "MUTAG", "nosuch", "email-Enron"])}),
    st.fixed_dictionaries({"generate": GENERATORS}, optional={"directed": st.booleans(),
                                                             "device": st.sampled_from(["cpu", "gpu", "auto", "x"])}),
    st.fixed_dictionaries({"path": st.sampled_from([*FILES, "missing.txt", "."])},
                          optional={"weight": st.sampled_from([2, "w", None, 9]),
                                    "header": st.sampled_from(["auto", True, False, "maybe"]),
                                    "ids": st.sampled_from(["auto", "string", "integer"]),
                                    "directed": st.booleans(), "dedupe": st.booleans(),
                                    "src": st.sampled_from([0, 1, "src", "a"]),
                                    "columns": st.sampled_from([["u", "v"], ["u", "v", "w"], []])}),
    st.fixed_dictionaries({"from_step": st.sampled_from(["s0", "s1", "s2", "nosuch", "Bad"])}, optional={
        "src": st.sampled_from(["first", "second", "n_vertices", "x"]), "dst": st.sampled_from(["second", "first", "y"]),
        "weight": st.sampled_from(["jaccard_coeff", "n_edges", "z"]), "directed": st.booleans(),
        "where": st.dictionaries(st.sampled_from(["first", "jaccard_coeff", "n_edges", "x"]),
                                 st.dictionaries(st.sampled_from(["ge", "lt", "eq", "in", "like"]), ANY, max_size=2),
                                 max_size=2)}),
    st.dictionaries(st.sampled_from(["path", "generate", "dataset", "color", "from_step"]), ANY, max_size=2),
)
PARAMS = {
    "node_kernel": st.sampled_from(["delta", "gaussian", "gausian", "none", {"gaussian": {"gamma": 0.5}},
                                    {"kronecker_delta": {"h": 0.5, "on": "label"}}, {"constant": 1.0},
                                    {"kronecker_delta": {"h": 2.0, "on": "label"}}, {"deltaa": {}}]),
    "edge_kernel": st.sampled_from([{"kronecker_delta": {"h": 0.5, "on": "label"}}, {"constant": 0.5}, "x"]),
    "length_kernel": st.sampled_from(["delta", "gaussian", {"gaussian": {"gamma": 2.0}}, "delt"]),
    "q": st.sampled_from([-0.1, 0.0, 0.05, 0.5, 1.0]), "tol": st.sampled_from([None, 1e-6, 0.0, -1.0]),
    "max_iter": st.sampled_from([None, 1, 50, 0, -3]), "tile": st.sampled_from([1, 3, 0, 1024]),
    "source": st.sampled_from([None, 1, 2, "alice", 99]), "top_k": st.sampled_from([None, 1, 0, -1]),
    "cpu_share": st.sampled_from([None, 0.0, 0.3, 1.5]), "memory_limit": st.sampled_from([None, 1e9, 0.0, -1.0]),
}


def _params(fields: list[str]) -> st.SearchStrategy:
    keys = st.sampled_from(fields + ["bogus"]) if fields else st.just("bogus")
    return st.dictionaries(keys, ANY, max_size=2).flatmap(
        lambda base: st.fixed_dictionaries({k: PARAMS.get(k, ANY) for k in base}))


@st.composite
def pipelines(draw) -> dict:
    from graphops.host.registry import get_registry

    algorithms = get_registry().algorithms
    graphs = draw(st.dictionaries(st.sampled_from(NAMES), SOURCES, min_size=0, max_size=3))
    steps = []
    for i in range(draw(st.integers(0, 3))):
        name = draw(st.sampled_from([*sorted(algorithms), "nosuch"]))
        algo = algorithms.get(name)
        slots = [s.name for s in algo.inputs] if algo else ["graph"]
        step = {"id": draw(st.sampled_from([f"s{i}", "s0", "Bad"])), "algorithm": name,
                "inputs": draw(st.dictionaries(st.sampled_from(slots + ["bogus"]), st.sampled_from(NAMES),
                                               max_size=len(slots)))}
        extra = draw(st.fixed_dictionaries({}, optional={
            "backend": st.sampled_from(["cpu", "auto", "gpu", "hybrid", "tpu", "networkx", "CPU"]),
            "params": _params(list(algo.params.model_fields) if algo else []),
            "output": st.sampled_from(["r.csv", "r.parquet", "r.npy", "r.npz", "r.txt", "../r.csv", "/r.csv",
                                       "g.txt"]),
            "plot": st.booleans()}))
        steps.append({**step, **extra})
    top = draw(st.fixed_dictionaries({}, optional={
        "name": st.sampled_from(["p", "Bad Name"]), "backend": st.sampled_from(["auto", "cpu", "gpu", "Cpu", "x"]),
        "output_dir": st.sampled_from(["out", "out/deeper", "g.txt"]),
        "bench": st.fixed_dictionaries({"repeat": st.integers(0, 2)}),
        "cluster": st.sampled_from([{"kind": "nosuch"}, {"address": "x", "kind": "local"}, {"workers": 2}]),
        "extra_key": ANY}))
    version = draw(st.sampled_from([1, 1, 1, 2, "x", None]))
    return {**({"version": version} if version is not None else {}), **top, "graphs": graphs, "steps": steps}


ONE_GRAPH = st.sampled_from([
    {"dataset": "karate"}, {"path": "g.txt"}, {"path": "w.csv", "weight": "w"}, {"path": "d.tsv", "directed": True},
    {"generate": {"kind": "rmat", "scale": 4, "edge_factor": 2}},
    {"generate": {"kind": "gnm", "n": 8, "m": 14, "node_features": 2, "edge_features": 2}},
    {"generate": {"kind": "grid2d", "rows": 3, "cols": 3}},
    {"generate": {"kind": "random_cycles", "n": 6, "cycles": 2, "length": 4}},
    {"generate": {"kind": "de_bruijn", "k": 3, "length": 20}}])
GRAPH_SETS = st.sampled_from([{"generate": {"kind": "gnp_set", "sizes": {4: 3, 6: 2}, "p": 0.5}},
                              {"generate": {"kind": "gnp_set", "sizes": {1: 2, 3: 1}, "p": 1.0, "n_attrs": 0}}])


def _near_valid(algo) -> st.SearchStrategy:
    """Parameters of the algorithm's own fields: Literal choices, booleans, or the pool above."""
    import typing

    choices = {}
    for name, field in algo.params.model_fields.items():
        args = typing.get_args(field.annotation)
        if typing.get_origin(field.annotation) is typing.Literal:
            choices[name] = st.sampled_from(args)
        elif field.annotation is bool:
            choices[name] = st.booleans()
        elif name in PARAMS:
            choices[name] = PARAMS[name]
    return st.fixed_dictionaries({}, optional=choices)


@st.composite
def coherent_pipelines(draw) -> dict:
    """Pipelines a user would write: declared graphs of the kinds each step takes, known algorithms,
    parameters drawn from near-valid values, outputs of fitting suffixes; mostly loadable."""
    from graphops.host.registry import get_registry

    algorithms = get_registry().algorithms
    graphs, steps = {}, []
    for i in range(draw(st.integers(1, 3))):
        algo = algorithms[draw(st.sampled_from(sorted(algorithms)))]
        inputs = {}
        for slot in algo.inputs:
            if slot.name == "pairs" or (not slot.required and draw(st.booleans())):
                continue
            name = f"g{len(graphs)}"
            graphs[name] = draw(GRAPH_SETS if "graph" not in slot.kinds else ONE_GRAPH)
            if algo.name == "appclass":
                graphs[name] = {"generate": {"kind": "pattern", "of": inputs["data"], "max_nodes": 4}} \
                    if slot.name == "pattern" else {"generate": {"kind": "gnm", "n": 8, "m": 16, "directed": True,
                                                                 "node_features": 2, "edge_features": 2}}
            inputs[slot.name] = name
        step = {"id": f"s{i}", "algorithm": algo.name, "inputs": inputs,
                "params": draw(_near_valid(algo)),
                "backend": draw(st.sampled_from(["cpu", "auto", *algo.backends]))}
        if draw(st.booleans()):
            suffixes = OUTPUT_SUFFIXES[algo.result] + tuple(algo.writers)
            step["output"] = f"s{i}" + draw(st.sampled_from([*suffixes, ".npz"]))
        steps.append(step)
    return {"version": 1, "graphs": graphs, "steps": steps}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.one_of(pipelines(), coherent_pipelines(), coherent_pipelines()))
def test_a_pipeline_is_refused_at_load_or_runs_or_fails_with_a_graphops_error(data):
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        for name, text in FILES.items():
            (folder / name).write_text(text)
        path = folder / "p.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        try:
            loaded = go.load_pipeline(path)
        except ConfigError as exc:
            assert str(exc).startswith(f"{path} is invalid (")
            event("refused at load")
            return
        try:
            go.run_pipeline(loaded, out=folder / "o")
            event("ran")
        except PipelineError as exc:
            assert is_user_error(exc), f"a step failed with what the CLI calls a bug: {exc}"
            assert (folder / "o" / f"{loaded.name}.summary.json").exists()
            event("a step failed with a graphops error")
        except GraphopsError:
            event("refused at run")


SOURCE_KEYS = ["path", "generate", "dataset", "smiles", "nodes", "format", "src", "dst", "weight", "columns", "header",
               "ids", "directed", "dedupe", "device", "partitioned", "column", "label", "from_step", "where"]
SOURCE_VALUES = {"path": st.sampled_from(["g.txt", "w.csv", "e/*.parquet", ""]), "generate": GENERATORS,
                 "dataset": st.sampled_from(["karate", "nosuch"]), "smiles": st.just("m.csv"),
                 "nodes": st.just("n.csv"), "format": st.sampled_from(["csv", "tu", "x"]), "weight": st.just("w"),
                 "partitioned": st.booleans(), "ids": st.sampled_from(["auto", "string"]),
                 "device": st.sampled_from(["cpu", "auto"]), "directed": st.booleans(), "dedupe": st.booleans(),
                 "from_step": st.sampled_from(["s", "nosuch"]),
                 "where": st.sampled_from([{"n_edges": {"ge": 1}}, {"x": {"in": [1]}}, {}])}


@given(keys=st.lists(st.sampled_from(SOURCE_KEYS), min_size=0, max_size=5, unique=True), data=st.data())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_graph_source_takes_only_its_kinds_keys(keys, data):
    """Any mix of source keys: exactly one kind's source, every key given one that kind reads (none
    silently ignored), or a ConfigError at the graph; never another exception. And the mixes the
    kinds must take: their own keys alone (nulls and partitioned: false anywhere) always load."""
    from graphops.pipeline.graph_sources import SOURCE_KINDS, validate_source

    given = {k: data.draw(SOURCE_VALUES.get(k, ANY), label=k) for k in keys}
    text = yaml.safe_dump({"version": 1, "graphs": {"g": given},
                           "steps": [{"id": "s", "algorithm": "describe", "inputs": {"graph": "g"}}]})
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "p.yaml").write_text(text)
        try:
            loaded = go.load_pipeline(Path(tmp) / "p.yaml")
        except ConfigError as exc:
            assert "At graphs.g" in str(exc) or "At steps" in str(exc) or "At key" in str(exc), str(exc)
            return
    src = loaded.model.graphs["g"]
    assert src == validate_source(given)
    assert sum(given.get(k) is not None for k in SOURCE_KINDS) == 1
    # (a key given as null is absent)
    assert {k for k, v in given.items() if v is not None} <= set(type(src).model_fields), (given, type(src).__name__)
