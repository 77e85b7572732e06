"""Synthetic graphs: R-MAT on the CPU and (with pylibraft) on the GPU, uniform multigraphs,
features and sampled patterns."""
import importlib.util

import numpy as np
import pytest

import graphops as go
from graphops import InputError
from graphops.base.device import Device, to_device


def _edges(g):
    return to_device(g.src_index, Device.CPU), to_device(g.dst_index, Device.CPU)


def _check_simple(g, scale, directed):
    src, dst = _edges(g)
    ids = to_device(g.ids.values, Device.CPU)
    assert (src != dst).all(), "self-loops are dropped"
    key = src.astype(np.int64) * g.n_vertices + dst
    assert len(np.unique(key)) == len(key), "repeated samples are dropped"
    if not directed:  # each undirected edge once
        assert len(np.unique(np.minimum(src, dst) * g.n_vertices + np.maximum(src, dst))) == len(key)
    assert g.n_vertices <= 1 << scale
    assert int(np.max(ids)) < 1 << scale


@pytest.mark.parametrize("directed", [False, True])
def test_rmat_cpu_is_simple_skewed_and_deterministic(directed):
    g = go.generate.rmat(10, 8, directed=directed, seed=3)
    _check_simple(g, 10, directed)
    again = go.generate.rmat(10, 8, directed=directed, seed=3)
    for a, b in zip(_edges(g), _edges(again)):
        np.testing.assert_array_equal(a, b)
    src, dst = _edges(g)
    deg = np.bincount(np.concatenate([src, dst]))
    assert deg.max() > 10 * deg.mean(), "R-MAT degrees are skewed"
    assert 0.5 * 8 * 1024 < g.n_edges <= 8 * 1024


def test_rmat_features_cover_every_vertex():
    g = go.generate.rmat(6, 4, directed=True, node_features=3, edge_features=2)
    assert g.n_vertices == 64
    assert [c for c in g.nodes.columns] == ["id", "f0", "f1", "f2"]
    assert {"f0", "f1"} <= set(g.edges.columns)
    values = g.edges["f1"].to_numpy()
    assert values.min() >= 0 and values.max() < 10


def test_rmat_bad_arguments():
    with pytest.raises(InputError, match="device must be 'cpu' or 'gpu'; got 'tpu'"):
        go.generate.rmat(4, device="tpu")
    with pytest.raises(InputError, match=r"a \+ b \+ c must be at most 1 .*; got 0.9 \+ 0.2 \+ 0.19 = 1.29"):
        go.generate.rmat(4, a=0.9, b=0.2)
    with pytest.raises(InputError, match="a: Input should be greater than or equal to 0 "):
        go.generate.rmat(4, a=-0.1)


@pytest.mark.skipif(importlib.util.find_spec("pylibraft") is not None, reason="pylibraft is installed")
def test_rmat_gpu_without_pylibraft_says_what_to_install():
    with pytest.raises(InputError, match=r"pylibraft.*graphops\[gpu\].*device='cpu'"):
        go.generate.rmat(4, device="gpu")


def test_gnm_and_pattern():
    g = go.generate.gnm(50, 400, directed=True, seed=1, node_features=2, edge_features=3)
    assert (g.n_vertices, g.n_edges) == (50, 400)
    p = go.generate.sample_pattern(g, max_nodes=4, seed=2)
    assert 2 <= p.n_vertices <= 5 and p.directed
    assert list(p.edges.columns)[:2] == ["src", "dst"] and "f2" in p.edges.columns


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.rapids)])
@pytest.mark.parametrize("length", [1, 2, 3, 50])
def test_random_cycles_are_one_balanced_component(device, length):
    from graphops_euler.cpu import edge_components

    for seed in range(5):
        g = go.generate.random_cycles(10_000, 300, length, directed=bool(seed % 2), seed=seed, device=device)
        src, dst = _edges(g)
        assert g.n_edges == 300 * length
        assert edge_components(g.n_vertices, src, dst)[0] == 1
        if g.directed:
            np.testing.assert_array_equal(np.bincount(src, minlength=g.n_vertices),
                                          np.bincount(dst, minlength=g.n_vertices))
        else:
            assert (np.bincount(np.concatenate([src, dst])) % 2 == 0).all()


@pytest.mark.rapids
@pytest.mark.parametrize("directed", [False, True])
def test_rmat_gpu_matches_the_cpu_distribution(directed):
    import cudf

    scale, ef = 16, 8
    g = go.generate.rmat(scale, ef, directed=directed, seed=5, device="gpu")
    assert isinstance(g.edges, cudf.DataFrame)
    _check_simple(g, scale, directed)
    again = go.generate.rmat(scale, ef, directed=directed, seed=5, device="gpu")
    for a, b in zip(_edges(g), _edges(again)):
        np.testing.assert_array_equal(a, b)
    cpu = go.generate.rmat(scale, ef, directed=directed, seed=5)
    # the same distribution: edge counts (after dropping repeats) and the degree profile agree
    assert abs(g.n_edges - cpu.n_edges) < 0.01 * cpu.n_edges
    assert abs(g.n_vertices - cpu.n_vertices) < 0.02 * cpu.n_vertices

    def top_share(graph):
        s, d = _edges(graph)
        deg = np.sort(np.bincount(np.concatenate([s, d])))[::-1]
        return deg[:100].sum() / deg.sum()

    assert abs(top_share(g) - top_share(cpu)) < 0.1 * top_share(cpu)


@pytest.mark.rapids
def test_rmat_gpu_with_features():
    import cudf

    g = go.generate.rmat(8, 4, directed=True, node_features=2, edge_features=3, device="gpu")
    assert isinstance(g.nodes, cudf.DataFrame) and g.n_vertices == 256
    v = g.edges["f2"].to_numpy()
    assert v.min() >= 0 and v.max() < 10
