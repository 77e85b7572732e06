"""CSR views against scipy, on host and device."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import graphops as go
from graphops.model.csr import build_csr


def scipy_csr(src, dst, n, directed, w=None):
    w = np.ones(len(src)) if w is None else np.asarray(w, float)
    a = sp.coo_matrix((w, (src, dst)), shape=(n, n)).tocsr()
    if not directed:
        a = a + a.T - sp.diags(a.diagonal())
    a.sum_duplicates()
    a.sort_indices()
    return a


@pytest.mark.parametrize("directed", [False, True])
def test_csr_matches_scipy(directed):
    rng = np.random.default_rng(7)
    n, m = 60, 400
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = np.unique(np.stack([np.minimum(src, dst), np.maximum(src, dst)], 1), axis=0, return_index=True)[1]
    src, dst, w = src[keep], dst[keep], rng.random(len(keep))
    csr = build_csr(src, dst, n, directed=directed, weights=w)
    ref = scipy_csr(src, dst, n, directed, w)
    assert csr.indptr.dtype == np.int64 and csr.indices.dtype == np.int32
    np.testing.assert_array_equal(csr.indptr, ref.indptr)
    np.testing.assert_array_equal(csr.indices, ref.indices)
    np.testing.assert_allclose(csr.weights, ref.data, rtol=0, atol=0)


def test_edge_ids_point_back_into_the_frame():
    df = pd.DataFrame({"src": [5, 9, 5], "dst": [9, 1, 5], "w": [1.0, 2.0, 3.0]})
    g = go.Graph.from_edgelist(df, weight="w")
    csr = g.csr()
    rows = np.repeat(np.arange(g.n_vertices), np.diff(csr.indptr))
    for r, c, e, w in zip(rows, csr.indices, csr.edge_ids, csr.weights):
        edge = g.edges.iloc[e]
        assert {int(edge.src), int(edge.dst)} == {int(g.vertices[r]), int(g.vertices[c])}
        assert edge.weight == w
    assert len(csr.indices) == 2 * 2 + 1  # the self-loop is stored once


def test_multi_edges_are_kept_in_frame_order():
    csr = build_csr(np.array([0, 0, 0]), np.array([1, 1, 2]), 3, directed=True)
    np.testing.assert_array_equal(csr.indices, [1, 1, 2])
    np.testing.assert_array_equal(csr.edge_ids, [0, 1, 2])


def test_csr_is_cached_per_device():
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [0], "dst": [1]}))
    assert g.csr() is g.csr("cpu")


@pytest.mark.gpu
@pytest.mark.parametrize("directed", [False, True])
def test_gpu_csr_equals_host_csr(directed, xp):
    rng = np.random.default_rng(3)
    src, dst = rng.integers(0, 50, 300), rng.integers(0, 50, 300)
    host = build_csr(src, dst, 50, directed=directed)
    dev = build_csr(xp.asarray(src), xp.asarray(dst), 50, directed=directed)
    for name in ("indptr", "indices", "edge_ids"):
        np.testing.assert_array_equal(getattr(host, name), getattr(dev, name).get())
    g = go.Graph.from_edgelist(pd.DataFrame({"src": src, "dst": dst}), directed=directed)
    moved = g.csr("gpu")
    assert moved.device is go.Device.GPU and g.csr("gpu") is moved
    np.testing.assert_array_equal(moved.indices.get(), g.csr("cpu").indices)


@pytest.mark.gpu
@pytest.mark.parametrize("directed", [False, True])
def test_gpu_csr_of_vertices_without_edges(directed, xp):
    """Vertices but no edges: every row empty, on the device as on the host (CuPy's bincount of no
    entries raised)."""
    none = np.zeros(0, np.int64)
    host = build_csr(none, none, 7, directed=directed)
    dev = build_csr(xp.asarray(none), xp.asarray(none), 7, directed=directed)
    np.testing.assert_array_equal(dev.indptr.get(), host.indptr)
    assert host.indptr.tolist() == [0] * 8 and len(dev.indices) == 0


@settings(max_examples=200, deadline=None)
@given(data=st.data(), n=st.integers(1, 40), directed=st.booleans(), weighted=st.booleans())
def test_host_build_equals_a_stable_sort_of_all_entries(data, n, directed, weighted):
    """graphops.model.csrhost (counting sort by row, stable sort within rows) against the obvious build:
    every stored entry, one stable argsort by (row, column)."""
    m = data.draw(st.integers(0, 120))
    src = np.asarray(data.draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m)), dtype=np.int64)
    dst = np.asarray(data.draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m)), dtype=np.int64)
    w = np.arange(m, dtype=np.float64) * 0.5 if weighted else None
    off = src != dst
    rows, cols = (src, dst) if directed else (np.concatenate([src, dst[off]]), np.concatenate([dst, src[off]]))
    ids = np.arange(m) if directed else np.concatenate([np.arange(m), np.arange(m)[off]])
    order = np.argsort(rows * n + cols, kind="stable")
    csr = build_csr(src, dst, n, directed=directed, weights=w)
    np.testing.assert_array_equal(csr.indptr, np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))]))
    np.testing.assert_array_equal(csr.indices, cols[order])
    np.testing.assert_array_equal(csr.edge_ids, ids[order])
    assert csr.indices.dtype == np.int32 and csr.edge_ids.dtype == np.int64
    if weighted:
        np.testing.assert_array_equal(csr.weights, w[ids[order]])
