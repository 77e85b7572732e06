"""Pipeline YAML read safely: alias bombs refused before they expand, repeated keys refused with
their place, merge keys still merged, nesting too deep refused in a line, numbers read by YAML 1.2's
core schema."""
from __future__ import annotations

import math
import re
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, event, given, settings, strategies as st

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


# --- numbers by YAML 1.2's core schema ----------------------------------------------------------

def yaml12(text: str):
    """What YAML 1.2's core schema (spec 10.3.2) makes of a plain scalar other than null and booleans, read
    plainly from its table: an int, a float, else the text itself."""
    if re.fullmatch(r"[-+]?[0-9]+", text):
        return int(text)
    if re.fullmatch(r"0o[0-7]+", text):
        return int(text[2:], 8)
    if re.fullmatch(r"0x[0-9a-fA-F]+", text):
        return int(text[2:], 16)
    if re.fullmatch(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?", text):
        return float(text)
    if re.fullmatch(r"[-+]?\.(inf|Inf|INF)", text):
        return -math.inf if text.startswith("-") else math.inf
    if re.fullmatch(r"\.(nan|NaN|NAN)", text):
        return math.nan
    return text


DIGITS = st.text("0123456789", min_size=1, max_size=6)
NUMBERISH = st.one_of(
    st.tuples(st.sampled_from(["", "-", "+"]), DIGITS).map("".join),  # 010: ten, not eight
    st.tuples(st.sampled_from(["0o", "0x", "0b", "-0o", "+0x", "0O", "0X"]),
              st.text("0123456789abcdefABCDEF", min_size=1, max_size=4)).map("".join),
    st.tuples(DIGITS, st.sampled_from([":", "_"]), DIGITS).map("".join),  # 1:30 base 60 and 1_000 under 1.1
    st.tuples(st.sampled_from(["", "-", "+"]), st.sampled_from(["", "1", "12"]), st.sampled_from(["", ".", ".5", ".25"]),
              st.sampled_from(["", "e3", "E-2", "e+10", "e"])).map("".join),
    st.tuples(st.sampled_from(["", "-", "+"]), st.sampled_from([".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN",
                                                                 ".iNf", "inf", ".infinity"])).map("".join),
    st.text("0123456789+-._:oxeEabcfinIN", min_size=1, max_size=8),
)


@settings(max_examples=400, deadline=None)
@given(text=NUMBERISH)
def test_numbers_are_read_by_yaml_1_2s_core_schema(text):
    """A plain scalar is an integer, a float or text exactly as YAML 1.2's core schema says (YAML 1.1 read
    ``010`` as 8 and ``1:30`` as 90); a scalar the YAML syntax itself takes otherwise is left out."""
    import yaml

    from graphops.pipeline.yamlfile import load_yaml

    assume(text.strip())  # an empty value is null
    try:
        got = load_yaml(f"v: {text}\n")
    except yaml.constructor.ConstructorError:
        raise
    except yaml.YAMLError:
        assume(False)  # not a plain scalar here (e.g. '1:' starts a mapping)
    if not isinstance(got, dict) or set(got) != {"v"}:
        assume(False)
    want, value = yaml12(text), got["v"]
    event(type(want).__name__)
    if isinstance(want, float) and math.isnan(want):
        assert isinstance(value, float) and math.isnan(value)
    else:
        assert (type(value), value) == (type(want), want), text


@pytest.mark.parametrize("text, value", [("010", 10), ("0o17", 15), ("0x1F", 31), ("1:30", "1:30"), ("1_000", "1_000"),
                                         ("0b11", "0b11"), ("1e3", 1000.0), ("-.inf", -math.inf), ("1.", 1.0),
                                         ("2024-01-31", "2024-01-31"), ("!!int 0x10", 16), ("!!float 3", 3.0)])
def test_yaml_1_1_number_forms_are_text_and_1_2_forms_are_numbers(text, value):
    from graphops.pipeline.yamlfile import load_yaml

    assert load_yaml(f"v: {text}\n") == {"v": value}


def test_a_generated_graph_takes_its_numbers_as_yaml_1_2_reads_them(tmp_path, describe_only):
    """``scale: 010`` is ten (YAML 1.1: eight), and ``seed: 1:30`` is text, refused (YAML 1.1: 90)."""
    path = tmp_path / "p.yaml"
    path.write_text("version: 1\ngraphs: {g: {generate: {kind: rmat, scale: 010, seed: 1}}}\n"
                    "steps: [{id: s, algorithm: describe, inputs: {graph: g}}]\n")
    assert go.load_pipeline(path, describe_only).sources.generator("g")[1].scale == 10
    message = errors_of(tmp_path, "version: 1\ngraphs: {g: {generate: {kind: rmat, scale: 8, seed: 1:30}}}\n"
                                  "steps: [{id: s, algorithm: describe, inputs: {graph: g}}]\n", describe_only)
    assert "==> At graphs.g\n==> At key: generate.seed\n" in message and "(got '1:30')" in message


def test_an_explicit_int_tag_takes_only_yaml_1_2_forms(tmp_path, describe_only):
    assert errors_of(tmp_path, "version: !!int 1_0\n", describe_only) == (
        "p.yaml is invalid (1 error)\n==> At line 1, column 10\n=====> '1_0' is not an integer (YAML 1.2: decimal "
        "digits, 0o octal or 0x hex)")
