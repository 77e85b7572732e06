"""CPU backend of ``sp_kernel``: Numba shortest paths, histogram features or the FCSP walk sum."""
from __future__ import annotations

from typing import Any

import numba
import numpy as np

from graphops.csr import CSR

from .common import (TABLE_LIMIT, alphabet, compact, graph_of_paths, histograms, lengths, node_inputs,
                     normalize, tiles)
from .params import SPKernelParams
from .paths import PathLists, all_pairs, histogram_keys, path_lists

def run(graphs: CSR, train: CSR | None, params: SPKernelParams) -> np.ndarray:
    """Gram matrix ``K[a, b]`` of ``graphs`` against ``train`` (or against itself), float64."""
    other = graphs if train is None else train
    if params.use_histogram:
        a = all_pairs(graphs)
        b = a if train is None else all_pairs(train)
        K, da, db = _histogram_gram(graphs, other, a, b, params, symmetric=train is None)
    else:
        a = path_lists(graphs)
        b = a if train is None else path_lists(train)
        K, da, db = _fcsp_gram(graphs, other, a, b, params, symmetric=train is None)
    return normalize(np, K, da, db) if params.normalize else K


def _histogram_gram(ga: CSR, gb: CSR, a: Any, b: Any, params: SPKernelParams,
                    symmetric: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Delta kernels: counts of (label_i, label_j, length) per graph, then K = Xa·Xbᵀ."""
    (da, sa), (db, sb) = a, b
    lens = lengths(np, da, db, weighted=ga.weights is not None or gb.weights is not None)
    labs = alphabet(np, ga.node_labels, gb.node_labels) if params.node_kernel.delta else None
    label_of = (lambda g: None if labs is None else np.searchsorted(labs, g.node_labels))
    n_labels = 0 if labs is None else len(labs)
    ka, pa = histogram_keys(ga, da, sa, label_of(ga), n_labels, lens)
    kb, pb = (ka, pa) if symmetric else histogram_keys(gb, db, sb, label_of(gb), n_labels, lens)
    (ca, cb), n_features = compact(np, ka, kb)
    xa = histograms(np, graph_of_paths(np, pa), ca, ga.n_graphs, n_features)
    xb = xa if symmetric else histograms(np, graph_of_paths(np, pb), cb, gb.n_graphs, n_features)
    return gram_product(xa, xb, symmetric), np.einsum("ij,ij->i", xa, xa), np.einsum("ij,ij->i", xb, xb)


def gram_product(xa: np.ndarray, xb: np.ndarray, symmetric: bool, tile: int = 512) -> np.ndarray:
    """``xa @ xbᵀ``; for a symmetric Gram only the upper block triangle is multiplied."""
    if not symmetric:
        return xa @ xb.T
    n = len(xa)
    K = np.empty((n, n))
    for i0 in range(0, n, tile):
        i1 = min(i0 + tile, n)
        K[i0:i1, i0:] = xa[i0:i1] @ xa[i0:].T
        K[i1:, i0:i1] = K[i0:i1, i1:].T
    return K


def _length_table(lens: np.ndarray, params: SPKernelParams) -> np.ndarray:
    if params.length_kernel.delta or len(lens) > TABLE_LIMIT:
        return np.zeros((0, 0))
    gamma = params.length_kernel.gaussian.gamma
    return np.exp(-gamma * (lens[:, None] - lens[None, :]) ** 2)


def fcsp_setup(ga: CSR, gb: CSR, a: PathLists, b: PathLists, params: SPKernelParams) -> dict[str, Any]:
    """Everything the FCSP walk needs, as plain host arrays and scalars."""
    lens = alphabet(np, a.dist, b.dist)
    la, xa, _ = node_inputs(np, ga, params)
    lb, xb, _ = node_inputs(np, gb, params)
    nk = params.node_kernel
    return dict(
        a_ptr=a.ptr, a_src=a.src, a_dst=a.dst, a_len=np.searchsorted(lens, a.dist),
        b_ptr=b.ptr, b_src=b.src, b_dst=b.dst, b_len=np.searchsorted(lens, b.dist),
        ga_ptr=ga.graph_ptr, gb_ptr=gb.graph_ptr, lab_a=la, lab_b=lb, att_a=xa, att_b=xb,
        use_delta=nk.delta, node_gamma=nk.gaussian.gamma if nk.gaussian else 0.0,
        lens=lens, table=_length_table(lens, params), length_delta=params.length_kernel.delta,
        length_gamma=0.0 if params.length_kernel.delta else params.length_kernel.gaussian.gamma)


def _fcsp_gram(ga: CSR, gb: CSR, a: PathLists, b: PathLists, params: SPKernelParams,
               symmetric: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    setup = fcsp_setup(ga, gb, a, b, params)
    na, nb = ga.n_graphs, gb.n_graphs
    if symmetric:
        rows, cols = np.triu_indices(na)
    else:
        rows, cols = np.divmod(np.arange(na * nb, dtype=np.int64), nb)
    rows, cols = rows.astype(np.int64), cols.astype(np.int64)
    K = np.empty((na, nb), np.float64)
    bounds = np.searchsorted(rows, np.arange(0, na + params.tile, params.tile))
    for lo, hi in tiles(bounds, params.progress, f"sp_kernel FCSP, {len(rows):,} graph pairs"):
        values = fcsp_values(rows[lo:hi], cols[lo:hi], setup)
        K[rows[lo:hi], cols[lo:hi]] = values
        if symmetric:
            K[cols[lo:hi], rows[lo:hi]] = values
    if symmetric:
        d = np.diag(K).copy()
        return K, d, d
    return K, _self(ga, a, params), _self(gb, b, params)


def _self(g: CSR, p: PathLists, params: SPKernelParams) -> np.ndarray:
    """k(G, G) for every graph of one input (for train/test normalization)."""
    if not params.normalize:
        return np.zeros(g.n_graphs)
    setup = fcsp_setup(g, g, p, p, params)
    idx = np.arange(g.n_graphs, dtype=np.int64)
    return fcsp_values(idx, idx, setup)


@numba.njit(cache=True)
def _node_kernel(i, m, lab_a, lab_b, att_a, att_b, use_delta, node_gamma):
    if use_delta and lab_a[i] != lab_b[m]:
        return 0.0
    if node_gamma == 0.0:
        return 1.0
    s = 0.0
    for k in range(att_a.shape[1]):
        diff = att_a[i, k] - att_b[m, k]
        s += diff * diff
    return np.exp(-node_gamma * s)


@numba.njit(cache=True)
def _add(total, comp, x):
    """Neumaier compensated addition: returns the new (total, compensation)."""
    t = total + x
    if abs(total) >= abs(x):
        comp += (total - t) + x
    else:
        comp += (x - t) + total
    return t, comp


@numba.njit(cache=True)
def _path_sum(V, p, b0, b1, a_src, a_dst, a_len, b_src, b_dst, b_len, lens, table, length_delta,
              length_gamma):
    """Σ over graph b's paths of V[i,m]·k_len·V[j,n] for path p = (i, j) of graph a."""
    i, j = a_src[p], a_dst[p]
    lo, hi = b0, b1
    if length_delta:
        lo = b0 + np.searchsorted(b_len[b0:b1], a_len[p], side="left")
        hi = b0 + np.searchsorted(b_len[b0:b1], a_len[p], side="right")
    s = 0.0
    for r in range(lo, hi):
        term = V[i, b_src[r]] * V[j, b_dst[r]]
        if not length_delta:
            if table.shape[0] > 0:
                term = term * table[a_len[p], b_len[r]]
            else:
                diff = lens[a_len[p]] - lens[b_len[r]]
                term = term * np.exp(-length_gamma * diff * diff)
        s += term
    return s


@numba.njit(cache=True)
def _compensated(values):
    total, comp = 0.0, 0.0
    for x in values:
        total, comp = _add(total, comp, x)
    return total + comp


@numba.njit(cache=True)
def _walk(V, a0, a1, b0, b1, a_src, a_dst, a_len, b_src, b_dst, b_len, lens, table,
          length_delta, length_gamma):
    """Σ over path pairs of V[i,m]·k_len·V[j,n]; with delta lengths only equal-length runs meet.

    Each path of graph a gets a plain sum over b's paths (the same order as on the GPU);
    those partial sums are added with compensation, so CPU and GPU agree to ~1e-15.
    """
    total, comp = 0.0, 0.0
    for p in range(a0, a1):
        s = _path_sum(V, p, b0, b1, a_src, a_dst, a_len, b_src, b_dst, b_len, lens, table,
                      length_delta, length_gamma)
        total, comp = _add(total, comp, s)
    return total + comp


@numba.njit(cache=True)
def _runs(lengths, lo, hi):
    """Start of each run of equal values in the sorted ``lengths[lo:hi]``, plus ``hi``."""
    starts = [lo]
    for p in range(lo + 1, hi):
        if lengths[p] != lengths[p - 1]:
            starts.append(p)
    starts.append(hi)
    return starts


@numba.njit(cache=True)
def _matrix_is_cheaper(na, nb, a0, a1, b0, b1, a_len, b_len, length_delta, has_table):
    """Compare the operation counts of the path-pair walk and of the matrix form."""
    runs_a = len(_runs(a_len, a0, a1)) - 1
    if length_delta:
        walk, p, q = 0, a0, b0
        while p < a1 and q < b1:  # Σ over lengths of |Pa_d|·|Pb_d|
            if a_len[p] < b_len[q]:
                p += 1
            elif a_len[p] > b_len[q]:
                q += 1
            else:
                d, pe, qe = a_len[p], p, q
                while pe < a1 and a_len[pe] == d:
                    pe += 1
                while qe < b1 and b_len[qe] == d:
                    qe += 1
                walk += (pe - p) * (qe - q)
                p, q = pe, qe
        return na * (b1 - b0) + (a1 - a0) * nb + runs_a * na * nb < walk
    if not has_table:
        return False
    return runs_a * na * (b1 - b0) + (a1 - a0) * nb < (a1 - a0) * (b1 - b0)


@numba.njit(cache=True)
def _matrix_walk(V, a0, a1, b0, b1, a_src, a_dst, a_len, b_src, b_dst, b_len, table, length_delta):
    """The walk sum as Σ_d Σ_{(i,j)∈Pa_d} Σ_n V[j,n]·W_d[i,n], with W_d = V·M_d.

    M_d[m, n] is k_len(d, length of b's path (m, n)) — b's paths of length d alone when the
    length kernel is delta. Far fewer operations than pairing paths on dense graphs; the
    sums run in another order than the walk's, so Gaussian results differ in the last bits.
    """
    na, nb = V.shape
    W = np.zeros((na, nb))
    total, comp = 0.0, 0.0
    starts = _runs(a_len, a0, a1)
    for r in range(len(starts) - 1):
        p0, p1 = starts[r], starts[r + 1]
        d = a_len[p0]
        W[:, :] = 0.0
        for q in range(b0, b1):
            if length_delta and b_len[q] != d:
                continue
            k = 1.0 if length_delta else table[d, b_len[q]]
            m, n = b_src[q], b_dst[q]
            for i in range(na):
                W[i, n] += V[i, m] * k
        for p in range(p0, p1):
            i, j = a_src[p], a_dst[p]
            s = 0.0
            for n in range(nb):
                s += W[i, n] * V[j, n]
            total, comp = _add(total, comp, s)
    return total + comp


@numba.njit(parallel=True, cache=True)
def _fcsp_inside(rows, cols, out, a_ptr, a_src, a_dst, a_len, b_ptr, b_src, b_dst, b_len,
                 ga_ptr, gb_ptr, lab_a, lab_b, att_a, att_b, use_delta, node_gamma, lens, table,
                 length_delta, length_gamma):
    """FCSP pair by pair, in parallel inside each pair (the "In" decomposition, for few large pairs).

    Same per-path sums and the same compensated order as ``_walk``: identical results.
    """
    for t in range(len(rows)):
        a, b = rows[t], cols[t]
        oa, ob = ga_ptr[a], gb_ptr[b]
        na, nb = ga_ptr[a + 1] - oa, gb_ptr[b + 1] - ob
        V = np.empty((na, nb))
        for i in numba.prange(na):
            for m in range(nb):
                V[i, m] = _node_kernel(oa + i, ob + m, lab_a, lab_b, att_a, att_b, use_delta, node_gamma)
        a0, a1 = a_ptr[a], a_ptr[a + 1]
        sums = np.empty(a1 - a0)
        for k in numba.prange(a1 - a0):
            sums[k] = _path_sum(V, a0 + k, b_ptr[b], b_ptr[b + 1], a_src, a_dst, a_len, b_src, b_dst,
                                b_len, lens, table, length_delta, length_gamma)
        out[t] = _compensated(sums)


def fcsp_values(rows: np.ndarray, cols: np.ndarray, setup: dict[str, Any]) -> np.ndarray:
    """FCSP values of graph pairs: parallel over pairs, or inside pairs when there are few."""
    out = np.empty(len(rows), np.float64)
    if len(rows) < 4 * numba.get_num_threads():
        _fcsp_inside(rows, cols, out, **setup)
    else:
        _fcsp_pairs(rows, cols, out, **setup)
    return out


@numba.njit(parallel=True, cache=True)
def _fcsp_pairs(rows, cols, out, a_ptr, a_src, a_dst, a_len, b_ptr, b_src, b_dst, b_len,
                ga_ptr, gb_ptr, lab_a, lab_b, att_a, att_b, use_delta, node_gamma, lens, table,
                length_delta, length_gamma):
    """FCSP over a list of graph pairs, in parallel over pairs (the "Out" decomposition)."""
    for t in numba.prange(len(rows)):
        a, b = rows[t], cols[t]
        oa, ob = ga_ptr[a], gb_ptr[b]
        na, nb = ga_ptr[a + 1] - oa, gb_ptr[b + 1] - ob
        V = np.empty((na, nb))
        for i in range(na):
            for m in range(nb):
                V[i, m] = _node_kernel(oa + i, ob + m, lab_a, lab_b, att_a, att_b, use_delta, node_gamma)
        a0, a1, b0, b1 = a_ptr[a], a_ptr[a + 1], b_ptr[b], b_ptr[b + 1]
        if _matrix_is_cheaper(na, nb, a0, a1, b0, b1, a_len, b_len, length_delta, table.shape[0] > 0):
            out[t] = _matrix_walk(V, a0, a1, b0, b1, a_src, a_dst, a_len, b_src, b_dst, b_len, table,
                                  length_delta)
        else:
            out[t] = _walk(V, a0, a1, b0, b1, a_src, a_dst, a_len, b_src, b_dst, b_len, lens, table,
                           length_delta, length_gamma)
