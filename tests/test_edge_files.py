"""Edge files that were once read wrong or slowly: each case of the reading rule that the property
tests (``test_edge_files_property.py``) cover at random, pinned here with its exact message."""
from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import graphops as go
from graphops.io.textio import MAX_FIELDS


def _read(tmp_path, text: str, name: str = "e.csv", **kwargs):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return go.read_graph(path, **kwargs)


def _edges(g) -> list[tuple]:
    return list(zip(g.edges["src"].tolist(), g.edges["dst"].tolist()))


@pytest.mark.parametrize("name, sep", [("e.csv", ","), ("e.tsv", "\t"), ("e.txt", " ")])
def test_a_byte_order_mark_is_not_part_of_the_first_line(tmp_path, name, sep):
    g = _read(tmp_path, f"\ufeff1{sep}2\n2{sep}3\n", name)
    assert _edges(g) == [(1, 2), (2, 3)]
    g = _read(tmp_path, f"\ufeffsrc{sep}dst\nann{sep}bob\n", name)  # a header still tells by its words
    assert _edges(g) == [("ann", "bob")]


def test_a_byte_order_mark_before_a_matrix_market_banner(tmp_path):
    g = _read(tmp_path, "\ufeff%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 3\n", "e.mtx")
    assert _edges(g) == [(1, 2), (2, 3)]


def test_the_fix_for_mixed_ids_keeps_a_header_a_header(tmp_path):
    text = "src,dst\n1,2\nann,bob\n"
    with pytest.raises(go.InputError) as info:
        _read(tmp_path, text)
    assert "ids='string'" in str(info.value)
    g = _read(tmp_path, text, ids="string")  # the fix the message proposes
    assert _edges(g) == [("1", "2"), ("ann", "bob")]


@pytest.mark.parametrize("text, column, first", [("src,src\n1,2\n", 2, 1), ("a,b,a\n1,2,3\n", 3, 1),
                                                 ("u v u\nann bob 1\n", 3, 1)])
def test_a_header_naming_a_column_twice_is_refused(tmp_path, text, column, first):
    name = "e.csv" if "," in text else "e.txt"
    with pytest.raises(go.InputError) as info:
        _read(tmp_path, text, name)
    repeated = text.split("\n")[0].replace(",", " ").split()[first - 1]
    assert str(info.value) == (
        f"{tmp_path / name}, line 1, column {column}: the header names column {repeated!r} twice (columns {first} "
        f"and {column}); give each column its own name, or pass header=False with columns=[...]")


@pytest.mark.parametrize("text", ["1,2,\n2,3,\n", "src,dst,\n1,2,\n2,3,\n", "1\t2\t\n2\t3\t\n"])
def test_a_delimiter_ending_every_line_is_no_column(tmp_path, text):
    g = _read(tmp_path, text, "e.tsv" if "\t" in text else "e.csv")
    assert _edges(g) == [(1, 2), (2, 3)]
    assert list(g.edges.columns) == ["src", "dst"]


def test_a_delimiter_ending_some_lines_is_a_ragged_row(tmp_path):
    with pytest.raises(go.InputError, match=r"line 2: 2 fields, expected 3, as line 1 has"):
        _read(tmp_path, "1,2,\n2,3\n")


def test_a_named_column_left_empty_is_kept(tmp_path):
    g = _read(tmp_path, "src,dst,note\n1,2,\n2,3,\n")
    assert g.edges["note"].isna().all()


@pytest.mark.parametrize("text", ["% comment\n1 2 # note\n2 3\n", "# comment\n1 2 % note\n2 3\n",
                                  "1 2 % note\n# comment\n2 3 # more\n", "%%banner\n  # indented\n1 2\n2 3%\n"])
def test_hash_and_percent_both_start_comments(tmp_path, text):
    assert _edges(_read(tmp_path, text, "e.txt")) == [(1, 2), (2, 3)]


def test_ids_of_thousands_of_digits_are_beyond_int64_not_a_crash(tmp_path):
    """A 5,000-digit id hit Python's int-string limit (a bug report); a weight as long is shown cut too."""
    big = "1" * 5000
    with pytest.raises(go.InputError) as info:
        _read(tmp_path, f"{big},2\n3,4\n")
    assert str(info.value) == (
        f"{tmp_path / 'e.csv'}, line 1, column 1: src id '{'1' * 20}...11111111' (5000 characters) is beyond the "
        f"64-bit integer range (|id| < 2**63); read the ids as strings with ids='string' (YAML: ids: string)")
    assert _edges(_read(tmp_path, f"{big},2\n3,4\n", ids="string")) == [(big, "2"), ("3", "4")]


@pytest.mark.parametrize("token, fits", [("9223372036854775807", True), ("-9223372036854775808", True),
                                         ("9223372036854775808", False), ("+0009223372036854775807", True),
                                         ("18446744073709551615", False)])
def test_int64_bounds_by_digits(tmp_path, token, fits):
    if fits:
        assert _read(tmp_path, f"{token},1\n2,3\n").edges["src"].tolist()[0] == int(token)
    else:
        with pytest.raises(go.InputError, match="beyond the 64-bit integer range"):
            _read(tmp_path, f"{token},1\n2,3\n")


@pytest.mark.parametrize("path, kind", [(None, "NoneType None"), (123, "int 123"), (["a.csv"], "list ['a.csv']")])
def test_read_graph_names_a_path_that_is_not_one(path, kind):
    with pytest.raises(TypeError) as info:
        go.read_graph(path)
    assert str(info.value) == f"read_graph: path must be a file path (a str or pathlib.Path); got {kind}"
    with pytest.raises(go.InputError, match="read_graph: path is empty; give the path of a file"):
        go.read_graph("")


def test_a_rectangular_matrix_is_not_read_as_one_vertex_set(tmp_path):
    with pytest.raises(go.InputError) as info:
        _read(tmp_path, "%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3\n2 1\n", "e.mtx")
    assert str(info.value) == (
        f"{tmp_path / 'e.mtx'}, line 2: a 2 x 3 matrix; graphops reads a square matrix as a graph (row i and column "
        f"i are vertex i), and the rows and columns of a rectangular one are two vertex sets. Read it as a "
        f"bipartite graph with scipy.io.mmread and Graph.from_edgelist, numbering the columns after the rows")


@settings(max_examples=6, deadline=None)
@given(fields=st.integers(10 ** 5, 10 ** 6), rows=st.integers(1, 3), columns=st.booleans())
def test_a_line_of_very_many_fields_costs_its_length(tmp_path_factory, fields, rows, columns):
    """Linear work: a line of 10^5-10^6 fields is refused at once, or read through columns=."""
    path = tmp_path_factory.mktemp("wide") / "e.csv"
    line = ",".join(map(str, range(fields)))
    path.write_text("\n".join([line] * rows) + "\n")
    start = time.perf_counter()
    if columns:
        assert go.read_graph(path, columns=["src", "dst"]).n_edges == rows
    else:
        with pytest.raises(go.InputError) as info:
            go.read_graph(path)
        assert str(info.value) == (
            f"{path}, line 1: {fields:,} fields; graphops reads at most {MAX_FIELDS:,} fields per line as columns. "
            f"Pass columns=[...] naming the leading columns to read (YAML: columns: [src, dst]); the fields after "
            f"them are not read")
    assert time.perf_counter() - start < 5 * (1 + fields / 10 ** 6)


def test_a_line_of_max_fields_is_read_as_columns(tmp_path):
    start = time.perf_counter()
    g = _read(tmp_path, "\n".join(",".join(map(str, range(k, k + MAX_FIELDS))) for k in range(3)) + "\n")
    assert g.edges.shape == (3, MAX_FIELDS) and _edges(g) == [(0, 1), (1, 2), (2, 3)]
    assert time.perf_counter() - start < 10


# G(n, m) --------------------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 12), directed=st.booleans(), data=st.data())
def test_gnm_is_a_simple_graph_with_m_edges(n, directed, data):
    most = n * (n - 1) // (1 if directed else 2)
    m = data.draw(st.integers(0, most))
    g = go.generate.gnm(n, m, directed=directed, seed=data.draw(st.integers(0, 2 ** 32 - 1)))
    src, dst = g.edges["src"].to_numpy(), g.edges["dst"].to_numpy()
    pairs = {(a, b) if directed else (min(a, b), max(a, b)) for a, b in zip(src.tolist(), dst.tolist())}
    assert g.n_vertices == n and g.n_edges == m == len(pairs)
    assert all(a != b for a, b in pairs)


@pytest.mark.parametrize("directed, most", [(True, 20), (False, 10)])
def test_gnm_refuses_more_edges_than_a_simple_graph_holds(directed, most):
    assert go.generate.gnm(5, most, directed=directed).n_edges == most  # the complete graph
    with pytest.raises(go.InputError) as info:
        go.generate.gnm(5, most + 1, directed=directed)
    kind = "arcs" if directed else "edges"
    assert str(info.value).startswith(
        f"gnm: invalid parameters\n  (params): m={most + 1} is more than the {most} {kind} a simple "
        f"{'directed' if directed else 'undirected'} graph on n=5 vertices holds; lower m or raise n (got {{'n': 5, ")


def test_gnm_draws_every_edge_alike():
    """Each of the 45 edges of K10 is drawn by about m/45 of 2,000 seeds (chi-square, 44 dof)."""
    counts = np.zeros((10, 10))
    for seed in range(2000):
        e = go.generate.gnm(10, 9, directed=False, seed=seed).edges
        np.add.at(counts, (np.minimum(e["src"], e["dst"]), np.maximum(e["src"], e["dst"])), 1)
    observed = counts[np.triu_indices(10, 1)]
    expected = 2000 * 9 / 45
    assert ((observed - expected) ** 2 / expected).sum() < 80  # p < 0.001 for 44 dof


def test_gnm_in_a_pipeline_file_is_checked_before_it_runs(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("version: 1\ngraphs:\n  g: {generate: {kind: gnm, n: 3, m: 4, directed: false}}\nsteps:\n"
                    "  - {id: d, algorithm: describe, inputs: {graph: g}}\n")
    with pytest.raises(go.ConfigError) as info:
        go.load_pipeline(path)
    assert "m=4 is more than the 3 edges a simple undirected graph on n=3 vertices holds" in str(info.value)


@pytest.mark.parametrize("call, message", [
    (lambda: go.generate.rmat(4, seed=2 ** 64), "seed: Input should be less than or equal to 9223372036854775807"),
    (lambda: go.generate.rmat(4, a=0.6, b=0.3, c=0.3), "a + b + c must be at most 1"),
    (lambda: go.generate.gnm(4, 2, seed=-1), "seed: Input should be greater than or equal to 0 (got -1)"),
    (lambda: go.generate.grid2d(True, 3), "rows: Input should be an integer, not a boolean"),
    (lambda: go.generate.gnp_set({0: 3}), "sizes maps node counts (1..10,000"),
    (lambda: go.generate.random_cycles(10, 2, 3, seed=2 ** 63), "seed: Input should be less than or equal to"),
])
def test_generator_calls_are_checked_as_pipeline_sources_are(call, message):
    with pytest.raises(go.InputError) as info:
        call()
    assert message in str(info.value)


@pytest.mark.parametrize("call, knobs", [
    (lambda: go.generate.rmat(32, edge_factor=2 ** 20), "lower scale or edge_factor"),
    (lambda: go.generate.grid2d(2 ** 20, 2 ** 20), "lower rows or cols"),
    (lambda: go.generate.gnm(2 ** 31, 2 ** 40), "lower n or m"),
    (lambda: go.generate.gnp_set({10000: 2 ** 31}), "lower the sizes, p or n_attrs"),
    (lambda: go.generate.random_cycles(n=10, cycles=2 ** 31, length=2 ** 31), "lower cycles, length or n"),
    (lambda: go.generate.de_bruijn(length=2 ** 31, k=2 ** 20), "lower length or k"),
])
def test_a_generator_larger_than_this_machine_is_refused_before_it_starts(call, knobs):
    with pytest.raises(go.InputError) as info:
        call()
    assert "of memory to generate; this machine has" in str(info.value) and knobs in str(info.value)


@pytest.mark.parametrize("call", [
    lambda: go.generate.gnm(5, 10, directed="false"),
    lambda: go.generate.rmat(5, directed="false"),
    lambda: go.generate.random_cycles(n=10, cycles=2, length=5, directed="false"),
])
def test_a_generator_never_computes_with_what_its_check_read_otherwise(call):
    """The string "false" (truthy in Python) either is refused or means undirected: never a directed graph."""
    try:
        graph = call()
    except go.InputError as exc:
        assert "directed" in str(exc)
        return
    assert graph.directed is False


def test_a_named_pipe_or_a_device_is_refused_not_read_forever(tmp_path):
    import os

    fifo = tmp_path / "f.csv"
    os.mkfifo(fifo)
    with pytest.raises(go.InputError, match=r"is a named pipe \(FIFO\), not a regular file"):
        go.read_graph(fifo)
    with pytest.raises(go.InputError, match="is a character device, not a regular file"):
        go.read_graph("/dev/zero", format="csv")
    pipeline = tmp_path / "p.yaml"
    pipeline.write_text("version: 1\ngraphs: {g: {path: f.csv}}\nsteps: [{id: d, algorithm: describe, "
                        "inputs: {graph: g}}]\n")
    with pytest.raises(go.ConfigError, match=r"'f.csv' is a named pipe \(FIFO\), not a regular file"):
        go.load_pipeline(pipeline)


@pytest.mark.parametrize("token", ["\u0661", "\uff11\uff12", "\u0967"])
def test_digits_of_other_scripts_are_names_not_integers(tmp_path, token):
    """'١' (Arabic-Indic one) was read as the integer 1, merging with vertex 1."""
    with pytest.raises(go.InputError, match=f"src id {token!r} is not an integer"):
        _read(tmp_path, f"1,2\n{token},3\n")
    g = _read(tmp_path, f"1,2\n{token},3\n", ids="string")
    assert _edges(g) == [("1", "2"), (token, "3")]


def test_a_long_run_of_19_digit_ids_is_checked_as_fast_as_it_is_parsed(tmp_path):
    rows = "\n".join(f"{9000000000000000000 + k},{k}" for k in range(200_000))
    path = tmp_path / "e.csv"
    path.write_text(rows + "\n99999999999999999999,1\n")
    start = time.perf_counter()
    with pytest.raises(go.InputError, match="line 200001, column 1: src id '99999999999999999999' is beyond"):
        go.read_graph(path)
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize("name, text", [("e.tsv", "1\t2\n\t\n3\t4\n"), ("e.tsv", "1\t2\n3\t4\n\t\n"),
                                        ("e.tsv", "src\tdst\n\t\n1\t2\n3\t4\n"), ("e.csv", "1,2\n\x0c\n3,4\n")])
def test_a_line_of_blanks_is_blank_whatever_the_blank(tmp_path, name, text):
    """Rule 1: a line of a tab or a form feed is blank (it was a row of missing ids, named on the
    wrong line, or line -1)."""
    assert _edges(_read(tmp_path, text, name)) == [(1, 2), (3, 4)]


@pytest.mark.parametrize("kwargs, message", [
    ({"directed": "no"}, "read_graph: directed must be True, False or None (the format's own); got 'no'"),
    ({"dedupe": "no"}, "read_graph: dedupe must be True or False; got 'no'"),
    ({"weight": 2.9}, "read_graph: weight must be a column name (a str) or a position counted from 0 (an int); got 2.9"),
    ({"src": True}, "read_graph: src must be a column name (a str) or a position counted from 0 (an int); got True"),
    ({"dst": -1}, "read_graph: dst must be a column name (a str) or a position counted from 0 (an int); got -1"),
    ({"columns": "ab"}, "read_graph: columns must name the leading columns, each once (a list of strings, e.g. "
                        "['src', 'dst']); got 'ab'"),
    ({"columns": []}, "read_graph: columns must name the leading columns, each once (a list of strings, e.g. "
                      "['src', 'dst']); got []"),
])
def test_read_graph_arguments_are_checked_by_type(tmp_path, kwargs, message):
    """directed='no' was truthy (a directed graph), weight=2.9 read column 2, columns='ab' two columns."""
    with pytest.raises(TypeError) as info:
        _read(tmp_path, "1,2,3\n2,3,4\n", **kwargs)
    assert str(info.value) == message


def test_a_symmetric_matrix_market_file_is_not_read_as_directed(tmp_path):
    text = "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 2\n"
    assert _edges(_read(tmp_path, text, "e.mtx")) == [(2, 1), (3, 2)]
    with pytest.raises(go.InputError) as info:
        _read(tmp_path, text, "e.mtx", directed=True)
    assert str(info.value) == (f"{tmp_path / 'e.mtx'}, line 1: a symmetric MatrixMarket matrix stores one triangle of "
                               f"an undirected graph; read it with directed=False (YAML: directed: false)")


@pytest.mark.parametrize("data, message", [
    ("1,2\n3,4\n".encode("utf-16"), ": UTF-16 text; graphops reads text files in UTF-8"),
    ("1,2\n3,4\n".encode("utf-16-le"), ": holds NUL bytes, so it is not UTF-8 text"),
    ("1,2\nJos\xe9,3\n".encode("latin-1"), ", line 2: not UTF-8 text"),
])
def test_text_that_is_not_utf8_is_named_as_such(tmp_path, data, message):
    """UTF-16 and Latin-1 files were reported as ragged rows ('1 field, expected 2')."""
    path = tmp_path / "e.csv"
    path.write_bytes(data)
    with pytest.raises(go.InputError) as info:
        go.read_graph(path)
    assert str(info.value).startswith(f"{path}{message}")


@pytest.mark.parametrize("values, kind", [([[1, 2], [3]], "list"), ([b"a", b"b"], "bytes"), ([True, False], "bool")])
def test_ids_that_are_neither_integers_nor_strings_are_named(values, kind):
    """'mixes list and list vertex ids' said nothing of what was wrong."""
    import pandas as pd

    frame = pd.DataFrame({"s": pd.Series(values, dtype=object), "d": ["x", "y"]})
    with pytest.raises(go.InputError, match=f"src column 's' holds {kind} values .*; vertex ids are integers or strings"):
        go.Graph.from_edgelist(frame, "s", "d")


def test_an_empty_weight_is_named_missing(tmp_path):
    with pytest.raises(go.InputError, match=r"line 1, column 3: weight is missing \(an empty field\)"):
        _read(tmp_path, "0,1,,9\n1,2,3,4\n", weight=2)


def test_a_wide_file_of_names_costs_about_its_parse(tmp_path):
    """10,000 columns of names took 10-17 s (each column's values matched one by one, twice)."""
    path = tmp_path / "e.tsv"
    path.write_text("\n".join("\t".join(f"n{r}_{c}" for c in range(MAX_FIELDS)) for r in range(100)) + "\n")
    start = time.perf_counter()
    assert go.read_graph(path).edges.shape == (100, MAX_FIELDS)
    assert time.perf_counter() - start < 10


@pytest.mark.parametrize("text", ["1\u00a02\n3\u00a04\n", "1\x0b2\n3\x0b4\n", "a\nb\n", "1,\n2,\n"])
def test_a_file_of_one_field_a_line_is_named_so(tmp_path, text):
    """Blanks other than spaces and tabs do not split fields (pandas' rule, now the layout's too: the
    two disagreed and the message was 'dst=1: the file has 1 column')."""
    with pytest.raises(go.InputError, match=r"line 1: one field; an edge list has at least two \(src and dst\)"):
        _read(tmp_path, text, "e.txt" if "," not in text else "e.csv")


def test_an_empty_edge_frame_is_a_graph_without_edges():
    import pandas as pd

    g = go.Graph.from_edgelist(pd.DataFrame({"src": [], "dst": []}))  # pandas types empty columns float
    assert (g.n_vertices, g.n_edges) == (0, 0)


@pytest.mark.parametrize("value, shown", [("x", "'x'"), ("1e400", "'inf'"), ("nan", "'nan'")])
def test_a_matrix_market_value_that_is_no_finite_number_is_named(tmp_path, value, shown):
    with pytest.raises(go.InputError) as info:
        _read(tmp_path, f"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 {value}\n", "e.mtx")
    assert str(info.value) == f"{tmp_path / 'e.mtx'}, line 3, column 3: value {shown} is not a finite number (field 'real')"
