"""CPU backend of ``appclass``: Numba kernels over row-major arrays, edges in destination order.

Nothing of size DE × PE is stored but CE (or, with the ``recompute`` schedule, nothing at
all). Two facts of the algorithm (see :mod:`graphops_appclass.params`) make that possible:

* ``normprob`` is ``h(z) = log(exp(z - m)) - log(S)``, a non-decreasing function of ``z``
  per column, so a scatter-max of normalised messages is ``h`` of the scatter-max of the raw
  ones: FE and RE are never formed, only their column maxima ``m`` and sums ``S``.
* Both messages gather by the data edge's *source*: over the out-edges of ``v`` the message
  is ``g[v] - CE[e]`` (``g`` = VR or VF), so its largest value there is ``g[v] - min CE`` and
  its sum of ``exp(. - m)`` is ``exp(g[v] - min CE - m) * w[v]``, with
  ``w[v] = sum exp(min CE - CE[e])`` fixed for the whole run. The column maxima and sums of
  FE and RE, and RE's scatter-max by source, therefore cost ``DV × PE`` per round; the only
  pass over the edges left is FE's scatter-max by destination, a gather and a max.

This factorisation changes the rounding of the column sums (one exp of a product instead of
an exp per edge), by about 1e-14 relative; the printed output (7 significant digits) is
unaffected. Column sums are taken per fixed chunk of rows and combined in chunk order: the
result does not depend on the thread count.
"""
from __future__ import annotations

import math
import time

import numpy as np

from graphops.plugin import Result, chunks, njit, prange

from .common import ACGraph, footprint, top_k
from .params import AppclassParams, plan_schedule

__all__ = ["run"]

ROWS_PER_CHUNK = 2048  # rows (edges or vertices) per partial column sum
NEG = -np.inf


# --- column log-softmax in pieces -----------------------------------------------------------
@njit(parallel=True)
def _col_partials(z, sign, rows, pm, ps):
    """Per chunk of ``rows`` rows of ``sign * z``: column max ``pm`` and sum of exp(z - max) ``ps``."""
    n, k = z.shape
    for c in prange(pm.shape[0]):
        lo, hi = c * rows, min(n, c * rows + rows)
        for j in range(k):
            pm[c, j] = -np.inf
            ps[c, j] = 0.0
        for i in range(lo, hi):
            for j in range(k):
                v = sign * z[i, j]
                if v > pm[c, j]:
                    pm[c, j] = v
        for i in range(lo, hi):
            for j in range(k):
                v = sign * z[i, j]
                if v > -np.inf:
                    ps[c, j] += math.exp(v - pm[c, j])


@njit
def _combine(pm, ps, m, log_s):
    """Column max (floored at -DBL_MAX, as the reference does) and log of the column sum."""
    floor = -1.7976931348623157e308
    for j in range(pm.shape[1]):
        best = -np.inf
        for c in range(pm.shape[0]):
            best = max(best, pm[c, j])
        m[j] = max(best, floor)
        total = 0.0
        for c in range(pm.shape[0]):
            if ps[c, j] > 0.0:
                total += ps[c, j] * math.exp(pm[c, j] - m[j])
        log_s[j] = math.log(total) if total > 0.0 else -np.inf


@njit(inline="always")
def _h(z, m, log_s):
    """One normalised entry: ``log(exp(z - m)) - log_s`` (-inf when exp underflows)."""
    e = math.exp(z - m)
    return math.log(e) - log_s if e > 0.0 else -np.inf


@njit(parallel=True)
def _normalise(z, sign, m, log_s, out):
    for i in prange(z.shape[0]):
        for j in range(z.shape[1]):
            out[i, j] = _h(sign * z[i, j], m[j], log_s[j])


def _stats(z: np.ndarray, sign: float) -> tuple[np.ndarray, np.ndarray]:
    k = z.shape[1]
    n_chunks = max(1, -(-z.shape[0] // ROWS_PER_CHUNK))
    pm, ps = np.empty((n_chunks, k)), np.empty((n_chunks, k))
    _col_partials(z, sign, ROWS_PER_CHUNK, pm, ps)
    m, log_s = np.empty(k), np.empty(k)
    _combine(pm, ps, m, log_s)
    return m, log_s


def normprob(z: np.ndarray, sign: float = 1.0) -> np.ndarray:
    """Column log-softmax of ``sign * z`` in the reference programs' form."""
    m, log_s = _stats(z, sign)
    out = np.empty_like(z)
    _normalise(z, sign, m, log_s, out)
    return out


# --- distances ------------------------------------------------------------------------------
@njit(parallel=True)
def _distances(qt, x, rows, out):
    """``out[r, j] = sqrt(sum_f (qt[f, j] - x[rows[r], f])**2)``, summed in feature order: ``qt`` is
    the pattern's features transposed, so the loop over ``j`` is a vector loop (the sums' order,
    and so their bits, are the scalar loop's)."""
    k = qt.shape[1]
    for r in prange(rows.shape[0]):
        i = rows[r]
        acc = out[r]
        for j in range(k):
            acc[j] = 0.0
        for f in range(x.shape[1]):
            xf = x[i, f]
            for j in range(k):
                d = qt[f, j] - xf
                acc[j] += d * d
        for j in range(k):
            acc[j] = math.sqrt(acc[j])


@njit(parallel=True)
def _segment_min(z, ptr, perm, out):
    """``out[v] = min over rows perm[ptr[v]:ptr[v+1]] of z`` (+inf for an empty segment)."""
    for v in prange(ptr.shape[0] - 1):
        for p in range(z.shape[1]):
            out[v, p] = np.inf
        for k in range(ptr[v], ptr[v + 1]):
            r = perm[k]
            for p in range(z.shape[1]):
                if z[r, p] < out[v, p]:
                    out[v, p] = z[r, p]


# --- one iteration --------------------------------------------------------------------------
@njit(parallel=True)
def _edge_pass(c0, c1, bounds, dptr, esrc, ce, vr, raw_f):
    """Raw in-edge maxima of ``-CE + VR[src]`` for the vertices of chunks c0..c1-1 (no sums:
    those are taken per source, see ``_source_partials``)."""
    pe = ce.shape[1]
    for c in prange(c0, c1):
        for v in range(bounds[c], bounds[c + 1]):
            for p in range(pe):
                raw_f[v, p] = -np.inf
            for e in range(dptr[v], dptr[v + 1]):
                s = esrc[e]
                for p in range(pe):
                    raw_f[v, p] = max(raw_f[v, p], -ce[e, p] + vr[s, p])


@njit(parallel=True)
def _out_weights(ce, cmin, sptr, spos, w):
    """``w[s] = sum over s's out-edges of exp(-CE + min CE)`` (in [1, out-degree]; fixed)."""
    for v in prange(sptr.shape[0] - 1):
        for p in range(ce.shape[1]):
            w[v, p] = 0.0
        for k in range(sptr[v], sptr[v + 1]):
            r = spos[k]
            for p in range(ce.shape[1]):
                w[v, p] += math.exp(-ce[r, p] + cmin[v, p])


@njit(parallel=True)
def _source_partials(g, cmin, w, rows, pm, ps):
    """Column max and sum of one message over the edges, taken per source ``v``: its edges'
    largest message is ``x = -min CE + g[v]`` and their sum of exp is ``exp(x - m) * w[v]``."""
    n, pe = g.shape
    for c in prange(pm.shape[0]):
        lo, hi = c * rows, min(n, c * rows + rows)
        for p in range(pe):
            pm[c, p] = -np.inf
            ps[c, p] = 0.0
        for v in range(lo, hi):
            for p in range(pe):
                pm[c, p] = max(pm[c, p], -cmin[v, p] + g[v, p])
        for v in range(lo, hi):
            for p in range(pe):
                x = -cmin[v, p] + g[v, p]
                if x > -np.inf:
                    ps[c, p] += math.exp(x - pm[c, p]) * w[v, p]


@njit(parallel=True)
def _node_pass(raw_f, cmin, add, floor_f, floor_r, mf, lsf, mr, lsr, fmax, rmax):
    """FMax = max(floor_f, h_F(raw_f)); RMax = max(floor_r, h_R(add - cmin)), h the column
    normalisations: the scatter-maxes of the normalised messages, taken after the fact."""
    for v in prange(raw_f.shape[0]):
        for p in range(raw_f.shape[1]):
            raw = raw_f[v, p]  # -inf: no in-edge
            fmax[v, p] = max(floor_f[p], _h(raw, mf[p], lsf[p])) if raw > -np.inf else floor_f[p]
            c = cmin[v, p]  # +inf: no out-edge
            rmax[v, p] = max(floor_r[p], _h(-c + add[v, p], mr[p], lsr[p])) if c < np.inf else floor_r[p]


@njit(parallel=True)
def _beliefs(cv, fmax, rmax, psrc, pdst, mu):
    """MU = -CV, plus FMax into each pattern edge's target column and RMax into its source's."""
    for v in prange(cv.shape[0]):
        for j in range(cv.shape[1]):
            mu[v, j] = -cv[v, j]
        for p in range(psrc.shape[0]):
            mu[v, pdst[p]] += fmax[v, p]
            mu[v, psrc[p]] += rmax[v, p]


@njit(parallel=True)
def _diffs(mu, fmax, rmax, psrc, pdst, rows, vf, vr, pmf, pmr):
    """VF = MU[:, τ] - FMax, VR = MU[:, σ] - RMax, with column maxima per chunk of ``rows``."""
    n, pe = vf.shape
    for c in prange(pmf.shape[0]):
        for p in range(pe):
            pmf[c, p] = -np.inf
            pmr[c, p] = -np.inf
        for v in range(c * rows, min(n, c * rows + rows)):
            for p in range(pe):
                vf[v, p] = mu[v, pdst[p]] - fmax[v, p]
                vr[v, p] = mu[v, psrc[p]] - rmax[v, p]
                pmf[c, p] = max(pmf[c, p], vf[v, p])
                pmr[c, p] = max(pmr[c, p], vr[v, p])


# --- driver ---------------------------------------------------------------------------------
class _State:
    """Everything one call holds: the data graph in destination order and the node arrays."""

    def __init__(self, data: ACGraph, pattern: ACGraph):
        n, pe, pv = data.n, pattern.m, pattern.n
        self.order = np.argsort(data.dst, kind="stable")
        self.esrc = np.ascontiguousarray(data.src[self.order])
        self.dptr = _ptr(data.dst, n)
        self.sptr = _ptr(data.src, n)  # canonical order is by source: out-edges are contiguous
        self.spos = np.empty(data.m, np.int64)
        self.spos[self.order] = np.arange(data.m)  # canonical row -> destination-order row
        marks = np.arange(0, data.m, ROWS_PER_CHUNK)
        starts = np.searchsorted(self.dptr, marks, side="right") - 1  # vertex chunks of ~ROWS edges
        self.bounds = np.unique(np.concatenate([[0], starts, [n]]))
        self.psrc, self.pdst = pattern.src, pattern.dst
        shape = (n, pe)
        self.vf, self.vr, self.fmax, self.rmax, self.raw_f = (np.empty(shape) for _ in range(5))
        self.cmin, self.w = np.empty(shape), np.empty(shape)
        self.mu, self.cv = np.empty((n, pv)), np.empty((n, pv))


def _ptr(keys: np.ndarray, n: int) -> np.ndarray:
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=ptr[1:])
    return ptr


def _edge_distances(data: ACGraph, pattern: ACGraph, st: _State) -> np.ndarray:
    de = np.empty((data.m, pattern.m))
    # Touched by one thread first: page faults taken by both threads at once cost 63 ms for the
    # 42 MB of a JohnsHopkins-sized case on the 2-core machine, one thread's fill 7.5 ms plus the
    # kernel's 14 ms.
    de.fill(0.0)
    qt = np.ascontiguousarray(pattern.a.T)
    for lo, hi in chunks(data.m, what="appclass edge distances", progress=False, first=1 << 16):
        _distances(qt, data.a, st.order[lo:hi], de[lo:hi])
    return de


def _init(data: ACGraph, pattern: ACGraph, st: _State) -> np.ndarray:
    dn = np.empty((data.n, pattern.n))
    _distances(np.ascontiguousarray(pattern.x.T), data.x, np.arange(data.n), dn)
    st.cv[:] = normprob(dn)
    st.mu[:] = normprob(dn, -1.0)
    de = _edge_distances(data, pattern, st)
    min_in, min_out = np.empty_like(st.fmax), np.empty_like(st.fmax)
    _segment_min(de, st.dptr, np.arange(data.m), min_in)
    _segment_min(de, st.sptr, st.spos, min_out)
    m0, ls0 = _stats(de, -1.0)  # FE = RE = normprob(-De)
    mc, lsc = _stats(de, 1.0)  # CE = normprob(De), in place
    _normalise(de, 1.0, mc, lsc, de)
    _normalise(min_out, 1.0, mc, lsc, st.cmin)  # min CE over out-edges (+inf: none)
    _out_weights(de, st.cmin, st.sptr, st.spos, st.w)
    zeros = np.zeros_like(st.fmax)
    vf_floor, vr_floor = _diff_step(st, zeros, zeros)
    _node_pass(-min_in, min_out, zeros, vr_floor, vf_floor, m0, ls0, m0, ls0, st.fmax, st.rmax)
    return de


def _diff_step(st: _State, fmax: np.ndarray, rmax: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n_chunks = max(1, -(-st.mu.shape[0] // ROWS_PER_CHUNK))
    pmf, pmr = np.empty((n_chunks, st.vf.shape[1])), np.empty((n_chunks, st.vf.shape[1]))
    _diffs(st.mu, fmax, rmax, st.psrc, st.pdst, ROWS_PER_CHUNK, st.vf, st.vr, pmf, pmr)
    return pmf.max(axis=0), pmr.max(axis=0)


def _message_stats(st: _State, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column max and log-sum of ``-CE + g[src]`` over all edges, from per-source terms."""
    n_chunks, pe = max(1, -(-st.w.shape[0] // ROWS_PER_CHUNK)), g.shape[1]
    pm, ps = np.empty((n_chunks, pe)), np.empty((n_chunks, pe))
    _source_partials(g, st.cmin, st.w, ROWS_PER_CHUNK, pm, ps)
    m, log_s = np.empty(pe), np.empty(pe)
    _combine(pm, ps, m, log_s)
    return m, log_s


def _iterate(st: _State, ce: np.ndarray) -> None:
    vf_floor, vr_floor = _diff_step(st, st.fmax, st.rmax)
    n_chunks = len(st.bounds) - 1
    for c0, c1 in chunks(n_chunks, what="appclass edges", progress=False, first=64):
        _edge_pass(c0, c1, st.bounds, st.dptr, st.esrc, ce, st.vr, st.raw_f)
    mf, lsf = _message_stats(st, st.vr)
    mr, lsr = _message_stats(st, st.vf)
    _node_pass(st.raw_f, st.cmin, st.vf, vr_floor, vf_floor, mf, lsf, mr, lsr, st.fmax, st.rmax)
    _beliefs(st.cv, st.fmax, st.rmax, st.psrc, st.pdst, st.mu)
    st.mu[:] = normprob(st.mu)


def run(data: ACGraph, pattern: ACGraph, params: AppclassParams) -> Result:
    """MU (DV × PV log-probabilities), or the top-k table when ``params.top_k`` is set."""
    schedule, why = plan_schedule(data, pattern, params, device="cpu")
    t0 = time.perf_counter()
    st = _State(data, pattern)
    ce = _init(data, pattern, st)
    t1 = time.perf_counter()
    for lo, hi in chunks(pattern.n, what="appclass iterations", first=1):
        for _ in range(lo, hi):
            _iterate(st, ce)
    phases = {"init": t1 - t0, "rounds": time.perf_counter() - t1}
    details = {"iterations": pattern.n, "phases_s": phases, "schedule": schedule, "schedule_reason": why,
               "footprint_bytes": footprint(data.n, data.m, pattern.n, pattern.m, data.node_dim,
                                            data.edge_dim, schedule)["peak"]}
    return Result(st.mu if params.top_k is None else top_k(st.mu, params.top_k), details)
