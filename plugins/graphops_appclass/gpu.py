"""GPU backend of ``appclass``: CuPy RawKernels from ``kernels/appclass.cu``, float64, column-major.

The same algorithm as :mod:`graphops_appclass.cpu` (see there for why FE/RE are never
formed and their column sums are taken per source): per round, one pass over the data edges
(``edge_pass``: gather by source, scatter-max by destination) and a few passes over the
node arrays. With the ``stored`` schedule CE (PE × DE) is kept; with
``recompute`` it is recomputed from the edge features in every pass, bit for bit the same.
Rounds are queued back to back; the host waits once per chunk of rounds.
"""
from __future__ import annotations

import time

import cupy as cp
import numpy as np

from graphops.plugin import Result, chunks, grid, load_module, wait_idle

from .common import ACGraph, footprint, top_k
from .params import AppclassParams, plan_schedule

__all__ = ["run"]

THREADS = 256
ITEMS = 8  # rows per thread in the blocked kernels
ROWS_PER_BLOCK = THREADS * ITEMS
HUB_EDGES = 256  # out-degree from which a source vertex gets a whole block in out_weights

_module = load_module("graphops_appclass", "appclass", defines={"THREADS": THREADS, "ITEMS": ITEMS,
                                                                   "HUB_EDGES": HUB_EDGES})
_k = {name: _module.get_function(name) for name in
      ("node_distances", "col_partials", "combine", "normalise", "edge_init", "edge_pass", "out_weights",
       "out_weights_hubs", "source_partials", "node_pass", "diffs")}
_i64, _i32, _f64 = np.int64, np.int32, np.float64
NULL = np.uint64(0)  # a null pointer argument (CuPy passes None as 0xffffffff, not NULL)


def _opt(a: cp.ndarray | None) -> cp.ndarray | np.uint64:
    return NULL if a is None else a


def _blocks(rows: int) -> int:
    return max(1, -(-rows // ROWS_PER_BLOCK))


def _combine(pm: cp.ndarray, ps: cp.ndarray | None, out: cp.ndarray) -> None:
    """Column max (and log-sum, into ``out[k:]``) of block partials ``(nb, k)``."""
    nb, k = pm.shape
    sums = NULL if ps is None else out[k:]
    _k["combine"]((k,), (THREADS,), (pm, _opt(ps), _i32(nb), _i32(k), out[:k], sums))


def _stats(z: cp.ndarray, sign: float) -> cp.ndarray:
    """``[m (k), log S (k)]`` of the column log-softmax of ``sign * z`` (k × n)."""
    k, n = z.shape
    nb = _blocks(n)
    pm, ps = cp.empty((nb, k)), cp.empty((nb, k))
    _k["col_partials"]((nb, k), (THREADS,), (z, _i64(n), _i32(k), _f64(sign), pm, ps))
    out = cp.empty(2 * k)
    _combine(pm, ps, out)
    return out


def _normalise(z: cp.ndarray, sign: float, stats: cp.ndarray, out: cp.ndarray) -> None:
    k, n = z.shape
    _k["normalise"](grid(z.size), (THREADS,), (z, _i64(n), _i32(k), _f64(sign), stats[:k], stats[k:], out))


def _normprob(z: cp.ndarray, sign: float = 1.0, out: cp.ndarray | None = None) -> cp.ndarray:
    out = cp.empty_like(z) if out is None else out
    _normalise(z, sign, _stats(z, sign), out)
    return out


def _out_edges(data: ACGraph) -> tuple[cp.ndarray, cp.ndarray]:
    """Offsets of each vertex's out-edges (the canonical order is by source) and the hubs
    (vertices with at least HUB_EDGES of them), cached with the prepared graph."""
    if "sptr" not in data.extra:
        sptr = cp.zeros(data.n + 1, dtype=cp.int64)
        cp.cumsum(cp.bincount(data.src, minlength=data.n), out=sptr[1:])
        data.extra["sptr"] = sptr
        data.extra["hubs"] = cp.flatnonzero(cp.diff(sptr) >= HUB_EDGES)
    return data.extra["sptr"], data.extra["hubs"]


class _State:
    """The call's device arrays: the data graph (features transposed, int32 edges), the pattern,
    and the node arrays, all PE × DV or PV × DV."""

    def __init__(self, data: ACGraph, pattern: ACGraph, schedule: str):
        self.n, self.m, self.pe, self.pv, self.dim = data.n, data.m, pattern.m, pattern.n, data.edge_dim
        self.src, self.dst = data.src, data.dst  # int32 (prepare_gpu)
        self.at = data.a.T  # de × DE, C-contiguous: the prepared features are column-major
        self.sptr, self.hubs = _out_edges(data)
        self.b = cp.ascontiguousarray(pattern.a)  # PE × de
        self.psrc, self.pdst = pattern.src, pattern.dst
        node = (self.pe, self.n)
        self.vf, self.vr, self.fmax, self.rmax = (cp.empty(node) for _ in range(4))
        self.raw_f, self.cmin = cp.full(node, np.inf), cp.full(node, np.inf)  # first: minima of De
        self.w = cp.empty(node)
        self.mu, self.cv = cp.empty((self.pv, self.n)), cp.empty((self.pv, self.n))
        self.ce = cp.empty((self.pe, self.m)) if schedule == "stored" else None
        self.ce_stats = cp.empty(2 * self.pe)
        self.nb_edges = _blocks(self.m)
        self.pm = cp.full((self.nb_edges, 2 * self.pe), -np.inf)  # stays so without data edges
        self.ps = cp.zeros((self.nb_edges, 2 * self.pe))
        self.pm_src, self.ps_src = cp.empty((_blocks(self.n), 2 * self.pe)), cp.empty((_blocks(self.n), 2 * self.pe))
        self.stats = cp.empty(4 * self.pe)
        self.pm_mu, self.ps_mu = cp.empty((_blocks(self.n), self.pv)), cp.empty((_blocks(self.n), self.pv))
        self.mu_stats = cp.empty(2 * self.pv)
        self.floors = cp.empty(2 * self.pe)
        self.pm_nodes = cp.empty((_blocks(self.n), 2 * self.pe))


    def nbytes(self) -> int:
        """Bytes of the device arrays this call holds (the state, not the prepared inputs)."""
        inputs = {"src", "dst", "at", "sptr", "hubs", "psrc", "pdst"}
        return sum(int(v.nbytes) for k, v in vars(self).items() if isinstance(v, cp.ndarray) and k not in inputs)


def _node_beliefs(data: ACGraph, pattern: ACGraph, st: _State) -> None:
    xt = data.x.T  # dn × DV, C-contiguous
    dn = cp.empty((st.pv, st.n))
    y = cp.ascontiguousarray(pattern.x)  # PV × dn
    _k["node_distances"](grid(st.n), (THREADS,), (y, _i32(st.pv), xt, _i64(st.n), _i32(data.node_dim), dn))
    _normprob(dn, 1.0, st.cv)
    _normprob(dn, -1.0, st.mu)


def _floors(st: _State, fm: cp.ndarray | None, rm: cp.ndarray | None) -> None:
    nb = st.pm_nodes.shape[0]
    _k["diffs"]((nb,), (THREADS,), (st.mu, _opt(fm), _opt(rm), st.psrc, st.pdst, _i64(st.n), _i32(st.pe), st.vf, st.vr,
                                    st.pm_nodes))
    _combine(st.pm_nodes, None, st.floors)


def _node_pass(st: _State, raw_sign: float, add: cp.ndarray | None, mu: cp.ndarray | None) -> None:
    _k["node_pass"](grid(st.n), (THREADS,), (st.raw_f, _f64(raw_sign), st.cmin, _opt(add), st.stats, st.floors,
                                             _i64(st.n), _i32(st.pe), _i32(st.pv), st.psrc, st.pdst, st.fmax,
                                             st.rmax, st.cv, _opt(mu)))


def _init(data: ACGraph, pattern: ACGraph, st: _State) -> None:
    _node_beliefs(data, pattern, st)
    if st.m:
        _k["edge_init"]((st.nb_edges * st.pe,), (THREADS,),
                        (st.b, st.at, st.src, st.dst, _i64(st.m), _i64(st.n), _i32(st.pe), _i32(st.dim), _opt(st.ce),
                         st.raw_f, st.cmin, st.pm, st.ps))
    edge = cp.empty(4 * st.pe).reshape(2, 2, st.pe)  # [m, log S] x [+De, -De]
    _combine(st.pm, st.ps, edge.reshape(-1))
    st.ce_stats[:] = edge[:, 0].reshape(-1)  # CE = normprob(De)
    st.stats.reshape(2, 2, st.pe)[:] = edge[:, 1:2]  # FE = RE = normprob(-De)
    _floors(st, None, None)
    _node_pass(st, -1.0, None, None)  # raw_f holds min De over in-edges, cmin over out-edges
    _normalise(st.cmin, 1.0, st.ce_stats, st.cmin)  # min CE over out-edges (h is non-decreasing)
    if st.ce is not None:
        _normalise(st.ce, 1.0, st.ce_stats, st.ce)
    pe = st.pe
    _k["out_weights"](grid(st.n * 32), (THREADS,),  # a warp per source vertex
                      (_opt(st.ce), st.b, _opt(st.at), st.ce_stats[:pe], st.ce_stats[pe:], st.sptr, _i64(st.m),
                       _i64(st.n), _i32(pe), _i32(st.dim), st.cmin, st.w))
    if len(st.hubs):
        _k["out_weights_hubs"]((len(st.hubs),), (THREADS,),
                               (_opt(st.ce), st.b, _opt(st.at), st.ce_stats[:pe], st.ce_stats[pe:], st.sptr, st.hubs,
                                _i64(st.m), _i64(st.n), _i32(pe), _i32(st.dim), st.cmin, st.w))
    if st.ce is not None:
        st.at = None  # the kernels read CE; the features are needed only to recompute it


def _round(st: _State) -> None:
    _floors(st, st.fmax, st.rmax)
    pe = st.pe
    if st.m:
        _k["edge_pass"]((grid(st.m, per_sm=4)[0] * pe,), (THREADS,),
                        (_opt(st.ce), st.b, _opt(st.at), st.ce_stats[:pe], st.ce_stats[pe:], st.src, st.dst,
                         _i64(st.m), _i64(st.n), _i32(pe), _i32(st.dim), _i32(st.ce is None), st.vr, st.raw_f))
    _k["source_partials"]((st.pm_src.shape[0], pe), (THREADS,),
                          (st.vr, st.vf, st.cmin, st.w, _i64(st.n), _i32(pe), st.pm_src, st.ps_src))
    _combine(st.pm_src, st.ps_src, st.stats)  # [mF, mR, log SF, log SR]
    _node_pass(st, 1.0, st.vf, st.mu)
    nb = st.pm_mu.shape[0]
    _k["col_partials"]((nb, st.pv), (THREADS,), (st.mu, _i64(st.n), _i32(st.pv), _f64(1.0), st.pm_mu, st.ps_mu))
    _combine(st.pm_mu, st.ps_mu, st.mu_stats)
    _normalise(st.mu, 1.0, st.mu_stats, st.mu)


def _free_bytes() -> float:
    pool = cp.get_default_memory_pool()
    free, _ = cp.cuda.runtime.memGetInfo()
    return float(free + pool.free_bytes())


def run(data: ACGraph, pattern: ACGraph, params: AppclassParams) -> Result:
    """MU (DV × PV, CuPy), or the top-k table when ``params.top_k`` is set."""
    schedule, why = plan_schedule(data, pattern, params, device="gpu", free=_free_bytes())
    t0 = time.perf_counter()
    st = _State(data, pattern, schedule)
    _init(data, pattern, st)
    wait_idle()
    t1 = time.perf_counter()
    for lo, hi in chunks(pattern.n, what="appclass rounds", first=1, sync=wait_idle):
        for _ in range(lo, hi):
            _round(st)
    mu = cp.ascontiguousarray(st.mu.T)
    wait_idle()
    phases = {"init": t1 - t0, "rounds": time.perf_counter() - t1}
    details = {"iterations": pattern.n, "phases_s": phases, "schedule": schedule, "schedule_reason": why,
               "footprint_bytes": footprint(data.n, data.m, pattern.n, pattern.m, data.node_dim,
                                            data.edge_dim, schedule)["peak"],
               "device_held_bytes": st.nbytes() + int(mu.nbytes),
               "input_bytes": sum(int(a.nbytes) for a in (data.x, data.src, data.dst, data.a, st.sptr, st.hubs))}
    return Result(mu if params.top_k is None else top_k(mu, params.top_k), details)
