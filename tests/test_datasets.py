"""Data sets by name: bundled ones load anywhere; the others come from a GRAPHOPS_DATA mirror."""
from __future__ import annotations

import pytest

import graphops as go
from graphops.datasets import CATALOGUE, DatasetUnavailableError


def test_bundled_sets_load_without_any_mirror(monkeypatch):
    monkeypatch.delenv("GRAPHOPS_DATA", raising=False)
    karate = go.datasets.load("karate")
    assert (karate.n_vertices, karate.n_edges, karate.weighted) == (34, 78, True)
    mutag = go.datasets.load("mutag")  # names are case-insensitive
    assert (len(mutag), mutag.n_nodes, mutag.n_edges) == (188, 3371, 3721)
    K = go.run("sp_kernel", mutag, backend="cpu")
    assert (K[0, 0], K[0, 1]) == (6660.0, 2950.0)  # GraKeL's published values


def test_list_says_what_is_available(monkeypatch):
    monkeypatch.delenv("GRAPHOPS_DATA", raising=False)
    frame = go.datasets.list()
    assert list(frame.columns) == ["name", "kind", "vertices", "edges", "bundled", "available", "source", "licence"]
    row = frame.set_index("name")
    assert row.loc["karate", "available"] and row.loc["MUTAG", "bundled"]
    assert not row.loc["NCI1", "available"] and row.loc["NCI1", "kind"] == "graphset"


def test_a_missing_set_says_which_file_to_put_where(monkeypatch, tmp_path):
    monkeypatch.delenv("GRAPHOPS_DATA", raising=False)
    with pytest.raises(DatasetUnavailableError) as info:
        go.datasets.load("email-Enron")
    assert str(info.value).startswith(
        "data set 'email-Enron' is not bundled with graphops and GRAPHOPS_DATA is not set. To use it, put "
        "its file at <mirror>/graphs/Email-Enron.txt and set GRAPHOPS_DATA=<mirror>. Origin: SNAP")
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
