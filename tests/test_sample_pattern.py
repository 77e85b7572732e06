"""appclass's pattern generator: impossible requests are refused from Python as from YAML."""
from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphops as go


def _graph() -> go.Graph:
    return go.generate.gnm(30, 120, directed=True, seed=1, node_features=1, edge_features=1)


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.integers(-3, 12), st.booleans(), st.just(2.5)), st.one_of(
    st.integers(0, 2**63 - 1), st.sampled_from([-1, 2**63, 2**64, True, 1.5])))
def test_sample_pattern_refuses_what_it_cannot_honour(max_nodes, seed):
    """max_nodes below 1 (it gave a one-node pattern), a bool or a fraction; a seed outside
    0..2**63-1 or not an integer: an InputError naming the parameter, the value and what is allowed."""
    g = _graph()
    bad_max = isinstance(max_nodes, (bool, float)) or max_nodes < 1
    bad_seed = isinstance(seed, (bool, float)) or not 0 <= seed < 2**63
    if not bad_max and not bad_seed:
        p = go.generate.sample_pattern(g, max_nodes=max_nodes, seed=seed)
        assert 2 <= p.n_vertices <= max_nodes + 1
        return
    with pytest.raises(go.InputError) as info:
        go.generate.sample_pattern(g, max_nodes=max_nodes, seed=seed)
    helps = {"max_nodes": "max_nodes is the most neighbours of the sampled vertex the pattern takes: an integer, "
                          "1 or more", "seed": "seed is an integer in 0..2**63-1"}
    named = [(name, value) for name, value, bad in (("max_nodes", max_nodes, bad_max), ("seed", seed, bad_seed)) if bad]
    text = str(info.value)
    assert any(text.startswith(f"sample_pattern: {name}={value!r}: Input should be ")
               and text.endswith(f". {helps[name]}") for name, value in named), text


def test_sample_pattern_messages():
    g = _graph()
    with pytest.raises(go.InputError) as info:
        go.generate.sample_pattern(g, max_nodes=0)
    assert str(info.value) == ("sample_pattern: max_nodes=0: Input should be greater than or equal to 1. max_nodes "
                               "is the most neighbours of the sampled vertex the pattern takes: an integer, 1 or more")
    with pytest.raises(TypeError, match="sample_pattern: graph must be a graphops Graph; got DataFrame"):
        go.generate.sample_pattern(pd.DataFrame({"src": [0], "dst": [1]}))


def test_a_vertex_with_only_a_self_loop_is_no_pattern():
    loops = go.Graph.from_edgelist(pd.DataFrame({"src": [0, 1], "dst": [0, 1]}), directed=True)
    with pytest.raises(go.InputError, match="no edges between two different vertices .2 edge.s., all self-loops"):
        go.generate.sample_pattern(loops)
    one = go.Graph.from_edgelist(pd.DataFrame({"src": [0, 0, 1], "dst": [0, 1, 1]}), directed=True)
    for seed in range(8):
        assert go.generate.sample_pattern(one, max_nodes=1, seed=seed).n_vertices == 2


def test_a_pipeline_file_refuses_them_too(tmp_path):
    (tmp_path / "p.yaml").write_text(
        "version: 1\ngraphs:\n  d: {generate: {kind: gnm, n: 30, m: 120, seed: 1, directed: true}}\n"
        "  p: {generate: {kind: pattern, of: d, max_nodes: 0, seed: -1}}\n"
        "steps: [{id: s, algorithm: describe, inputs: {graph: p}}]\n")
    with pytest.raises(go.ConfigError) as info:
        go.load_pipeline(tmp_path / "p.yaml")
    assert ("==> At key: generate.max_nodes\n=====> Input should be greater than or equal to 1 (got 0)"
            in str(info.value))
    assert "==> At key: generate.seed\n=====> Input should be greater than or equal to 0 (got -1)" in str(info.value)
