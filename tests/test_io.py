"""Reading edge lists in every built-in format, and the errors for bad files."""
from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


@pytest.mark.parametrize("name, text, kwargs", [
    ("e.txt", "# nothing here\n\n", {}),
    ("e.csv", "src,dst\n", {"header": True}),
    ("e.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 0\n", {}),
])
def test_a_file_without_edges_is_an_error_naming_it(tmp_path, name, text, kwargs):
    with pytest.raises(ValueError, match="no edge rows") as info:
        go.read_graph(write(tmp_path / name, text), **kwargs)
    assert name in str(info.value)
    empty = go.Graph.from_edgelist(pd.DataFrame({"src": [], "dst": []}, dtype="int64"))  # still legal
    assert empty.n_vertices == 0


def test_empty_parquet_is_an_error(tmp_path):
    pd.DataFrame({"src": [], "dst": []}, dtype="int64").to_parquet(tmp_path / "e.parquet")
    with pytest.raises(ValueError, match="holds no edge rows"):
        go.read_graph(tmp_path / "e.parquet")


@pytest.mark.parametrize("text", ["alice bob\ncarol dave\nbob carol\n", "alice\tbob\ncarol\tdave\nbob\tcarol\n"])
def test_string_ids_and_no_header_lost(tmp_path, text):
    g = go.read_graph(write(tmp_path / "e.tsv", text))
    assert g.n_edges == 3 and list(g.vertices) == ["alice", "bob", "carol", "dave"]
    res = go.run("jaccard", g, backend="cpu")
    assert res["first"].tolist() == ["alice", "carol", "bob"] and res["second"].tolist() == ["bob", "dave", "carol"]


@pytest.mark.parametrize("text, kwargs, edges", [
    ("src dst weight\n1 2 0.5\n2 3 1.5\n", {"weight": 2}, 2),        # 3b: text ids over integer ids
    ("1 2 0.5\n2 3 1.5\n", {"weight": 2}, 2),
    ("from to\nann bob\nbob cy\n", {}, 2),                            # 3c: column words seen nowhere below
    ("u v\nv w\nw u\n", {}, 3),                                      # 3c: u and v are vertices below: data
    ("alice bob\ncarol dave\n", {}, 2),                               # names over names: data
    ("alice bob\n", {}, 1),                                           # one edge
    ("a b weight\nann bob 0.5\nbob cy 1\n", {"weight": 2}, 2),       # 3c: text over a column of numbers
    ("from to\nann bob\nbob cy\n", {"src": "from", "dst": "to"}, 2),  # 3a: named columns need a header
    ("from to\nann bob\nbob cy\n", {"header": True}, 2),
    ("from to\nann bob\nbob cy\n", {"header": False}, 3),
    ("1 2\n2 3\n", {"header": False}, 2),
    ("1 2 x\n2 3 y\n", {}, 2),                                       # integer ids: line 1 is data
])
def test_header_auto_follows_the_reading_rule(tmp_path, text, kwargs, edges):
    g = go.read_graph(write(tmp_path / "e.txt", text), **kwargs)
    assert g.n_edges == edges


def test_named_columns_over_a_data_line_say_what_to_do(tmp_path):
    with pytest.raises(ValueError, match=r"e.txt: src='u', dst='v' name columns, but the first line \('1 2'\) is data"):
        go.read_graph(write(tmp_path / "e.txt", "1 2\n2 3\n"), src="u", dst="v")


@pytest.mark.parametrize("text, kwargs, message", [
    ("1 2\n3 x\n", {}, "e.txt, line 2, column 2: dst id 'x' is not an integer; other ids in this column are "
                      "integers; if vertex ids are names, read them as strings with ids='string'"),
    ("# c\n1 2\n\n# c\n3 x\n", {}, "e.txt, line 5, column 2: dst id 'x' is not an integer"),
    ("a b\nc d\n", {"ids": "integer"}, "e.txt, line 1, column 1: src id 'a' is not an integer; vertex ids must "
                                        "be integers"),
    ("1 2 0.5\n2 3 abc\n", {"weight": 2}, "e.txt, line 2, column 3: weight 'abc' is not a finite number"),
    ("1 2 0.5\n2 3 inf\n", {"weight": 2}, "e.txt, line 2, column 3: weight 'inf' is not a finite number"),
    ("src,dst,w\n1,2,0.5\n2,3,nan\n", {"weight": "w"}, "e.txt, line 3, column 3 ('w'): weight 'nan' is not a "
                                                        "finite number"),
    ("1,2\n,3\n", {}, "e.txt, line 2, column 1: src id is missing (an empty field)"),
    # the cases of a first user's report: none may be read silently
    ("src\tdst\n", {}, "e.txt: a header line ('src\\tdst') and no edge rows below it"),
    ("1 2 abc\n2 3 1\n", {}, "e.txt, line 1, column 3: 'abc' is text in a column of numbers; if line 1 is a "
                             "header, pass header=True"),
    ("1 2 abc\n2 3 1\n", {"weight": 2}, "e.txt, line 1, column 3: weight 'abc' is not a finite number; weights "
                                        "must be numbers; if line 1 is a header, pass header=True"),
    ("1 2 3 4\n2 3\n", {}, "e.txt, line 2: 2 fields, expected 4, as line 1 has. Every row needs the same "
                           "fields: fix the line, or pass columns=[...]"),
    ("1 2 3 4\n2 3\n", {"weight": 2}, "e.txt, line 2: 2 fields, expected 4"),
    ("1 2\n2 3 4\n", {}, "e.txt, line 2: 3 fields, expected 2, as line 1 has"),
    ("src dst\n1 2 3\n2 3 4\n", {}, "e.txt, line 2: 3 fields, expected 2, as line 1 has"),
    ("1,2\n" * 300 + "3,4,5\n", {}, "e.txt, line 301: 3 fields, expected 2"),
    ("1,2,3\n" * 300 + "3,4\n", {}, "e.txt, line 301: 2 fields, expected 3"),
    ("1 2\n3 4 5\n", {"columns": ["u", "v", "w"]}, "e.txt, line 1: 2 fields, expected at least 3 (the columns= "
                                                   "given)"),
    ("99999999999999999999 1\n2 3\n", {}, "e.txt, line 1, column 1: src id '99999999999999999999' is beyond the "
                                          "64-bit integer range (|id| < 2**63); read the ids as strings with "
                                          "ids='string'"),
    ("1 2\n2 9223372036854775808\n", {}, "e.txt, line 2, column 2: dst id '9223372036854775808' is beyond"),
])
def test_parse_errors_name_file_line_and_value(tmp_path, text, kwargs, message):
    with pytest.raises(ValueError) as info:
        go.read_graph(write(tmp_path / "e.txt", text), **kwargs)
    assert message in str(info.value)


def test_ids_string_reads_numbers_as_names(tmp_path):
    g = go.read_graph(write(tmp_path / "e.txt", "007 7\n7 x\n"), ids="string")
    assert list(g.vertices) == ["007", "7", "x"]


@pytest.mark.parametrize("setup, error, message", [
    (lambda p: p / "missing.tsv", FileNotFoundError, "graph file not found (resolved to "),
    (lambda p: write(p / "e.gml", "x"), ValueError, "cannot tell the format of"),
    (lambda p: p, IsADirectoryError, "is a folder; for a TU dataset use read_tu()"),
    (lambda p: write(p / "e.mtx", "1 2\n"), ValueError, "not a MatrixMarket coordinate file"),
    (lambda p: write(p / "e.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 5\n1 2 1.0\n"),
     ValueError, "line 2: the size line promises 5 entries; the file holds 1"),
])
def test_bad_files(tmp_path, setup, error, message):
    with pytest.raises(error) as info:
        go.read_graph(setup(tmp_path))
    assert message in str(info.value)


def test_unknown_format_names_choices(tmp_path):
    with pytest.raises(ValueError, match=r"Unknown graph format 'tvs'. Known formats: appclass, csv, edges, kmers, mtx, "
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


def test_columns_read_the_leading_fields_of_ragged_rows(tmp_path):
    g = go.read_graph(write(tmp_path / "e.txt", "1 2 x y\n2 3\n3 1 z\n"), columns=["u", "v"], src="u", dst="v")
    assert g.n_edges == 3 and list(g.edges.columns) == ["src", "dst"]


def test_huge_ids_read_as_strings_when_asked(tmp_path):
    g = go.read_graph(write(tmp_path / "e.txt", "99999999999999999999 1\n1 2\n"), ids="string")
    assert sorted(g.vertices) == ["1", "2", "99999999999999999999"]


@pytest.mark.parametrize("part", ["A", "graph_indicator", "node_labels", "edge_attributes", "graph_labels"])
@pytest.mark.parametrize("odd", ["fifo", "folder", "device-link"])
def test_a_tu_folder_whose_file_is_not_a_regular_file_is_refused_unread(tmp_path, part, odd):
    """Any file of a TU folder the reader would open that is a FIFO (which waits forever), a link to
    /dev/zero (which never ends) or a folder: refused by name before anything is read, by the reader
    and by graphops validate."""
    import threading

    from graphops.errors import ConfigError, InputError
    from graphops.io.tu import read_tu

    ds = tmp_path / "DS"
    ds.mkdir()
    (ds / "DS_A.txt").write_text("1, 2\n2, 1\n")
    (ds / "DS_graph_indicator.txt").write_text("1\n1\n")
    target = ds / f"DS_{part}.txt"
    if target.exists():
        target.unlink()
    if odd == "fifo":
        os.mkfifo(target)
    elif odd == "folder":
        target.mkdir()
    else:
        if not os.path.exists("/dev/zero"):
            pytest.skip("no /dev/zero here")
        target.symlink_to("/dev/zero")
    said: list[BaseException] = []

    def read():
        try:
            read_tu(ds)
        except BaseException as exc:  # noqa: BLE001 - what the reader raised, checked below
            said.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(30)
    assert not reader.is_alive(), "the reader waited on the file"
    assert said and isinstance(said[0], InputError), said
    what = {"fifo": "a named pipe (FIFO)", "folder": "a folder", "device-link": "a character device"}[odd]
    assert str(said[0]) == f"TU dataset 'DS': DS_{part}.txt is {what}, not a regular file; reading it could wait " \
                           f"forever or never end"
    (tmp_path / "p.yaml").write_text("version: 1\ngraphs: {g: {path: DS}}\n"
                                     "steps: [{id: a, algorithm: describe, inputs: {graph: g}}]\n")
    with pytest.raises(ConfigError, match=f"DS_{part}.txt is {what.replace('(', '.').replace(')', '.')}"):
        go.load_pipeline(tmp_path / "p.yaml")


def test_a_folder_without_the_tu_files_is_refused_by_validate(tmp_path):
    """A folder named like a file (dir.csv) is read as a TU folder: graphops validate names the files
    it lacks, as the run would."""
    from graphops.errors import ConfigError

    (tmp_path / "dir.csv").mkdir()
    (tmp_path / "p.yaml").write_text("version: 1\ngraphs: {g: {path: dir.csv}}\n"
                                     "steps: [{id: a, algorithm: describe, inputs: {graph: g}}]\n")
    with pytest.raises(ConfigError, match=r"TU dataset 'dir.csv' lacks dir.csv_A.txt, dir.csv_graph_indicator.txt"):
        go.load_pipeline(tmp_path / "p.yaml")


_TEXT = st.text(st.sampled_from("abcxyz ,;.-"), min_size=1, max_size=8).map(str.strip).filter(
    lambda t: t and not t[0].isdigit())


@given(rows=st.lists(st.tuples(st.integers(0, 50), st.integers(0, 50), _TEXT), min_size=1, max_size=20))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_tsv_files_commas_stay_in_their_fields(tmp_path, rows):
    """The tsv format splits by tabs only (a .tsv file, or format='tsv' on any name): a comma in a
    text column is part of its field, whatever the first line holds."""
    lines = "".join(f"{u}\t{v}\t{t}\n" for u, v, t in rows)
    for name, fmt in (("e.tsv", None), ("e.txt", "tsv")):
        path = tmp_path / name
        path.write_text(lines)
        g = go.read_graph(path, format=fmt)
        assert list(g.edges["src"]) == [u for u, _, _ in rows] and list(g.edges["dst"]) == [v for _, v, _ in rows]
        assert list(g.edges.iloc[:, 2]) == [t for _, _, t in rows]


@pytest.mark.parametrize("first", ["1O,2", "1,2O", "0x10,2", "1_0,2", "\u0661,2", "\uff11,2", '1,"2""x"'])
def test_a_typo_in_the_first_lines_id_is_refused_not_taken_for_a_header(tmp_path, first):
    """A first line with one id a number and the other not, over lines of numbers, is an edge with
    a typo: refused naming line 1 (it was taken for a header, and the edge dropped)."""
    from graphops.errors import InputError

    path = tmp_path / "e.csv"
    path.write_text(f"{first}\n2,3\n3,1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"e\.csv, line 1, column [12]: "):
        go.read_graph(path)
    assert go.read_graph(path, header=True).n_edges == 2  # said so: a header
    path.write_text("src,dst\n2,3\n3,1\n")
    assert go.read_graph(path).n_edges == 2


@pytest.mark.parametrize("text, where", [("1,2\n0x10,3\n3,1\n", "line 2, column 1"),
                                         ("1,2,0.5\n2,3,0X1f\n", "line 2, column 3"),
                                         ("src\tdst\n1\t2\n0x10\t3\n", "line 3, column 1")])
def test_hex_looking_values_are_not_read_as_numbers(tmp_path, text, where):
    """Integers are decimal digits: 0x10 is not 16 (pyarrow's fast parser read it so, silently)."""
    from graphops.errors import InputError

    path = tmp_path / "e.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=where):
        go.read_graph(path, **({"weight": 2} if text.count(",") > 3 else {}))


@given(n=st.integers(1, 12), entries=st.lists(st.tuples(st.integers(1, 12), st.integers(1, 12)), min_size=1,
                                               max_size=10))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_matrix_market_files_vertices_are_its_size_lines(tmp_path, n, entries):
    """Row i and column i are vertex i: an n x n file has n vertices, those no entry names isolated
    (as scipy and networkx read it), and the same edges as before."""
    entries = [(u, v) for u, v in entries if u <= n and v <= n] or [(1, 1)]
    path = tmp_path / "e.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n"
                    f"{n} {n} {len(entries)}\n" + "".join(f"{u} {v}\n" for u, v in entries))
    g = go.read_graph(path, directed=True)
    assert g.n_vertices == n and g.n_edges == len(entries)
    assert list(zip(g.edges["src"], g.edges["dst"])) == entries


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.rapids)])
def test_a_text_attribute_column_is_kept_on_either_device(tmp_path, device):
    """A column of text beside the ids (names, notes with commas in a tsv) is an edge attribute on
    the GPU too (cuDF keeps it; CuPy holds numbers only, and the read raised a TypeError); the
    similarity values are those of the CPU."""
    (tmp_path / "t.tsv").write_text("1\t2\tsmith, ann\n2\t3\tjones, bob\n3\t1\tlee, cy\n")
    (tmp_path / "t.csv").write_text("src,dst,who,w\n1,2,ann,0.5\n2,3,bob,1.5\n3,1,cy,2.5\n")
    t = go.read_graph(tmp_path / "t.tsv", device=device)
    c = go.read_graph(tmp_path / "t.csv", device=device, weight="w")
    host = (lambda f: f.to_pandas()) if device == "gpu" else (lambda f: f)
    assert host(t.edges)["2"].tolist() == ["smith, ann", "jones, bob", "lee, cy"]
    assert host(c.edges)["who"].tolist() == ["ann", "bob", "cy"]
    pd.testing.assert_frame_equal(host(go.run("jaccard", c, backend=device)), go.run("jaccard", c.to("cpu") if
                                  device == "gpu" else c, backend="cpu"))


def test_a_matrix_market_size_line_beyond_its_entries_is_refused(tmp_path):
    """A size line naming far more vertices than its entries could hold is refused naming that line,
    not an allocation of its size (a node frame of 10**14 ids)."""
    from graphops.errors import InputError

    path = tmp_path / "e.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n100000000000000 100000000000000 1\n1 2\n")
    with pytest.raises(InputError, match=r"e\.mtx, line 2: the size line names 100,000,000,000,000 vertices for 1 "):
        go.read_graph(path)


def test_a_tu_folder_named_with_lacks_in_it_is_still_named_rightly(tmp_path):
    """The folder's name is in the message: a 'blacksmith' folder with a FIFO among its files gets
    the FIFO's message (the reader once matched the word 'lacks' in it)."""
    from graphops.errors import InputError
    from graphops.io.tu import read_tu

    ds = tmp_path / "blacksmith"
    ds.mkdir()
    (ds / "blacksmith_A.txt").write_text("1, 2\n")
    (ds / "blacksmith_graph_indicator.txt").write_text("1\n1\n")
    (ds / "blacksmith_node_labels.txt").mkdir()
    with pytest.raises(InputError, match="blacksmith_node_labels.txt is a folder"):
        read_tu(ds)
