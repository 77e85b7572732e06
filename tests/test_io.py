"""Reading edge lists in every built-in format, and the errors for bad files."""
from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

import graphops as go

EDGES = [(1, 2, 0.5), (2, 3, 1.5), (3, 1, 2.5)]


def write(path, text):
    path.write_text(text)
    return path


def check(g, weighted=True):
    assert g.n_vertices == 3 and g.n_edges == 3
    np.testing.assert_array_equal(g.edges["src"], [1, 2, 3])
    if weighted:
        np.testing.assert_array_equal(g.edges["weight"], [0.5, 1.5, 2.5])


@pytest.mark.parametrize("name, text", [
    ("e.csv", "src,dst,w\n1,2,0.5\n2,3,1.5\n3,1,2.5\n"),
    ("e.tsv", "# comment\n1\t2\t0.5\n2\t3\t1.5\n3\t1\t2.5\n"),
    ("e.txt", "% header comment\n% another\n1 2 0.5\n2  3 1.5\n3 1 2.5\n"),
    ("e.edges", "1 2 0.5\n2 3 1.5\n# inline comment line\n3 1 2.5\n"),
])
def test_text_formats(tmp_path, name, text):
    g = go.read_graph(write(tmp_path / name, text), weight=2)
    check(g)


def test_header_names_and_positions(tmp_path):
    path = write(tmp_path / "e.csv", "a,b,w\n1,2,0.5\n2,3,1.5\n3,1,2.5\n")
    check(go.read_graph(path, src="a", dst="b", weight="w"))
    check(go.read_graph(path, weight=2))
    check(go.read_graph(path), weighted=False)


def test_columns_names_a_headerless_file(tmp_path):
    path = write(tmp_path / "e.txt", "1 2 0.5\n2 3 1.5\n3 1 2.5\n")
    check(go.read_graph(path, columns=["u", "v", "w"], src="u", dst="v", weight="w"))


def test_parquet(tmp_path):
    path = tmp_path / "e.parquet"
    pd.DataFrame(EDGES, columns=["src", "dst", "weight"]).to_parquet(path)
    check(go.read_graph(path, src="src", dst="dst", weight="weight", directed=True))


@pytest.mark.parametrize("field, body, weighted", [
    ("real general", "3 3 3\n1 2 0.5\n2 3 1.5\n3 1 2.5\n", True),
    ("pattern symmetric", "3 3 3\n1 2\n2 3\n3 1\n", False),
])
def test_matrix_market(tmp_path, field, body, weighted):
    path = write(tmp_path / "e.mtx", f"%%MatrixMarket matrix coordinate {field}\n% c\n{body}")
    check(go.read_graph(path, weight=2 if weighted else None), weighted=weighted)


def test_empty_file_is_an_empty_graph(tmp_path):
    g = go.read_graph(write(tmp_path / "e.txt", "# nothing here\n"))
    assert g.n_vertices == 0 and g.n_edges == 0


@pytest.mark.parametrize("setup, error, message", [
    (lambda p: p / "missing.tsv", FileNotFoundError, "graph file not found: "),
    (lambda p: write(p / "e.gml", "x"), ValueError, "cannot tell the format of"),
    (lambda p: p, IsADirectoryError, "is a folder; for a TU dataset use read_tu()"),
    (lambda p: write(p / "e.mtx", "1 2\n"), ValueError, "not a MatrixMarket coordinate file"),
    (lambda p: write(p / "e.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 5\n1 2 1.0\n"),
     ValueError, "the size line promises 5 entries; found 1"),
    (lambda p: write(p / "e.txt", "1 2\n3 x\n"), ValueError, "vertex ids must be integers"),
])
def test_bad_files(tmp_path, setup, error, message):
    with pytest.raises(error) as info:
        go.read_graph(setup(tmp_path))
    assert message in str(info.value)


def test_unknown_format_names_choices(tmp_path):
    with pytest.raises(ValueError, match=r"Unknown graph format 'tvs'. Known formats: csv, edges, mtx, "
                                         r"parquet, tsv, txt. Did you mean 'tsv'\?"):
        go.read_graph(write(tmp_path / "e.tsv", "1 2\n"), format="tvs")


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
def test_unreadable_file(tmp_path):
    path = write(tmp_path / "e.tsv", "1 2\n")
    path.chmod(0)
    with pytest.raises(PermissionError, match="is not readable"):
        go.read_graph(path)


SIZES = {  # V, undirected E as listed in SOURCES.md (after symmetrizing and deduplicating)
    "luxembourg_osm.edges": (114599, 119666), "delaunay_n16.edges": (65536, 196575),
    "facebook_combined.txt": (4039, 88234), "Email-Enron.txt": (36692, 183831),
    "cugraph_karate.csv": (34, 78), "cugraph_netscience.csv": (1461, 2742),
}


@pytest.mark.parametrize("name", sorted(SIZES))
def test_real_graph_sizes(shared_data, name):
    g = go.read_graph(shared_data / "graphs" / name, dedupe=True)
    assert (g.n_vertices, g.n_edges) == SIZES[name]


@pytest.mark.rapids
def test_read_into_cudf(tmp_path):
    import cudf

    path = write(tmp_path / "e.txt", "1 2 0.5\n2 3 1.5\n3 1 2.5\n")
    g = go.read_graph(path, weight=2, device="gpu")
    assert isinstance(g.edges, cudf.DataFrame)
    pq = tmp_path / "e.parquet"
    pd.DataFrame(EDGES, columns=["src", "dst", "weight"]).to_parquet(pq)
    assert isinstance(go.read_graph(pq, weight="weight", device="gpu").edges, cudf.DataFrame)
