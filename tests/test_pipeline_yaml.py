"""Pipeline YAML read safely: alias bombs refused before they expand, repeated keys refused with
their place, merge keys still merged, nesting too deep refused in a line."""
from __future__ import annotations

import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

import graphops as go
from graphops.errors import ConfigError
from graphops.pipeline.yamlfile import MAX_ALIAS_NODES, SCALAR_CHARS_PER_NODE


@pytest.fixture(scope="module")
def describe_only():
    from graphops.host.manager import make_plugin_manager
    from graphops.host.registry import Registry

    return Registry(make_plugin_manager(autoload=False, plugins=["describe"]))


def errors_of(folder: Path, text: str, registry) -> str:
    path = folder / "p.yaml"
    path.write_text(textwrap.dedent(text))
    with pytest.raises(ConfigError) as info:
        go.load_pipeline(path, registry)
    return str(info.value).replace(str(path), "p.yaml")


def _laughs(levels: int = 9, width: int = 9) -> str:
    """The billion laughs as a flow sequence: ``width ** levels`` leaves from a few hundred bytes."""
    chain = ["&a0 [" + ", ".join(["lol"] * width) + "]"]
    chain += [f"&a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "[" + ", ".join(chain) + "]"


REFUSED = ("p.yaml is invalid (1 error)\n==> At line {line}, column {column}\n"
           "=====> The aliases up to *a4 stand for more than 250,000 nodes (an alias bomb?); a pipeline file needs "
           "far fewer: write the repeated parts out, or repeat them with fewer aliases")


def _third_alias_of_a4(text: str) -> tuple[int, int]:
    """Where the bomb goes over the budget: 9 * 91 + ... = 74,718 nodes by a4's anchor, and each alias to
    a4 adds 66,430, so the third one passes 250,000. Line and column, from 1."""
    at = -1
    for _ in range(3):
        at = text.index("*a4", at + 1)
    line = text.count("\n", 0, at)
    return line + 1, at - (text.rfind("\n", 0, at) + 1) + 1


@pytest.mark.parametrize("where", [
    "description: BOMB\ngraphs: {g: {dataset: karate}}\nsteps: [{id: s, algorithm: describe, inputs: {graph: g}}]",
    "graphs: {g: {dataset: karate}}\nsteps:\n  - {id: s, algorithm: describe, inputs: {graph: g},\n"
    "     params: {node_kernel: {tensor_product: {label: BOMB}}}}",
    "graphs: {g: {generate: {kind: gnm, n: 4, m: 2, extra: BOMB}}}\n"
    "steps: [{id: s, algorithm: describe, inputs: {graph: g}}]",
    "nosuch: BOMB\ngraphs: {g: {dataset: karate}}\nsteps: [{id: s, algorithm: describe, inputs: {graph: g}}]",
])
def test_an_alias_bomb_is_refused_at_once_wherever_it_sits(tmp_path, describe_only, where):
    start = time.process_time()
    text = "version: 1\n" + where.replace("BOMB", _laughs())
    line, column = _third_alias_of_a4(text)
    assert errors_of(tmp_path, text, describe_only) == REFUSED.format(line=line, column=column)
    assert time.process_time() - start < 1.0


def test_an_alias_inside_its_own_anchor_is_refused(tmp_path, describe_only):
    assert errors_of(tmp_path, "version: 1\ndescription: &me [a, *me]\n", describe_only) == (
        "p.yaml is invalid (1 error)\n==> At line 2, column 22\n"
        "=====> The alias *me is inside its own anchor &me (a structure that contains itself); write the "
        "repeated part out")


def test_ordinary_anchors_and_merge_keys_load(tmp_path, describe_only):
    """A few anchors, a merge (``<<``) whose keys a step overrides: loaded as before."""
    path = tmp_path / "p.yaml"
    path.write_text(textwrap.dedent("""\
        version: 1
        graphs: {g: {dataset: karate}, h: &src {dataset: karate, directed: false}, k: *src}
        steps:
          - &base {id: s1, algorithm: describe, inputs: {graph: g}, backend: cpu}
          - <<: *base
            id: s2
            inputs: {graph: h}
          - {<<: *base, id: s3}
        """))
    loaded = go.load_pipeline(path, describe_only)
    assert [(s.id, s.inputs["graph"], s.backend) for s in loaded.model.steps] == [
        ("s1", "g", "cpu"), ("s2", "h", "cpu"), ("s3", "g", "cpu")]
    assert loaded.model.graphs["k"] == loaded.model.graphs["h"]


def test_repeated_keys_are_refused_with_the_place_of_each(tmp_path, describe_only):
    assert errors_of(tmp_path, """\
        version: 1
        graphs:
          web: {dataset: karate}
          web: {path: g.txt}
        steps:
          - id: x
            algorithm: describe
            inputs: {graph: web}
            algorithm: describe
            params: {node_kernel: {kronecker_delta: {h: 0.5, h: 0.7}}}
          - {<<: {id: y, backend: cpu}, id: z, algorithm: describe, inputs: {graph: web}, backend: cpu, backend: gpu}
        version: 1
        """, describe_only) == (
        "p.yaml is invalid (5 errors)\n"
        "==> At graphs.web\n"
        "=====> Duplicate key 'web' (line 4; first at line 3)\n"
        "==> At steps[0] (id='x', algorithm='describe')\n"
        "==> At key: algorithm\n"
        "=====> Duplicate key 'algorithm' (line 9; first at line 7)\n"
        "==> At steps[0] (id='x', algorithm='describe')\n"
        "==> At key: params.node_kernel.kronecker_delta.h\n"
        "=====> Duplicate key 'h' (line 10; first at line 10)\n"
        "==> At steps[1] (id='z', algorithm='describe')\n"
        "==> At key: backend\n"
        "=====> Duplicate key 'backend' (line 11; first at line 11)\n"
        "==> At key: version\n"
        "=====> Duplicate key 'version' (line 12; first at line 1)")


def test_yaml_nested_too_deeply_is_one_line(tmp_path, describe_only):
    assert errors_of(tmp_path, "version: 1\ndescription: " + "[" * 5000 + "]" * 5000 + "\n", describe_only) == (
        "p.yaml is invalid (1 error)\n"
        "=====> The YAML is nested too deeply to read (hundreds of levels); a pipeline file needs a few")


def _scalar_size(text: str) -> int:
    return 1 + len(text) // SCALAR_CHARS_PER_NODE


@st.composite
def alias_chains(draw) -> tuple[str, int]:
    """A chain of anchors, each a sequence or mapping of aliases to the one before (or of scalars), and
    the number of nodes its aliases stand for, counted here the slow, obvious way."""
    leaf = "x" * draw(st.integers(1, 300))
    levels = draw(st.lists(st.tuples(st.sampled_from(["seq", "map"]), st.integers(1, 12)), min_size=1, max_size=10))
    size, aliased, chain = _scalar_size(leaf), 0, []
    for i, (kind, width) in enumerate(levels):
        item = f"*a{i - 1}" if i else leaf
        if kind == "seq":
            chain.append(f"&a{i} [" + ", ".join([item] * width) + "]")
            new = 1 + width * size
        else:
            chain.append(f"&a{i} {{" + ", ".join(f"k{j}: {item}" for j in range(width)) + "}")
            new = 1 + width * (_scalar_size("k0") + size)
        aliased += width * size if i else 0
        size = new
    return "[" + ", ".join(chain) + "]", aliased


PLACES = ["description: CHAIN\nsteps: [{id: s, algorithm: describe, inputs: {graph: g}}]",
          "steps: [{id: s, algorithm: describe, inputs: {graph: g}, params: {node_kernel: {sum: CHAIN}}}]",
          "bogus: CHAIN\nsteps: [{id: s, algorithm: describe, inputs: {graph: g}}]"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chain=alias_chains(), place=st.sampled_from(PLACES))
def test_nested_aliases_load_or_are_refused_within_a_second(chain, place):
    text, aliased = chain
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "p.yaml"
        path.write_text("version: 1\ngraphs: {g: {dataset: karate}}\n" + place.replace("CHAIN", text) + "\n")
        start = time.process_time()
        try:
            go.load_pipeline(path)
            refused = None
        except ConfigError as exc:
            refused = str(exc)
        assert time.process_time() - start < 1.0
    by_aliases = refused is not None and "(an alias bomb?)" in refused
    event("refused: aliases" if by_aliases else "refused: otherwise" if refused else "loaded")
    assert by_aliases == (aliased > MAX_ALIAS_NODES), (aliased, refused and refused[:300])


def test_a_large_value_is_shown_cut_in_the_message(tmp_path, describe_only):
    """Just under the alias budget, a wrong value is still shown in a line, not in megabytes."""
    text = ("version: 1\ndescription: " + _laughs(levels=5, width=10) + "\ngraphs: {g: {dataset: karate}}\n"
            "steps: [{id: s, algorithm: describe, inputs: {graph: g}}]\n")
    message = errors_of(tmp_path, text, describe_only)
    assert "==> At key: description" in message and "characters)" in message
    assert len(message) < 1000


@pytest.mark.parametrize("text, tail", [
    ("graphs:\n  g: {dataset: karate}\n  g: {dataset: karate}\n",
     "==> At graphs.g\n=====> Duplicate key 'g' (line 3; first at line 2)"),
    ("graphs: {g: {path: e.csv, sep: ','}}\n", "==> At graphs.g\n==> At key: sep\n=====> Unknown key 'sep'."),
    ("graphs: {g: {dataset: karate, description: " + _laughs() + "}}\n", "(an alias bomb?)"),
    ("steps: []\n", "==> At key: graphs\n=====> A graphs: section naming at least one graph is needed here"),
])
def test_a_file_read_for_its_graphs_alone_is_read_as_safely(tmp_path, text, tail):
    """Sources.from_file (graphops jaccard-sweep reads a file's graphs: section) refuses what
    load_pipeline refuses, as a ConfigError, never a YAML or pydantic traceback."""
    from graphops.plugin import Sources

    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        Sources.from_file(path)
    assert tail in str(info.value)
