"""CPU backend of ``sp_kernel``: Numba shortest paths, histogram features or the FCSP walk sum."""
from __future__ import annotations

from typing import Any

import numba
import numpy as np

from graphops.plugin import CSR, chunks, njit, normalize, prange

from .common import (CELL_COST, CPU_WALK_STEP_COST, ROW_COST, TABLE_LIMIT, alphabet, compact, graph_of_paths,
                     histograms, lengths, matrix_form_possible, node_inputs)
from .params import SPKernelParams
from .paths import PathLists, all_pairs, histogram_keys, path_lists

def run(graphs: CSR, other: CSR | None, params: SPKernelParams) -> np.ndarray:
    """Gram matrix ``K[a, b]`` of ``graphs`` against ``other`` (or against itself), float64."""
    symmetric, other = other is None, graphs if other is None else other
    if params.use_histogram:
        a = all_pairs(graphs)
        b = a if symmetric else all_pairs(other)
        K, da, db = _histogram_gram(graphs, other, a, b, params, symmetric=symmetric)
    else:
        a = path_lists(graphs)
        b = a if symmetric else path_lists(other)
        K, da, db = _fcsp_gram(graphs, other, a, b, params, symmetric=symmetric)
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
    return gram_product(xa, xb, symmetric, params.progress), np.einsum("ij,ij->i", xa, xa), np.einsum("ij,ij->i", xb, xb)


def gram_product(xa: np.ndarray, xb: np.ndarray, symmetric: bool, progress: bool | None = None) -> np.ndarray:
    """``xa @ xbᵀ`` in interruptible blocks of rows; for a symmetric Gram only the upper block
    triangle is multiplied (row i costs n - i columns)."""
    n, m = len(xa), len(xb)
    K = np.empty((n, m))
    per_row = np.arange(n, 0, -1) if symmetric else np.full(n, max(m, 1))
    cost = np.concatenate([[0], np.cumsum(per_row)]) * max(xa.shape[1], 1)
    for i0, i1 in chunks(n, what="sp_kernel Gram (histogram)", cost=cost, first=1e8, progress=progress):
        if symmetric:
            K[i0:i1, i0:] = xa[i0:i1] @ xa[i0:].T
            K[i1:, i0:i1] = K[i0:i1, i1:].T
        else:
            K[i0:i1] = xa[i0:i1] @ xb.T
    return K


def _length_table(lens: np.ndarray, params: SPKernelParams) -> np.ndarray:
    if params.length_kernel.delta or len(lens) > TABLE_LIMIT:
        return np.zeros((0, 0))
    gamma = params.length_kernel.gaussian.gamma
    return np.exp(-gamma * (lens[:, None] - lens[None, :]) ** 2)


def fcsp_setup(ga: CSR, gb: CSR, a: PathLists, b: PathLists, params: SPKernelParams) -> dict[str, Any]:
    """Everything the FCSP walk needs, as plain host arrays and scalars."""
    lens = lengths(np, a.dist, b.dist, weighted=ga.weights is not None or gb.weights is not None)
    la, xa, _ = node_inputs(np, ga, params)
    lb, xb, _ = node_inputs(np, gb, params)
    nk = params.node_kernel
    table = _length_table(lens, params)
    a_len, b_len = np.searchsorted(lens, a.dist), np.searchsorted(lens, b.dist)
    matrix = matrix_form_possible(len(lens), params.fcsp_form)
    n_cnt = len(lens) if matrix else 0
    return dict(
        a_ptr=a.ptr, a_src=a.src, a_dst=a.dst, a_len=a_len,
        b_ptr=b.ptr, b_src=b.src, b_dst=b.dst, b_len=b_len,
        a_cnt=_counts(a.ptr, a_len, n_cnt), b_cnt=_counts(b.ptr, b_len, n_cnt),
        form={"auto": 0, "walk": 1, "matrix": 2}[params.fcsp_form] if matrix else 1,
        ga_ptr=ga.graph_ptr, gb_ptr=gb.graph_ptr, lab_a=la, lab_b=lb, att_a=xa, att_b=xb,
        use_delta=nk.delta, node_gamma=nk.gaussian.gamma if nk.gaussian else 0.0,
        lens=lens, table=table, length_delta=params.length_kernel.delta,
        length_gamma=0.0 if params.length_kernel.delta else params.length_kernel.gaussian.gamma)


def _counts(ptr: np.ndarray, lid: np.ndarray, n_cnt: int) -> np.ndarray:
    """Paths per graph and length id (``n_graphs × n_cnt``), for the per-pair choice of form."""
    n_graphs = len(ptr) - 1
    flat = np.bincount(graph_of_paths(np, ptr) * n_cnt + lid, minlength=n_graphs * n_cnt) if n_cnt else []
    return np.asarray(flat, np.int32).reshape(n_graphs, n_cnt)


def _fcsp_gram(ga: CSR, gb: CSR, a: PathLists, b: PathLists, params: SPKernelParams,
               symmetric: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    setup = fcsp_setup(ga, gb, a, b, params)
    na, nb = ga.n_graphs, gb.n_graphs
    if symmetric:
        rows, cols = np.triu_indices(na)
    else:
        rows, cols = np.divmod(np.arange(na * nb, dtype=np.int64), nb)
    rows, cols = rows.astype(np.int64), cols.astype(np.int64)
    values = fcsp_values(rows, cols, setup, params.progress)
    K = np.empty((na, nb), np.float64)
    K[rows, cols] = values
    if symmetric:
        K[cols, rows] = values
        d = np.diag(K).copy()
        return K, d, d
    return K, self_values(ga, a, params), self_values(gb, b, params)


def self_values(g: CSR, p: PathLists, params: SPKernelParams) -> np.ndarray:
    """k(G, G) for every graph of one input (for test × other normalization); zeros unless normalizing."""
    if not params.normalize:
        return np.zeros(g.n_graphs)
    setup = fcsp_setup(g, g, p, p, params)
    idx = np.arange(g.n_graphs, dtype=np.int64)
    return fcsp_values(idx, idx, setup, params.progress)


@njit
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


@njit
def _add(total, comp, x):
    """Neumaier compensated addition: returns the new (total, compensation)."""
    t = total + x
    if abs(total) >= abs(x):
        comp += (total - t) + x
    else:
        comp += (x - t) + total
    return t, comp


@njit
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


@njit
def _compensated(values):
    total, comp = 0.0, 0.0
    for x in values:
        total, comp = _add(total, comp, x)
    return total + comp


@njit
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


@njit
def _form_steps(ca, cb, na, nb, pa, pb, length_delta):
    """Inner-loop steps of the walk and of the matrix form of one pair (as in the CUDA kernel).

    ``ca``/``cb``: the two graphs' path counts by length id, ``pa``/``pb`` their path totals.
    """
    walk = 0.0 if length_delta else float(pa) * float(pb)
    matrix = 0.0
    for d in range(len(ca)):
        x, y = float(ca[d]), float(cb[d])
        if length_delta:
            walk += x * y
            if x > 0 and y > 0:
                matrix += na * y + nb * x + CELL_COST * na * nb + ROW_COST * (na + nb)
        elif x > 0:
            matrix += na * nb * nb + nb * x + CELL_COST * na * nb + ROW_COST * (na + nb)
    return walk, matrix


@njit
def _matrix_is_cheaper(ca, cb, na, nb, pa, pb, length_delta):
    walk, matrix = _form_steps(ca, cb, na, nb, pa, pb, length_delta)
    return len(ca) > 0 and matrix < CPU_WALK_STEP_COST * walk


@njit(parallel=True)
def _walk_steps(rows, cols, out, a_ptr, b_ptr, a_cnt, b_cnt, ga_ptr, gb_ptr, length_delta):
    """Path pairs the walk visits for each graph pair (for benchmark rates)."""
    for t in prange(len(rows)):
        a, b = rows[t], cols[t]
        na, nb = float(ga_ptr[a + 1] - ga_ptr[a]), float(gb_ptr[b + 1] - gb_ptr[b])
        out[t] = _form_steps(a_cnt[a], b_cnt[b], na, nb, a_ptr[a + 1] - a_ptr[a], b_ptr[b + 1] - b_ptr[b],
                             length_delta)[0]


def fcsp_path_pairs(ga: CSR, gb: CSR | None, params: SPKernelParams) -> float | None:
    """Path pairs the FCSP walk visits over the Gram matrix's pairs (Σ_d |Pa_d|·|Pb_d| per graph
    pair with a delta length kernel, |Pa|·|Pb| otherwise): the work any form stands for.
    ``None`` when the graphs have too many distinct path lengths to count them by length."""
    a = path_lists(ga)
    b = a if gb is None else path_lists(gb)
    setup = fcsp_setup(ga, ga if gb is None else gb, a, b, params)
    n_lens = len(setup["lens"]) if params.length_kernel.delta else 0
    if n_lens > TABLE_LIMIT:
        return None
    a_cnt, b_cnt = _counts(a.ptr, setup["a_len"], n_lens), _counts(b.ptr, setup["b_len"], n_lens)
    if gb is None:
        rows, cols = (x.astype(np.int64) for x in np.triu_indices(ga.n_graphs))
    else:
        rows, cols = np.divmod(np.arange(ga.n_graphs * gb.n_graphs, dtype=np.int64), gb.n_graphs)
    out = np.empty(len(rows))
    _walk_steps(rows, cols, out, setup["a_ptr"], setup["b_ptr"], a_cnt, b_cnt, setup["ga_ptr"], setup["gb_ptr"],
                setup["length_delta"])
    return float(out.sum())


@njit
def _use_matrix(form, a, b, a_cnt, b_cnt, na, nb, pa, pb, length_delta):
    if form != 0:
        return form == 2
    return _matrix_is_cheaper(a_cnt[a], b_cnt[b], float(na), float(nb), pa, pb, length_delta)


@njit
def _matrix_walk(V, a0, a1, b0, b1, a_src, a_dst, a_len, b_src, b_dst, b_len, table, length_delta):
    """The walk sum as Σ_d Σ_{i,n} W_d[i,n]·U_d[i,n], W_d = V·M_d, U_d = A_d·V.

    M_d[m, n] is k_len(d, length of b's path (m, n)) (b's paths of length d alone when the
    length kernel is delta), A_d marks a's paths of length d. Every inner loop runs along a
    contiguous row (W is kept transposed), so it vectorizes; the sums run in another order
    than the walk's, so Gaussian results differ from it in the last bits.
    """
    na, nb = V.shape
    Vt = np.ascontiguousarray(V.T)
    Wt = np.empty((nb, na))
    U = np.empty((na, nb))
    total, comp = 0.0, 0.0
    p = a0
    while p < a1:
        d = a_len[p]
        pe = p
        while pe < a1 and a_len[pe] == d:
            pe += 1
        qlo, qhi = b0, b1
        if length_delta:
            qlo = b0 + np.searchsorted(b_len[b0:b1], d, side="left")
            qhi = b0 + np.searchsorted(b_len[b0:b1], d, side="right")
        if qlo < qhi:
            Wt[:, :] = 0.0
            for q in range(qlo, qhi):
                k = 1.0 if length_delta else table[d, b_len[q]]
                n, m = b_dst[q], b_src[q]
                for x in range(na):
                    Wt[n, x] += k * Vt[m, x]
            U[:, :] = 0.0
            for r in range(p, pe):
                i, j = a_src[r], a_dst[r]
                for x in range(nb):
                    U[i, x] += V[j, x]
            s = 0.0
            for i in range(na):
                for n in range(nb):
                    s += U[i, n] * Wt[n, i]
            total, comp = _add(total, comp, s)
        p = pe
    return total + comp


@njit
def _pair(t, rows, cols, a_ptr, a_src, a_dst, a_len, b_ptr, b_src, b_dst, b_len, a_cnt, b_cnt, form, ga_ptr, gb_ptr,
          lab_a, lab_b, att_a, att_b, use_delta, node_gamma, table, length_delta):
    """Graph pair ``t``: its node-kernel matrix V, its path ranges, and its value when the matrix
    form is the cheaper (computed here, sequentially), else NaN (the walk is the caller's)."""
    a, b = rows[t], cols[t]
    oa, ob = ga_ptr[a], gb_ptr[b]
    na, nb = ga_ptr[a + 1] - oa, gb_ptr[b + 1] - ob
    V = np.empty((na, nb))
    for i in range(na):
        for m in range(nb):
            V[i, m] = _node_kernel(oa + i, ob + m, lab_a, lab_b, att_a, att_b, use_delta, node_gamma)
    a0, a1, b0, b1 = a_ptr[a], a_ptr[a + 1], b_ptr[b], b_ptr[b + 1]
    value = np.nan
    if _use_matrix(form, a, b, a_cnt, b_cnt, na, nb, a1 - a0, b1 - b0, length_delta):
        value = _matrix_walk(V, a0, a1, b0, b1, a_src, a_dst, a_len, b_src, b_dst, b_len, table, length_delta)
    return V, a0, a1, b0, b1, value


@njit(parallel=True)
def _fcsp_inside(rows, cols, out, a_ptr, a_src, a_dst, a_len, b_ptr, b_src, b_dst, b_len,
                 a_cnt, b_cnt, form, ga_ptr, gb_ptr, lab_a, lab_b, att_a, att_b, use_delta, node_gamma, lens, table,
                 length_delta, length_gamma):
    """FCSP pair by pair, in parallel inside each pair (the "In" decomposition, for few large pairs).

    Same per-path sums and the same compensated order as ``_walk``: identical results (pairs
    whose matrix form is cheaper take it, sequentially, as in ``_fcsp_pairs``).
    """
    for t in range(len(rows)):
        V, a0, a1, b0, b1, value = _pair(t, rows, cols, a_ptr, a_src, a_dst, a_len, b_ptr, b_src, b_dst, b_len,
                                         a_cnt, b_cnt, form, ga_ptr, gb_ptr, lab_a, lab_b, att_a, att_b, use_delta,
                                         node_gamma, table, length_delta)
        if np.isnan(value):
            sums = np.empty(a1 - a0)
            for k in prange(a1 - a0):
                sums[k] = _path_sum(V, a0 + k, b0, b1, a_src, a_dst, a_len, b_src, b_dst, b_len, lens, table,
                                    length_delta, length_gamma)
            value = _compensated(sums)
        out[t] = value


def fcsp_values(rows: np.ndarray, cols: np.ndarray, setup: dict[str, Any], progress: bool | None = None) -> np.ndarray:
    """FCSP values of graph pairs, in interruptible chunks of about equal work (path pairs plus
    vertex pairs); within a chunk parallel over pairs, or inside pairs when there are few."""
    out = np.empty(len(rows), np.float64)
    pa, pb = np.diff(setup["a_ptr"]), np.diff(setup["b_ptr"])
    va, vb = np.diff(setup["ga_ptr"]), np.diff(setup["gb_ptr"])
    cost = np.concatenate([[0], np.cumsum(pa[rows] * pb[cols] + va[rows] * vb[cols] + 1)])
    inside = len(rows) < 4 * numba.get_num_threads()  # decided once: chunks keep one kernel, one rate
    for lo, hi in chunks(len(rows), what=f"sp_kernel FCSP, {len(rows):,} graph pairs", cost=cost,
                         first=FIRST_CHUNK_WORK, progress=progress):
        fcsp_pairs(rows[lo:hi], cols[lo:hi], out[lo:hi], setup, inside)
    return out


def fcsp_pairs(rows: np.ndarray, cols: np.ndarray, out: np.ndarray, setup: dict[str, Any],
               inside: bool | None = None) -> None:
    """Write the FCSP values of these graph pairs into ``out`` (one kernel call; callers chunk):
    parallel inside each pair (``inside``; default: when there are few pairs) or over pairs."""
    if inside if inside is not None else len(rows) < 4 * numba.get_num_threads():
        _fcsp_inside(rows, cols, out, **setup)
    else:
        _fcsp_pairs(rows, cols, out, **setup)


# First chunk's work (path pairs + vertex pairs) before any timing: about 0.1 s on one core.
FIRST_CHUNK_WORK = 1e8


@njit(parallel=True)
def _fcsp_pairs(rows, cols, out, a_ptr, a_src, a_dst, a_len, b_ptr, b_src, b_dst, b_len,
                a_cnt, b_cnt, form, ga_ptr, gb_ptr, lab_a, lab_b, att_a, att_b, use_delta, node_gamma, lens, table,
                length_delta, length_gamma):
    """FCSP over a list of graph pairs, in parallel over pairs (the "Out" decomposition)."""
    for t in prange(len(rows)):
        V, a0, a1, b0, b1, value = _pair(t, rows, cols, a_ptr, a_src, a_dst, a_len, b_ptr, b_src, b_dst, b_len,
                                         a_cnt, b_cnt, form, ga_ptr, gb_ptr, lab_a, lab_b, att_a, att_b, use_delta,
                                         node_gamma, table, length_delta)
        if np.isnan(value):
            value = _walk(V, a0, a1, b0, b1, a_src, a_dst, a_len, b_src, b_dst, b_len, lens, table, length_delta,
                          length_gamma)
        out[t] = value


def cost(inputs: dict[str, Any], params: SPKernelParams) -> dict[str, Any]:
    """Least bytes moved (the float64 Gram matrix written once) and the counts rates are quoted in:
    graph pairs, and for the FCSP path the path pairs the walk stands for (whichever form runs)."""
    graphs, other = inputs["graphs"], inputs.get("other")
    n = len(graphs)
    m = n if other is None else len(other)
    counts: dict[str, float] = {"graph pairs": n * (n + 1) / 2 if other is None else n * m}
    if not params.use_histogram:
        path_pairs = fcsp_path_pairs(graphs.csr(), None if other is None else other.csr(), params)
        if path_pairs is not None:
            counts["path pairs"] = path_pairs
    return {"bytes": 8.0 * n * m, "flops": 0.0, "counts": counts}
