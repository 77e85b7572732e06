"""Data sets by name: bundled ones load anywhere; the others come from a GRAPHOPS_DATA mirror."""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import http.server
import shutil
import threading
import zipfile

import pytest

import graphops as go
from graphops.io.datasets import CATALOGUE, Dataset, DatasetUnavailableError, file_sha256, folder_sha256


def test_bundled_sets_load_without_any_mirror(monkeypatch):
    monkeypatch.delenv("GRAPHOPS_DATA", raising=False)
    karate = go.datasets.load("karate")
    assert (karate.n_vertices, karate.n_edges, karate.weighted) == (34, 78, True)
    mutag = go.datasets.load("mutag")  # names are case-insensitive
    assert (len(mutag), mutag.n_nodes, mutag.n_edges) == (188, 3371, 3721)
    K = go.run("sp_kernel", mutag, backend="cpu")
    assert (K[0, 0], K[0, 1]) == (6660.0, 2950.0)  # GraKeL's published values


def test_list_says_what_is_available(monkeypatch, tmp_path):
    monkeypatch.delenv("GRAPHOPS_DATA", raising=False)
    monkeypatch.setenv("GRAPHOPS_CACHE_DIR", str(tmp_path))
    frame = go.datasets.list()
    assert list(frame.columns) == ["name", "kind", "vertices", "edges", "bundled", "available", "source", "licence",
                                   "size", "url", "sha256"]
    assert frame["sha256"].str.fullmatch("[0-9a-f]{64}").all() and (frame["size"] > 0).all()
    assert frame["url"].str.startswith("https://").all()
    row = frame.set_index("name")
    assert row.loc["karate", "available"] and row.loc["MUTAG", "bundled"]
    assert not row.loc["NCI1", "available"] and row.loc["NCI1", "kind"] == "graphset"


def test_a_missing_set_says_which_file_to_put_where(monkeypatch, tmp_path):
    monkeypatch.delenv("GRAPHOPS_DATA", raising=False)
    monkeypatch.setenv("GRAPHOPS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("GRAPHOPS_OFFLINE", "1")
    with pytest.raises(DatasetUnavailableError) as info:
        go.datasets.load("email-Enron")
    assert str(info.value).startswith(
        "data set 'email-Enron' is not bundled with graphops, GRAPHOPS_DATA is not set and GRAPHOPS_OFFLINE is "
        "set. To use it, put its file at <mirror>/graphs/Email-Enron.txt and set GRAPHOPS_DATA=<mirror> (from "
        "https://raw.githubusercontent.com/jlow2499/INFS-770/dbbfc6063e46ee9836303d6c04c8bc56c36f5bd8/"
        "Email-Enron.txt; SHA-256 bd55e8948fb5f6be1ab1a9677582db6f18bce3272565249bb5049496b0cd4edf), or allow the "
        "download. Origin: SNAP")
    monkeypatch.setenv("GRAPHOPS_DATA", str(tmp_path))
    with pytest.raises(DatasetUnavailableError, match=f"GRAPHOPS_DATA='{tmp_path}' has no 'tu/NCI1'"):
        go.datasets.load("NCI1")
    with pytest.raises(DatasetUnavailableError, match="Unknown data set 'NCl1'. Known: .* Did you mean 'NCI1'"):
        go.datasets.load("NCl1")


@pytest.mark.parametrize("name", sorted(n for n, d in CATALOGUE.items() if not d.bundled))
def test_every_catalogued_set_loads_from_the_mirror_with_its_stated_size(shared_data, monkeypatch, name):
    monkeypatch.setenv("GRAPHOPS_DATA", str(shared_data))
    ds = CATALOGUE[name]
    got = go.datasets.load(name)
    sizes = (got.n_nodes, got.n_edges) if ds.kind == "graphset" else (got.n_vertices, got.n_edges)
    assert sizes == (ds.vertices, ds.edges) and got.directed == ds.directed


def test_yaml_dataset_source_and_unknown_names(tmp_path):
    (tmp_path / "p.yaml").write_text("version: 1\ngraphs: {k: {dataset: karate}, m: {dataset: MUTAG},\n"
                                     "         bad: {dataset: karat}}\n"
                                     "steps: [{id: s, algorithm: sp_kernel, inputs: {graphs: k}}]\n")
    with pytest.raises(go.ConfigError) as info:
        go.load_pipeline(tmp_path / "p.yaml")
    text = str(info.value)
    assert "==> At graphs.bad\n==> At key: dataset\n=====> Unknown data set 'karat'." in text
    assert "sp_kernel input 'graphs' takes a graphset; graph 'k' is a graph" in text


@pytest.mark.parametrize("name", sorted(n for n, d in CATALOGUE.items() if not d.bundled))
def test_catalogue_hashes_match_the_files(shared_data, name):
    ds = CATALOGUE[name]
    where = shared_data / ds.relpath
    got = folder_sha256(where) if ds.kind == "graphset" else file_sha256(where)
    assert got == ds.sha256


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def server(tmp_path):
    """A local HTTP server over a folder: the download path without the network."""
    root = tmp_path / "www"
    root.mkdir()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{httpd.server_port}", httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def cache(monkeypatch, tmp_path):
    monkeypatch.delenv("GRAPHOPS_DATA", raising=False)
    monkeypatch.delenv("GRAPHOPS_OFFLINE", raising=False)
    monkeypatch.setenv("GRAPHOPS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "datasets"


def test_a_graph_is_downloaded_verified_and_cached(server, cache, monkeypatch):
    root, base, httpd = server
    text = b"0 1\n1 2\n2 0\n"
    (root / "tri.txt").write_bytes(text)
    good = Dataset("tri", "graph", "graphs/tri.txt", 3, 3, "a test triangle", "CC0", url=f"{base}/tri.txt",
                   sha256=hashlib.sha256(text).hexdigest(), size=len(text))
    monkeypatch.setitem(CATALOGUE, "tri", good)
    g = go.datasets.load("tri")
    assert (g.n_vertices, g.n_edges) == (3, 3)
    assert (cache / "graphs" / "tri.txt").read_bytes() == text
    httpd.shutdown()  # from now on only the cache can answer
    assert go.datasets.load("tri").n_edges == 3
    assert go.datasets.list().set_index("name").loc["tri", "available"]


def test_a_download_that_does_not_match_is_not_kept(server, cache, monkeypatch):
    root, base, _ = server
    (root / "tri.txt").write_bytes(b"0 1\n1 2\n")  # not what the catalogue says
    bad = Dataset("tri", "graph", "graphs/tri.txt", 3, 3, "a test triangle", "CC0", url=f"{base}/tri.txt",
                  sha256="0" * 64, size=12)
    monkeypatch.setitem(CATALOGUE, "tri", bad)
    with pytest.raises(DatasetUnavailableError, match="downloaded from .* does not match the catalogue.*nothing "
                                                      "was kept"):
        go.datasets.load("tri")
    assert not (cache / "graphs" / "tri.txt").exists()


def test_no_network_says_which_file_to_put_where(cache, monkeypatch):
    lost = Dataset("tri", "graph", "graphs/tri.txt", 3, 3, "a test triangle", "CC0",
                   url="http://127.0.0.1:9/tri.txt", sha256="a" * 64, size=12)  # port 9: nothing listens
    monkeypatch.setitem(CATALOGUE, "tri", lost)
    with pytest.raises(DatasetUnavailableError, match=r"could not be downloaded from http://127.0.0.1:9/tri.txt "
                                                      r".*put its file at <mirror>/graphs/tri.txt and set "
                                                      r"GRAPHOPS_DATA=<mirror> \(from .*; SHA-256 a{64}\)"):
        go.datasets.load("tri")


def test_a_tu_set_is_downloaded_unzipped_and_verified(server, cache, monkeypatch):
    """The zip as TUDataset publishes it (a folder MUTAG/ inside): unzipped, its files checked
    against the catalogue's SHA-256, then read."""
    root, base, _ = server
    bundled = go.datasets.path("MUTAG")
    with zipfile.ZipFile(root / "MUTAG.zip", "w") as z:
        for f in sorted(bundled.iterdir()):
            z.write(f, f"MUTAG/{f.name}")
    monkeypatch.setitem(CATALOGUE, "MUTAG", dataclasses.replace(CATALOGUE["MUTAG"], bundled=False,
                                                                 url=f"{base}/MUTAG.zip"))
    gs = go.datasets.load("MUTAG")
    assert (len(gs), gs.n_nodes, gs.n_edges) == (188, 3371, 3721)
    assert folder_sha256(cache / "tu" / "MUTAG") == CATALOGUE["MUTAG"].sha256
    # a zip whose files differ is refused and leaves nothing behind
    shutil.rmtree(cache / "tu" / "MUTAG")
    with zipfile.ZipFile(root / "MUTAG.zip", "w") as z:
        z.writestr("MUTAG/MUTAG_A.txt", "1, 2\n")
    with pytest.raises(DatasetUnavailableError, match="does not match the catalogue"):
        go.datasets.load("MUTAG")
    assert not (cache / "tu" / "MUTAG").exists()



def test_the_datasets_command_lists_fetches_and_finds(server, cache, monkeypatch, capsys):
    from graphops.cli import main

    root, base, httpd = server
    text = b"0 1\n1 2\n2 0\n"
    (root / "tri.txt").write_bytes(text)
    monkeypatch.setitem(CATALOGUE, "tri", Dataset("tri", "graph", "graphs/tri.txt", 3, 3, "a test triangle", "CC0",
                                                  url=f"{base}/tri.txt", sha256=hashlib.sha256(text).hexdigest(),
                                                  size=len(text)))
    assert main(["datasets", "list", "--json"]) == 0
    rows = {r["name"]: r for r in __import__("json").loads(capsys.readouterr().out)}
    assert rows["karate"]["bundled"] and not rows["tri"]["available"]
    assert main(["datasets", "path", "tri"]) == 1  # not here, and path downloads nothing
    assert "data set 'tri' is not bundled with graphops" in capsys.readouterr().err
    monkeypatch.setenv("GRAPHOPS_OFFLINE", "1")
    assert main(["datasets", "fetch", "tri"]) == 1
    assert "GRAPHOPS_OFFLINE is set, which forbids downloads: unset it to fetch 'tri'" in capsys.readouterr().err
    monkeypatch.delenv("GRAPHOPS_OFFLINE")
    assert main(["datasets", "fetch", "tri"]) == 0
    assert capsys.readouterr().out.strip() == str(cache / "graphs" / "tri.txt")
    httpd.shutdown()  # fetched once: path and fetch answer from the cache
    assert main(["datasets", "path", "tri", "karate"]) == 0 and main(["datasets", "fetch", "tri"]) == 0
    lines = capsys.readouterr().out.split()
    assert lines[0] == lines[2] == str(cache / "graphs" / "tri.txt") and lines[1].endswith("karate.tsv")
    assert main(["datasets", "list"]) == 0 and "tri" in capsys.readouterr().out
    assert main(["datasets", "path", "karat"]) == 1
    assert "Did you mean 'karate'?" in capsys.readouterr().err
