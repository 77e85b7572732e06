"""appclass: byte-identical output on the public case, every backend against the literal NumPy
reference, edge-order independence, both memory schedules, top-k, readers and their errors."""
from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import graphops as go
from graphops import InputError
from tests.reference import appclass as ref

EXPECTED_MD5 = "615497fb40214d787b94571a9bbdb6b8"
FILES = ("georgiyData.Vertex.csv", "synB_sparse.Edges.csv", "georgiyPattern.Vertex.csv", "georgiyPattern.Edges.csv")
RTOL, ATOL = 1e-12, 1e-13  # log-probabilities near 0 are compared absolutely


def _ac(shared_data: Path) -> Path:
    folder = shared_data / "ac"
    if not folder.is_dir():
        pytest.skip(f"{folder} not found")
    return folder


def _random(rng, n, m, dim=(3, 4), isolated=0):
    """Features in [0, 10), m random edges among the first n - isolated nodes (multi-edges and
    self-loops come with it)."""
    x = rng.random((n, dim[0])) * 10
    hi = max(n - isolated, 1)
    return x, rng.integers(0, hi, m), rng.integers(0, hi, m), rng.random((m, dim[1])) * 10


def _graph(x, src, dst, a):
    nodes = pd.DataFrame({"id": np.arange(len(x)), **{f"x{i}": x[:, i] for i in range(x.shape[1])}})
    edges = pd.DataFrame({"src": src, "dst": dst, **{f"e{i}": a[:, i] for i in range(a.shape[1])}})
    return go.Graph.from_edgelist(edges, directed=True, nodes=nodes)


def _host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


# --- the public case, byte for byte -------------------------------------------------------------
def test_printed_output_is_byte_identical(shared_data, backend):
    folder = _ac(shared_data)
    data = go.functions.read_appclass(folder / FILES[0], folder / FILES[1])
    pattern = go.functions.read_appclass(folder / FILES[2], folder / FILES[3])
    mu = go.run("appclass", data, pattern, backend=backend)
    from graphops_appclass.cli import format_mu

    text = format_mu(_host(mu))
    assert hashlib.md5(text.encode()).hexdigest() == EXPECTED_MD5
    assert text == (folder / "expected_synB_sparse.txt").read_text()


def test_cli_prints_the_reference_output(shared_data, tmp_path):
    folder = _ac(shared_data)
    out = subprocess.run([sys.executable, "-m", "graphops", "appclass", *(str(folder / f) for f in FILES),
                          "--backend", "cpu"], capture_output=True, text=True, check=True)
    assert hashlib.md5(out.stdout.encode()).hexdigest() == EXPECTED_MD5


def test_reference_reproduces_the_expected_file(shared_data):
    folder = _ac(shared_data)
    x, s, d, a = ref.read(folder / FILES[0], folder / FILES[1])
    y, ps, pd_, b = ref.read(folder / FILES[2], folder / FILES[3])
    assert ref.printed(ref.appclass(x, s, d, a, y, ps, pd_, b)) == (folder / "expected_synB_sparse.txt").read_text()


# --- against the reference on random inputs -----------------------------------------------------
CASES = [  # (data nodes, data edges, isolated data nodes, pattern nodes, pattern edges)
    (1, 0, 0, 1, 1), (2, 1, 0, 1, 1), (5, 0, 0, 2, 3), (7, 12, 3, 3, 4), (30, 80, 10, 5, 9),
    (60, 400, 20, 8, 14), (200, 50, 120, 4, 6), (300, 2500, 0, 10, 21),
]


@pytest.mark.parametrize("case", CASES, ids=[f"dv{c[0]}-de{c[1]}-pv{c[3]}-pe{c[4]}" for c in CASES])
def test_matches_reference(case, backend):
    n, m, isolated, pv, pe = case
    rng = np.random.default_rng(sum(case))
    data, pattern = _random(rng, n, m, isolated=isolated), _random(rng, pv, pe)
    want = ref.appclass(*data, *pattern)
    got = _host(go.run("appclass", _graph(*data), _graph(*pattern), backend=backend))
    assert got.shape == (n, pv) and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(np.logaddexp.reduce(got, axis=0), 0.0, atol=1e-12)


@pytest.mark.gpu
def test_cpu_and_gpu_agree_on_larger_graphs():
    rng = np.random.default_rng(7)
    x, s, d, a = _random(rng, 5000, 60000, (13, 17), 500)
    s[:6000] = 17  # a hub with more out-edges than the GPU gives one warp
    data, pattern = _graph(x, s, d, a), _graph(*_random(rng, 10, 21, (13, 17)))
    cpu = go.run("appclass", data, pattern, backend="cpu")
    gpu = _host(go.run("appclass", data, pattern, backend="gpu"))
    np.testing.assert_allclose(gpu, cpu, rtol=RTOL, atol=ATOL)


def test_edge_order_does_not_change_the_output(backend):
    rng = np.random.default_rng(3)
    x, s, d, a = _random(rng, 80, 600, isolated=10)
    s[:40], d[:40] = s[40:80], d[40:80]  # multi-edges with different features
    pattern = _graph(*_random(rng, 6, 10))
    first = _host(go.run("appclass", _graph(x, s, d, a), pattern, backend=backend))
    order = rng.permutation(len(s))
    again = _host(go.run("appclass", _graph(x, s[order], d[order], a[order]), pattern, backend=backend))
    assert np.array_equal(first, again)


@pytest.mark.gpu
def test_schedules_give_the_same_bits():
    rng = np.random.default_rng(11)
    data, pattern = _graph(*_random(rng, 400, 3000, (5, 6))), _graph(*_random(rng, 7, 12, (5, 6)))
    stored = go.execute_call("appclass", data, pattern, backend="gpu", schedule="stored")
    recomputed = go.execute_call("appclass", data, pattern, backend="gpu", schedule="recompute")
    assert stored.details["schedule"] == "stored" and recomputed.details["schedule"] == "recompute"
    assert np.array_equal(_host(stored.result), _host(recomputed.result))


def test_memory_limit_chooses_the_schedule_or_refuses(backend):
    rng = np.random.default_rng(5)
    data, pattern = _graph(*_random(rng, 100, 2000, (2, 2))), _graph(*_random(rng, 6, 30, (2, 2)))
    auto = go.execute_call("appclass", data, pattern, backend=backend, memory_limit=1e9)
    assert auto.details["schedule"] == "stored"
    from graphops_appclass.common import footprint

    need = footprint(100, 2000, 6, 30, 2, 2, "stored")["peak"]
    if backend == "gpu":
        tight = go.execute_call("appclass", data, pattern, backend="gpu", memory_limit=need - 1)
        assert tight.details["schedule"] == "recompute"
        np.testing.assert_array_equal(_host(tight.result), _host(auto.result))
    with pytest.raises(InputError, match="needs .* GiB"):
        go.run("appclass", data, pattern, backend=backend, memory_limit=1000)


# --- top-k, families, YAML -------------------------------------------------------------------------
def test_top_k_frame(backend):
    rng = np.random.default_rng(2)
    data, pattern = _graph(*_random(rng, 40, 150)), _graph(*_random(rng, 4, 6))
    mu = _host(go.run("appclass", data, pattern, backend="cpu"))
    top = go.run("appclass", data, pattern, top_k=5, backend=backend)
    assert isinstance(top, pd.DataFrame)
    assert list(top.columns) == ["pattern_node", "rank", "data_node", "log_prob"]
    assert len(top) == 4 * 5
    for j in range(4):
        rows = top[top.pattern_node == j]
        assert rows["rank"].tolist() == [1, 2, 3, 4, 5]
        assert rows.data_node.tolist() == np.argsort(-mu[:, j], kind="stable")[:5].tolist()
        np.testing.assert_allclose(rows.log_prob, mu[rows.data_node, j], rtol=RTOL, atol=ATOL)


def test_original_vertex_ids_in_top_k():
    rng = np.random.default_rng(4)
    x, s, d, a = _random(rng, 12, 40)
    ids = np.arange(12) * 10 + 1000
    nodes = pd.DataFrame({"id": ids, "x0": x[:, 0]})
    edges = pd.DataFrame({"src": ids[s], "dst": ids[d], "w": a[:, 0]})
    data = go.Graph.from_edgelist(edges, weight=None, directed=True, nodes=nodes)
    pnodes = pd.DataFrame({"id": ["a", "b"], "x0": [1.0, 2.0]})
    pattern = go.Graph.from_edgelist(pd.DataFrame({"src": ["a"], "dst": ["b"], "w": [3.0]}), directed=True,
                                     nodes=pnodes)
    top = go.run("appclass", data, pattern, top_k=2, backend="cpu")
    assert set(top.pattern_node) == {"a", "b"} and set(top.data_node) <= set(ids.tolist())


@pytest.mark.rapids
def test_cudf_graph_gives_cupy_and_cudf(shared_data):
    import cudf
    import cupy

    folder = _ac(shared_data)
    data = go.functions.read_appclass(folder / FILES[0], folder / FILES[1], device="gpu")
    pattern = go.functions.read_appclass(folder / FILES[2], folder / FILES[3], device="gpu")
    mu = go.run("appclass", data, pattern, backend="gpu")
    assert isinstance(mu, cupy.ndarray)
    top = go.run("appclass", data, pattern, backend="cpu", top_k=3)
    assert isinstance(top, cudf.DataFrame)


def test_yaml_pipeline_with_node_files(tmp_path):
    rng = np.random.default_rng(9)
    for name, (n, m) in {"data": (30, 90), "pattern": (4, 5)}.items():
        x, s, d, a = _random(rng, n, m)
        pd.DataFrame({"id": np.arange(n), "x0": x[:, 0], "x1": x[:, 1]}).to_csv(tmp_path / f"{name}_nodes.csv", index=False)
        pd.DataFrame({"src": s, "dst": d, "e0": a[:, 0]}).to_csv(tmp_path / f"{name}_edges.csv", index=False)
    (tmp_path / "p.yaml").write_text(
        "version: 1\nname: ac\noutput_dir: out\ngraphs:\n"
        "  data: {path: data_edges.csv, nodes: data_nodes.csv, directed: true}\n"
        "  pattern: {path: pattern_edges.csv, nodes: pattern_nodes.csv, directed: true}\n"
        "steps:\n  - {id: mu, algorithm: appclass, inputs: {data: data, pattern: pattern}, backend: cpu, output: mu.npy}\n"
        "  - {id: top, algorithm: appclass, inputs: {data: data, pattern: pattern}, backend: cpu,\n"
        "     params: {top_k: 3}, output: top.csv}\n")
    go.run_pipeline(tmp_path / "p.yaml")
    mu = np.load(tmp_path / "out" / "mu.npy")
    assert mu.shape == (30, 4)
    assert len(pd.read_csv(tmp_path / "out" / "top.csv")) == 12


def test_undirected_graph_is_refused():
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [0], "dst": [1], "e": [1.0]}),
                               nodes=pd.DataFrame({"id": [0, 1], "x": [0.0, 1.0]}))
    with pytest.raises(InputError, match="directed=True"):
        go.run("appclass", g, g, backend="cpu")


# --- bad input ------------------------------------------------------------------------------------
def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


GOOD_V = "3 3\n0 1.0 2.0\n1 2.0 3.0\n2 0.5 0.5\n"
GOOD_E = "2 4\n0 1 1.0 2.0\n1 2 0.5 0.25\n"


@pytest.mark.parametrize("vertex, edges, message", [
    ("3 3\n0 1.0 2.0\n1 2.0 3.0\n", GOOD_E, r"v.csv: the file ends early: the header promises 3 rows"),
    ("4 3\n0 1 2\n1 2 3\n2 3 4\n", GOOD_E, r"v.csv: the file ends early"),
    (GOOD_V + "3 1.0 1.0\n", GOOD_E, r"v.csv:5: more data than the header's 3 rows"),
    ("3 3\n0 1.0 2.0\n1 nan 3.0\n2 0.5 0.5\n", GOOD_E, r"v.csv:3: value nan in column 1 is not a finite"),
    ("3 3\n0 1.0 2.0\n1 2.0 inf\n2 0.5 0.5\n", GOOD_E, r"v.csv:3: value inf"),
    ("3 3\n0 1.0 2.0\n2 2.0 3.0\n1 0.5 0.5\n", GOOD_E, r"v.csv:3: vertex id 2 on row 1"),
    ("3 3\n0 1.0 2.0\n1 x 3.0\n2 0.5 0.5\n", GOOD_E, r"v.csv:3: 'x' is not a number"),
    ("3\n0 1.0 2.0\n", GOOD_E, r"v.csv:1: the header must be 'ROWS COLUMNS'"),
    ("", GOOD_E, r"v.csv:1: the file is empty"),
    (GOOD_V, "2 4\n0 3 1.0 2.0\n1 2 0.5 0.25\n", r"e.csv:2: dst id 3 is out of range; ids must be integers in 0..2"),
    (GOOD_V, "2 4\n0 1 1.0 2.0\n1.5 2 0.5 0.25\n", r"e.csv:3: src id 1.5 is out of range"),
    (GOOD_V, "2 4\n0 1 1.0 2.0\n", r"e.csv: the file ends early"),
    (GOOD_V, "2 2\n0 1\n1 2\n", r"e.csv:1: an edge file needs at least 3 columns"),
])
def test_reader_errors_name_file_and_line(tmp_path, vertex, edges, message):
    v, e = _write(tmp_path, "v.csv", vertex), _write(tmp_path, "e.csv", edges)
    with pytest.raises(InputError, match=message):
        go.functions.read_appclass(v, e)


def test_rows_broken_across_lines_are_read_as_tokens(tmp_path):
    v = _write(tmp_path, "v.csv", "3 3\n0 1.0\n2.0 1 2.0 3.0\n2\n0.5 0.5\n")
    e = _write(tmp_path, "e.csv", GOOD_E)
    g = go.functions.read_appclass(v, e)
    assert g.nodes.shape == (3, 3) and g.nodes["f1"].tolist() == [2.0, 3.0, 0.5]


@pytest.mark.parametrize("pattern_v, pattern_e, message", [
    ("2 2\n0 1.0\n1 2.0\n", "1 4\n0 1 1.0 2.0\n", r"2 node features and the pattern has 1"),
    ("2 3\n0 1.0 2.0\n1 2.0 3.0\n", "1 3\n0 1 1.0\n", r"2 edge features and the pattern has 1"),
    ("2 3\n0 1.0 2.0\n1 2.0 3.0\n", "0 4\n", r"the pattern graph has no edges"),
    ("4 3\n0 1 2\n1 2 3\n2 3 4\n3 4 5\n", "1 4\n0 1 1.0 2.0\n", r"the pattern \(4 nodes\) is larger"),
])
def test_pairing_errors(tmp_path, pattern_v, pattern_e, message):
    data = go.functions.read_appclass(_write(tmp_path, "v.csv", GOOD_V), _write(tmp_path, "e.csv", GOOD_E))
    pattern = go.functions.read_appclass(_write(tmp_path, "pv.csv", pattern_v), _write(tmp_path, "pe.csv", pattern_e))
    with pytest.raises(InputError, match=message):
        go.run("appclass", data, pattern, backend="cpu")


def test_cli_names_the_files(tmp_path):
    files = [_write(tmp_path, "v.csv", GOOD_V), _write(tmp_path, "e.csv", GOOD_E),
             _write(tmp_path, "pv.csv", "2 2\n0 1.0\n1 2.0\n"), _write(tmp_path, "pe.csv", "1 4\n0 1 1.0 2.0\n")]
    out = subprocess.run([sys.executable, "-m", "graphops", "appclass", *map(str, files), "--backend", "cpu"],
                         capture_output=True, text=True)
    assert out.returncode == 1 and out.stdout == ""
    assert "pv.csv: the pattern has 1 node features per row but" in out.stderr
    assert "Traceback" not in out.stderr


def test_nan_feature_in_a_frame_is_refused():
    nodes = pd.DataFrame({"id": [0, 1], "x": [0.0, np.nan]})
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [0], "dst": [1], "e": [1.0]}), directed=True, nodes=nodes)
    with pytest.raises(InputError, match=r"node column 'x' holds nan at row 1"):
        go.run("appclass", g, g, backend="cpu")


def test_canonical_edge_order_sorts_only_repeated_pairs_by_features():
    """The canonical order (src, dst, then the features, then input order) equals one full sort by
    all keys, on inputs full of repeated pairs and tied features."""
    from graphops_appclass.common import _canonical

    rng = np.random.default_rng(0)
    for _ in range(300):
        n, m, k = int(rng.integers(1, 8)), int(rng.integers(1, 60)), int(rng.integers(1, 4))
        src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
        a = rng.integers(0, 3, (m, k)).astype(float)
        full = np.lexsort(np.stack([a[:, j] for j in range(k - 1, -1, -1)] + [dst, src]))
        np.testing.assert_array_equal(_canonical(src, dst, a), full)


# Numbers as such files write them: C's %f/%e/%g, repr, integers, and long digit strings that only a
# correctly rounded parser reads to the nearest double.
_NUMBER = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False).map(repr),
    st.floats(-1e3, 1e3, allow_nan=False).map(lambda v: "%e" % v),
    st.floats(0, 10, allow_nan=False).map(lambda v: "%.9g" % v),
    st.integers(-10 ** 6, 10 ** 6).map(str),
    st.tuples(st.integers(0, 9), st.text("0123456789", min_size=18, max_size=40)).map(lambda t: f"{t[0]}.{t[1]}"),
)
# How the numbers of a row are apart and how a line ends: one space (Arrow's parser), else the
# other readers.
_SPACING = st.sampled_from([(" ", "\n"), (" ", "\r\n"), (" ", "\r"), ("  ", "\n"), ("\t", "\n"), (" \t ", "\n")])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.integers(1, 6), cols=st.integers(1, 4), data=st.data(), spacing=_SPACING,
       edge=st.sampled_from(["", " ", "\n"]))
def test_every_reader_reads_each_number_correctly_rounded(tmp_path, rows, cols, data, spacing, edge):
    """Whatever the spacing (one space: Arrow; other whitespace: pandas; a stray space at a line's
    start or end too), every feature equals Python's float() of its text, bit for bit."""
    sep, eol = spacing
    tokens = [[data.draw(_NUMBER) for _ in range(cols)] for _ in range(rows)]
    lines = [sep.join([str(r), *t]) for r, t in enumerate(tokens)]
    if edge == " ":
        lines[0] = " " + lines[0]
        lines[-1] = lines[-1] + " "
    text = f"{rows} {cols + 1}{eol}" + eol.join(lines) + eol + (eol if edge == "\n" else "")
    path = tmp_path / "v.csv"
    path.write_bytes(text.encode())
    from graphops_appclass.io import read_vertices

    got = read_vertices(path)
    want = np.array([[float(v) for v in t] for t in tokens])
    assert got.shape == want.shape
    assert np.array_equal(got.view(np.int64), want.view(np.int64))


@pytest.mark.parametrize("directed_features", [(1, 1), (3, 2)])
def test_written_case_reads_back_as_the_same_graph(tmp_path, directed_features):
    """write_appclass with 17 digits: read_appclass gives back the same vertices, arcs and feature
    doubles; the example command writes the four files graphops appclass reads."""
    from graphops.io.generate import gnm
    from graphops_appclass.io import read_appclass, write_appclass

    nf, ef = directed_features
    g = gnm(40, 150, seed=3, node_features=nf, edge_features=ef)
    write_appclass(g, tmp_path / "g.Vertex.csv", tmp_path / "g.Edges.csv")
    back = read_appclass(tmp_path / "g.Vertex.csv", tmp_path / "g.Edges.csv")
    np.testing.assert_array_equal(back.edges.to_numpy(np.float64), g.edges[list(g.edges.columns)].to_numpy(np.float64))
    cols = [c for c in g.nodes.columns if c != "id"]
    np.testing.assert_array_equal(back.nodes[[c for c in back.nodes.columns if c != "id"]].to_numpy(), g.nodes[cols].to_numpy())
    from graphops.cli import main

    assert main(["appclass-example", str(tmp_path / "case"), "--nodes", "50", "--edges", "200"]) == 0
    assert sorted(p.name for p in (tmp_path / "case").iterdir()) == [
        "data.Edges.csv", "data.Vertex.csv", "pattern.Edges.csv", "pattern.Vertex.csv"]


def test_a_missing_or_folder_file_is_one_line_naming_it(tmp_path):
    from graphops_appclass.io import read_appclass

    with pytest.raises(go.InputError, match=r"nope.Vertex.csv: the vertex file does not exist; give the path of a "
                                            r"vertex file \(\*.Vertex.csv\)"):
        read_appclass(tmp_path / "nope.Vertex.csv", tmp_path / "nope.Edges.csv")
    (tmp_path / "v.Vertex.csv").write_text("1 2\n0 1.5\n")
    with pytest.raises(go.InputError, match=r"the edge file is a folder; give the path of an? edge file"):
        read_appclass(tmp_path / "v.Vertex.csv", tmp_path)


def test_a_header_promising_more_than_the_file_holds_is_one_line(tmp_path):
    """A header asking for terabytes is refused before anything is allocated."""
    from graphops_appclass.io import read_vertices

    (tmp_path / "v.Vertex.csv").write_text("999999999999 5\n0 1 2 3 4\n")
    with pytest.raises(go.InputError, match=r"v.Vertex.csv:1: the header promises 999,999,999,999 rows of 5 columns"):
        read_vertices(tmp_path / "v.Vertex.csv")


@pytest.mark.parametrize("argv, said", [
    ([""], "an empty FOLDER names no folder"),
    (["{tmp}/case", "--nodes", "5", "--edges", "100"], "appclass-example (--nodes 5, --edges 100"),
])
def test_appclass_example_refuses_in_one_line_and_leaves_nothing(tmp_path, capsys, argv, said):
    from graphops.cli import main

    assert main(["appclass-example", *[a.replace("{tmp}", str(tmp_path)) for a in argv]]) != 0
    assert said in capsys.readouterr().err
    assert not (tmp_path / "case").exists()


def test_edges_against_a_vertex_file_of_no_rows_say_so(tmp_path):
    from graphops_appclass.io import read_appclass

    (tmp_path / "v.Vertex.csv").write_text("0 3\n")
    (tmp_path / "e.Edges.csv").write_text("1 3\n0 1 0.5\n")
    with pytest.raises(go.InputError, match=r"src id 0 names a vertex, but the vertex file has no rows"):
        read_appclass(tmp_path / "v.Vertex.csv", tmp_path / "e.Edges.csv")
