"""What every ``jaccard`` backend shares: the set adjacency, degree/work statistics, the result;
and the similarity family's members (:data:`MEASURES`: name, column, formula, what is summed),
light enough for the plugin's registration (the engine is :mod:`.measures`).

Written once for NumPy and CuPy (``xp``). The set adjacency is the graph's CSR with
repeated entries removed (the first stored one kept, so its weight is used),
symmetrized for a directed graph when asked, rows sorted; it is built once per CSR
view and cached on it, with each row's weight sum for the weighted variant.
"""
from __future__ import annotations

import dataclasses
import enum
import functools
from dataclasses import dataclass
from typing import Any

from graphops.plugin import CSR, Shipped, gini

# Pairs whose shorter list has at most this many entries are done by one GPU thread
# (and are the candidates for the CPU share of the hybrid backend).
THREAD_MAX = 32
# Pairs whose shorter list is longer than this get a whole GPU block; between, a warp.
WARP_MAX = 4096


class Mode(enum.IntEnum):
    """What the kernels compute for a pair, named once: the CPU kernels compare with these values
    and the CUDA source receives them as ``-D`` macros (``MODE_SETS``, ...)."""

    SETS = 0      # J of the set adjacency
    WEIGHTED = 1  # weighted J
    SHARED = 2    # the shared count |N(u) ∩ N(v)| itself (exact in a double; column slices add them up)
    MIN_SUM = 3   # Σ min(w_ux, w_vx) over the shared neighbours x
    PROD_SUM = 4  # Σ w_ux w_vx over them
    AUX_SUM = 5   # Σ aux[x] over them, u and v themselves left out (networkx's indices)

    @classmethod
    def of(cls, weighted: bool) -> "Mode":
        """Jaccard's own mode: weighted (Σ min over Σ max) or of sets."""
        return cls.WEIGHTED if weighted else cls.SETS

    @property
    def sums(self) -> bool:
        """Whether the kernels add a term per shared neighbour (else they only count them)."""
        return self not in (Mode.SETS, Mode.SHARED)


MODE_DEFINES = {f"MODE_{m.name}": int(m) for m in Mode}  # the macros kernels/jaccard.cu is built with


# ---- the similarity family's members (the engine: measures.py) ----
# What the engine gathers over the shared neighbours besides counting them: the raw modes (plain ints:
# constants to Numba), which the measure's formula then finishes.
ACC_NONE, ACC_MIN, ACC_PROD, ACC_AUX = (int(m) for m in (Mode.SHARED, Mode.MIN_SUM, Mode.PROD_SUM, Mode.AUX_SUM))
# the final formula of each measure
JACCARD, SORENSEN, OVERLAP, COSINE, SUM = 0, 1, 2, 3, 4
FORMULA_DEFINES = {f"FORMULA_{name}": value for name, value in
                   (("JACCARD", JACCARD), ("SORENSEN", SORENSEN), ("OVERLAP", OVERLAP), ("COSINE", COSINE),
                    ("SUM", SUM))}


@dataclass(frozen=True)
class Measure:
    """One member of the family: its algorithm name, output column, formula and what it sums."""

    name: str
    column: str
    formula: int
    weights: bool          # takes use_weight (the set measures)
    aux: str | None = None  # "inv_log" or "inv": the per-vertex g(w) summed (adamic_adar, resource_allocation)
    summary: str = ""

    def accumulator(self, weighted: bool) -> int:
        """The raw mode (:class:`Mode`, as an int) that the kernels compute for this measure."""
        if self.aux is not None:
            return ACC_AUX
        if not weighted:
            return ACC_NONE
        return ACC_PROD if self.formula == COSINE else ACC_MIN


MEASURES = {m.name: m for m in (  # the family, by algorithm name
    Measure("jaccard", "jaccard_coeff", JACCARD, True,
            summary="Jaccard coefficient |N(u) ∩ N(v)| / |N(u) ∪ N(v)|"),
    Measure("sorensen", "sorensen_coeff", SORENSEN, True,
            summary="Sørensen–Dice coefficient 2 |N(u) ∩ N(v)| / (d_u + d_v)"),
    Measure("overlap", "overlap_coeff", OVERLAP, True,
            summary="overlap coefficient |N(u) ∩ N(v)| / min(d_u, d_v)"),
    Measure("cosine", "cosine_coeff", COSINE, True,
            summary="cosine similarity (Salton index) |N(u) ∩ N(v)| / √(d_u d_v)"),
    Measure("adamic_adar", "adamic_adar_index", SUM, False, aux="inv_log",
            summary="Adamic–Adar index Σ 1 / log d(w) over common neighbours (networkx's)"),
    Measure("resource_allocation", "resource_allocation_index", SUM, False, aux="inv",
            summary="resource allocation index Σ 1 / d(w) over common neighbours (networkx's)"),
)}


@dataclass(frozen=True)
class Adjacency(Shipped):
    """Sorted, duplicate-free neighbour sets of an undirected graph on one device (what a
    cluster call sends its workers: :mod:`graphops_jaccard.dist`)."""

    indptr: Any          # int64, n + 1
    indices: Any         # int32, sorted within each row
    weights: Any = None  # float64 per entry (weighted variant only)
    wdeg: Any = None     # float64 per vertex: the row's weight sum, summed in row order

    @property
    def xp(self) -> Any:
        from graphops.plugin import device_of

        return device_of(self.indptr).xp

    @property
    def n_vertices(self) -> int:
        return len(self.indptr) - 1

    def degrees(self) -> Any:
        return self.indptr[1:] - self.indptr[:-1]

    def wedges(self, us: Any) -> Any:
        """Per first vertex u of ``us``: Σ d_x over its neighbours x, the wedges u–x–v a two-hop
        walk from u visits (an upper bound of its pairs; int64, on the adjacency's device)."""
        xp = self.xp
        us = xp.asarray(us, dtype=xp.int64)
        start, length = self.indptr[us], self.indptr[us + 1] - self.indptr[us]
        ends = xp.cumsum(length)
        total = int(ends[-1]) if len(us) else 0
        if 2 * total >= len(self.indices):  # most rows: one pass over every entry
            along = xp.zeros(len(self.indices) + 1, xp.int64)
            xp.cumsum(self.degrees()[self.indices], out=along[1:])
            return along[start + length] - along[start]
        at = xp.arange(total, dtype=xp.int64)  # a few rows: their entries only, O(Σ d_u)
        row = xp.searchsorted(ends, at, side="right")  # each entry's row among ``us`` (CuPy: no repeat by counts)
        along = xp.zeros(total + 1, xp.int64)
        xp.cumsum(self.degrees()[self.indices[start[row] + at - (ends - length)[row]]], out=along[1:])
        return along[ends] - along[ends - length]

    @functools.cached_property
    def max_degree(self) -> int:
        """The longest list's length (a host int, read once per adjacency)."""
        return int(self.degrees().max()) if self.n_vertices else 0

    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in (self.indptr, self.indices, self.weights) if a is not None)

    def to_host(self) -> "Adjacency":
        from graphops.plugin import Device, to_device

        return Adjacency(*(None if a is None else to_device(a, Device.CPU)
                           for a in (self.indptr, self.indices, self.weights, self.wdeg)))


def adjacency(csr: CSR, symmetrize: bool, weighted: bool, row_sums: Any = None) -> Adjacency:
    """The set adjacency of ``csr`` (cached on it per variant). ``row_sums(indptr, w)``: the
    calling backend's own sum of each row's weights in row order (the same on CPU and GPU),
    giving ``wdeg`` to a weighted adjacency."""
    key = ("jaccard_adjacency", bool(symmetrize and csr.directed), bool(weighted))
    adj = csr.cached(key, lambda: _build(csr, weighted))
    if adj.weights is None or row_sums is None:
        return adj
    wdeg = csr.cached((*key, "wdeg"), lambda: row_sums(adj.indptr, adj.weights))
    return dataclasses.replace(adj, wdeg=wdeg)


def _build(csr: CSR, weighted: bool) -> Adjacency:
    xp, n = csr.xp, csr.n_vertices
    rows = xp.repeat(xp.arange(n, dtype=xp.int64), csr.indptr[1:] - csr.indptr[:-1])
    cols = csr.indices.astype(xp.int64)
    eids, w = csr.edge_ids, csr.weights if weighted else None
    if csr.directed:  # symmetrize: every arc in both directions
        rows, cols = xp.concatenate([rows, cols]), xp.concatenate([cols, rows])
        eids = xp.concatenate([eids, eids])
        w = None if w is None else xp.concatenate([w, w])
    key = rows * max(n, 1) + cols
    if csr.directed or bool((key[1:] == key[:-1]).any()):
        order = xp.lexsort(xp.stack([eids, key]))  # by (row, column), then frame order
        key = key[order]
        first = xp.ones(len(key), dtype=bool)
        first[1:] = key[1:] != key[:-1]
        keep = order[first]
        rows, cols = rows[keep], cols[keep]
        w = None if w is None else w[keep]
    indptr = xp.zeros(n + 1, dtype=xp.int64)
    if n and len(rows):  # (CuPy's bincount takes the maximum first, which no entries have)
        xp.cumsum(xp.bincount(rows, minlength=n), out=indptr[1:])
    indices = xp.ascontiguousarray(cols.astype(xp.int32))
    if w is None:
        return Adjacency(indptr, indices)
    return Adjacency(indptr, indices, xp.ascontiguousarray(w.astype(xp.float64)))


def work_stats(adj: Adjacency, first: Any, second: Any) -> dict[str, float]:
    """Degree statistics of the graph and work measures of the pairs (host numbers)."""
    xp = adj.xp
    deg = adj.degrees()
    du, dv = deg[first], deg[second]
    n = adj.n_vertices
    return {
        "pairs": int(len(first)),
        "sum_deg": float((du + dv).sum()) if len(first) else 0.0,
        "sum_min": float(xp.minimum(du, dv).sum()) if len(first) else 0.0,
        "degree_mean": float(deg.mean()) if n else 0.0,
        "degree_max": int(deg.max()) if n else 0,
        "degree_gini": gini(xp, deg),
    }


def require_default_pairs(params: Any, backend: str) -> None:
    """Two-hop candidates and top_k run on graphops' own backends (and cuGraph's and networkx's
    peers): any other backend asked for them says so (it would otherwise score the edges)."""
    if not params.default_pairs():
        from graphops.plugin import InputError

        asked = "candidates='two_hop'" if params.candidates == "two_hop" else "top_k"
        raise InputError(f"{params.measure}: {asked} runs on the backends cpu, gpu and hybrid (and on a Dask cluster "
                         f"with cpu or gpu), not on {backend!r}: pass one of those, or score given pairs or edges here")


def result(pairs: Any, coeff: Any) -> dict[str, Any]:
    """The output columns: the pairs (internal indices; mapped back to ids by graphops) and J."""
    return {"first": pairs.first, "second": pairs.second, "jaccard_coeff": coeff}


def pair_costs(adj: Adjacency, first: Any, second: Any) -> Any:
    """Cumulative work d_u + d_v + 1 of host pairs (``len + 1`` entries), to cut chunks by."""
    import numpy as np

    deg = adj.degrees()
    return np.concatenate([[0], np.cumsum(deg[first] + deg[second] + 1)])


# A pair's fixed cost (reading it and its rows' bounds, writing its value) in list entries read.
PAIR_COST = 8.0


def pair_work(xp: Any, du: Any, dv: Any, gpu: bool, weighted: bool = False) -> Any:
    """The kernels' work per pair, in list entries read, to balance the parts of a cluster call:
    the shorter list (length a) against the longer (b) by a merge (a + b) or a binary search per
    entry (a log2 b), whichever is less, as :mod:`.cpu` and the GPU's ``jaccard_thread`` choose;
    on the GPU a pair with a longer short list is scored against its hub's hash set when
    unweighted (about 1.25 a: each entry looked up once, the set's build amortized over the hub's
    pairs; weighted, by binary searches, as above); plus :data:`PAIR_COST`. Cutting R-MAT pairs by
    d_u + d_v instead gave parts of 0.1 to 1.2 times their mean work."""
    a = xp.minimum(du, dv).astype(xp.float64)
    b = xp.maximum(du, dv).astype(xp.float64)
    work = xp.minimum(a + b, a * xp.log2(b + 1.0))
    if gpu and not weighted:
        work = xp.where(a > THREAD_MAX, 1.25 * a, work)
    return work + PAIR_COST


def picture(result: Any, inputs: dict[str, Any], params: Any, path: Any) -> Any:
    """The distribution of the Jaccard coefficients (a pipeline step's ``plot: true``)."""
    from graphops.plugin import histogram

    return histogram(result["jaccard_coeff"].to_numpy(), path, title=f"Jaccard coefficients ({len(result):,} pairs)",
                     xlabel="jaccard_coeff", log_y=True)
