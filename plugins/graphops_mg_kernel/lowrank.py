"""The edge kernel as a short sum of separable terms, and graphs as one adjacency per term.

When the edge features take few distinct values (labels, bond orders, or none at all), the
edge-kernel matrix ``M[u, v] = κ_e(u, v)`` between the values present in the two sets is small
and can be written exactly as ``c + Σ_u [x = u] · R[u, y]`` with ``c`` the kernel's lowest value
(:func:`floor`; none when it is 0 or unbounded) and ``R = M − c`` (for KroneckerDelta(h): ``c = h``
and one term per label). ``c`` comes from the kernel, not from the values a call holds, so a pair's
arithmetic is the same in every call it is part of (a term another graph brings adds exact zeros).
Each term ``t`` turns
the product-graph operator into a product of two small sparse matrices:

    (A × A' ∘ E) vec(P) = Σ_t vec(F_t · P · G_tᵀ),  F_t = A ∘ f_t (graph 1), G_t = A' ∘ g_t (graph 2)

so the GPU mat-vec becomes two sparse-times-dense products per term, rows of the sparse side
shared by a whole warp (no divergence, no per-element kernel evaluation). The constant term
has every edge; the others split graph 1's edges by value, so the work is about twice that of
one term. Edge kernels with many distinct values (e.g. SquareExponential on a continuous
feature) have no short form: the tile solver (tiles.py) handles them.

Graph ``g`` of a side: ``R`` terms, each a CSR over the graph's ``n`` rows: ``rptr`` holds
``R × (n + 1)`` entries relative to the graph's first stored edge, ``col``/``val`` the entries.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from graphops.plugin import BaseKernel

from .common import Prepared, align16, feature_columns, start_probabilities

__all__ = ["Terms", "terms", "floor", "Side", "side", "independent_split", "COLOUR_NODES", "factor_bytes", "column_bytes", "column_pair_bytes",
           "MAX_TERMS", "MAX_VALUES"]

MAX_TERMS = 32     # more terms than this: the tile solver is faster
MAX_VALUES = 4096  # distinct edge-feature rows per set considered at most


@dataclass(frozen=True)
class Terms:
    """``κ_e(x, y) = Σ_t f_t(x) g_t(y)`` over the values present: ``const`` (or None) for the
    first term (f = 1, g = const), then one term per row ``u`` of ``rows`` (f = [x = u],
    g(y) = ``resid[u, value of y]``)."""
    const: float | None
    rows_a: np.ndarray      # distinct feature rows of side A
    rows_b: np.ndarray
    keep: np.ndarray        # the rows of A with a term
    resid: np.ndarray       # (len(keep), len(rows_b))
    pad: int = 0            # empty terms after them (see terms)

    @property
    def count(self) -> int:
        return (self.const is not None) + len(self.keep) + self.pad

    @property
    def signature(self) -> tuple:
        """Hashable: equal for equal terms (a cache key)."""
        return (self.const, self.pad, *(a.tobytes() for a in (self.rows_a, self.rows_b, self.keep, self.resid)))


def _values(prep: Prepared, names: tuple[str, ...]) -> np.ndarray:
    return feature_columns(prep.edge_values, names, prep.n_edges)


def unique_rows(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, axis=0, return_inverse=True)`` of a float matrix: the distinct rows
    in lexicographic order (by value; NaN rows stay distinct) and each row's index among them.
    NumPy's own sorts the rows as structured records, ten times slower than sorting the
    columns as keys; a set's edges (millions of rows) go through this."""
    order = np.lexsort(values.T[::-1])  # the first column the primary key
    ordered = values[order]
    new = np.ones(len(values), bool)
    new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    inverse = np.empty(len(values), np.int64)
    inverse[order] = np.cumsum(new) - 1
    return ordered[new], inverse


def _unique_values(prep: Prepared, names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`unique_rows` of a set's edge values, kept with the set (terms and both sides read it)."""
    return prep.cached(("unique edge values", names), lambda: unique_rows(_values(prep, names)))


def terms(kernel: BaseKernel, a: Prepared, b: Prepared) -> Terms | None:
    """The short form of ``kernel`` over the edge values of ``a`` and ``b``, or None when
    there is none worth using (nor for a kernel of sequence features)."""
    if kernel.sequence_features:
        return None
    names = kernel.features
    ua, ub = _unique_values(a, names)[0], _unique_values(b, names)[0]
    if len(ua) == 0 or len(ub) == 0:
        ua = ua if len(ua) else np.zeros((1, ua.shape[1]))
        ub = ub if len(ub) else np.zeros((1, ub.shape[1]))
    if len(ua) * len(ub) > MAX_VALUES:
        return None
    x = {f: ua[:, k][:, None] for k, f in enumerate(names)}
    y = {f: ub[:, k][None, :] for k, f in enumerate(names)}
    M = np.broadcast_to(np.asarray(kernel(x, y), dtype=np.float64), (len(ua), len(ub)))
    const = floor(kernel)
    R = M - (const or 0.0)
    keep = np.flatnonzero((R != 0).any(axis=1))
    low, high = kernel.minmax
    single = (const is not None) + len(keep) == 1
    # one term exactly when the kernel takes one value (mg_kernel.cu's owner path is for one term):
    # a kernel that can take others gets an empty second term where these values need only one
    out = Terms(const, ua, ub, keep, R[keep], pad=int(single and low != high))
    return out if out.count <= MAX_TERMS else None


def floor(kernel: BaseKernel) -> float | None:
    """The constant term of ``kernel``'s short form: its lowest value (``minmax``), which
    KroneckerDelta, Constant and their products, sums and powers take wherever the features
    differ, so ``R = M − c`` is 0 there; None where that value is 0 or not a finite number
    (SquareExponential, a quasi-kernel), every term then its own. It depends on the kernel
    alone (the most common entry of the values present would change with the other graphs of a
    call, and a pair's rounding with it)."""
    low = kernel.minmax[0]
    return float(low) if low is not None and np.isfinite(low) and low > 0 else None


def factor_bytes(n: np.ndarray, n_terms: int, nnz: np.ndarray, nfn: int, real_size: int) -> np.ndarray:
    """Bytes of a graph's factor staged in shared memory, 16-aligned: ``factor_bytes`` of mg_kernel.cu."""
    return align16(real_size * (nnz + n * (nfn + 2)) + 4 * (n_terms * (n + 1) + nnz))


def column_bytes(n: np.ndarray, n_terms: int, most: np.ndarray, first: bool, real_size: int) -> np.ndarray:
    """Shared bytes of a graph's padded arcs (an int offset and a value: 8 or 16 bytes) in the
    column solver (mg_kernel.cu): as the first graph, of one row (the most arcs of a row over all
    terms, rounded up to 2; a team stages as many rows as it holds); as the second, of its
    ``n_terms`` x (``n`` + 1) columns of the most arcs at one node (a bound of a row's arcs in one
    term), rounded up to 4. ``most`` is :attr:`Side.most`."""
    arc = 8 if real_size == 4 else 16
    if first:
        return arc * ((most[:, 0] + 1) // 2 * 2)
    return align16(arc * n_terms * (n + 1) * ((most[:, 1] + 3) // 4 * 4))


def column_pair_bytes(n1: np.ndarray, n2: np.ndarray, n_terms: int, real_size: int) -> np.ndarray:
    """Shared bytes of a pair's search direction (n1 rows of ``n2 | 1`` entries), of V (n1 rows of
    ``n_terms (n2 + 1) | 1``) and of graph 1's start probabilities (n1) in the column solver, before
    the graphs' :func:`column_bytes`."""
    return (align16(n1 * (n2 | 1) * real_size) + align16(n1 * ((n_terms * (n2 + 1)) | 1) * real_size)
            + align16(n1 * real_size))


def _roots(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each of ``n`` nodes' component's least node, over the arcs ``a`` -> ``b`` (sorted by ``a``,
    stored both ways): minimum-label propagation with pointer jumping."""
    label = np.arange(n)
    if len(a):
        starts = np.flatnonzero(np.r_[True, a[1:] != a[:-1]])
        heads = a[starts]
        while True:  # a label is always a node of the same component, and never above its own
            new = label.copy()
            new[heads] = np.minimum(new[heads], np.minimum.reduceat(label[b], starts))
            new = new[new]
            if np.array_equal(new, label):
                break
            label = new
    return label


# graphs of more nodes than this are not split (:func:`independent_split`): no column team holds them
COLOUR_NODES = 1024


def independent_split(prep: Prepared, most: int = COLOUR_NODES) -> np.ndarray:
    """Each node's colour, 0 or 1, such that no two nodes of colour 1 are joined (nor is one
    joined to itself): the column solver then solves a pair on colour 0 alone, through the Schur
    complement P₀ − N₀₀ − N₀₁ P₁⁻¹ N₁₀ (mg_kernel.cu), and the more nodes colour 1 holds, the
    smaller that system. Per component: its nodes' distances from its least node (breadth-first)
    split it by parity; one parity is colour 1, less the higher node of each arc within it (and
    each node with a self-loop), the parity that keeps more (in a bipartite component: the larger
    side of the 2-colouring, none removed). Then colour 1 is made maximal: a node of colour 0 with
    no neighbour of colour 1 and no self-loop joins it (the least of any joined candidates first).
    Graphs of more than ``most`` nodes stay colour 0."""
    n = prep.n_nodes
    colour = np.zeros(n, np.int8)
    sizes = np.diff(prep.node_ptr)
    small = np.repeat(sizes <= most, sizes)
    base = np.repeat(prep.node_ptr[:-1], np.diff(prep.arc_ptr))
    u, v = base + prep.arc_src, base + prep.arc_dst  # every edge both ways, a self-loop once
    keep = small[u]
    u, v = u[keep], v[keep]
    order = np.argsort(u, kind="stable")
    u, v = u[order], v[order]
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(u, minlength=n), out=ptr[1:])
    root = _roots(n, u, v)  # each node's component's least node
    level = np.where((root == np.arange(n)) & small, 0, -1)
    frontier = np.flatnonzero(level == 0)
    depth = 0
    while len(frontier):  # breadth-first from every root at once, over the frontier's arcs only
        deg = ptr[frontier + 1] - ptr[frontier]
        arcs = np.repeat(ptr[frontier] - np.cumsum(deg) + deg, deg) + np.arange(int(deg.sum()))
        nxt = np.unique(v[arcs])
        nxt = nxt[level[nxt] < 0]
        depth += 1
        level[nxt] = depth
        frontier = nxt
    parity = level & 1
    loop = np.zeros(n, bool)
    loop[u[u == v]] = True
    inside = (parity[u] == parity[v]) & (u <= v)  # each arc within a parity once (a self-loop too)
    drop = np.zeros(n, bool)
    drop[v[inside]] = True  # the higher node, or the node of a self-loop
    gain = np.zeros((n, 2), np.int64)  # by component root: nodes kept of parity 0, of parity 1
    np.add.at(gain, (root[small], parity[small]), ~drop[small])
    one = np.argmax(gain, axis=1)[root] if n else np.zeros(0, np.int64)  # ties: parity 0
    colour[small & (parity == one) & ~drop] = 1
    while True:  # maximal: colour-0 nodes free of colour 1 join it, the least of joined ones first
        taken = np.zeros(n, bool)
        taken[u[colour[v] == 1]] = True
        free = small & (colour == 0) & ~loop & ~taken
        if not free.any():
            break
        beaten = np.zeros(n, bool)
        beaten[u[free[u] & free[v] & (v < u)]] = True
        colour[free & ~beaten] = 1
    return colour


def _most_arcs(prep: Prepared) -> np.ndarray:
    """Each graph's most arcs at one node: a bound of a row's arcs in any term, set by the graph
    alone (the most in one term of the call's short form would change with the other graphs,
    and with it whether a pair takes the column solver's owner path)."""
    graph_of_arc = np.repeat(np.arange(len(prep)), np.diff(prep.arc_ptr))
    per_node = np.bincount(prep.node_ptr[graph_of_arc] + prep.arc_src, minlength=prep.n_nodes)
    return np.maximum.reduceat(per_node, prep.node_ptr[:-1]) if prep.n_nodes else np.zeros(0, np.int64)


@dataclass(frozen=True)
class Side:
    """One side's graphs as per-term CSRs (see the module's docstring), node values by node."""
    n_terms: int
    info: np.ndarray     # (graphs, 4) int32: n, first rptr entry, first stored edge, first node
    rptr: np.ndarray     # int32
    col: np.ndarray      # int32, local
    val: np.ndarray
    nf: np.ndarray
    deg: np.ndarray
    st: np.ndarray
    nnz: np.ndarray      # stored edges per graph
    n: np.ndarray
    most: np.ndarray     # (graphs, 2) int32: the most arcs of a row over all terms, and at one node
    half: np.ndarray     # int32 per graph: with ``colour``, its nodes of colour 0 (numbered first;
    #                      :func:`independent_split`), 0 for a graph not split


def side(prep: Prepared, t: Terms, first: bool, node_features: tuple[str, ...], edge_features: tuple[str, ...],
         p: Any, real: type, node_widths: dict | None = None, colour: bool = False) -> Side:
    """Graphs of ``prep`` as the first (f-side) or second (g-side) factor of ``t``'s terms. With
    ``colour``, each graph's nodes are renumbered colour 0 first (:func:`independent_split`: no
    arc joins two nodes of colour 1; K does not depend on the order) and ``half`` counts them:
    mg_kernel.cu's column solver then solves the pair on colour 0 alone."""
    arc_value = np.zeros(len(prep.arc_src), np.int64)
    if len(prep.arc_src):  # the terms' rows are the set's distinct edge values: the inverse indexes them
        arc_value = _unique_values(prep, edge_features)[1][prep.arc_edge]
    members, term_of, values = [], [], []
    arcs = np.arange(len(prep.arc_src))
    k = 0
    if t.const is not None:
        members.append(arcs)
        term_of.append(np.full(len(arcs), k))
        values.append(prep.arc_w * (1.0 if first else t.const))
        k += 1
    for _ in range(t.pad):  # empty terms: no arc in either graph
        members.append(arcs[:0])
        term_of.append(np.zeros(0, np.int64))
        values.append(np.zeros(0))
        k += 1
    for r, u in enumerate(t.keep):
        if first:
            sel = arc_value == u
            weight = prep.arc_w[sel]
        else:
            factor = t.resid[r][arc_value]
            sel = factor != 0
            weight = prep.arc_w[sel] * factor[sel]
        members.append(arcs[sel])
        term_of.append(np.full(int(sel.sum()), k))
        values.append(weight)
        k += 1
    R = k
    arc = np.concatenate(members) if members else np.zeros(0, np.int64)
    term = np.concatenate(term_of).astype(np.int64) if term_of else np.zeros(0, np.int64)
    val = np.concatenate(values) if values else np.zeros(0)
    sizes = np.diff(prep.node_ptr)
    graphs = len(sizes)
    graph_of_arc = np.repeat(np.arange(graphs), np.diff(prep.arc_ptr))
    g = graph_of_arc[arc]
    src, dst = prep.arc_src[arc], prep.arc_dst[arc]
    half = np.zeros(graphs, np.int32)
    node_order = None  # with colour: new node -> old node
    if colour:  # renumbered before the arcs are sorted, so one sort gives the stored order
        colours = prep.cached(("independent split", COLOUR_NODES), lambda: independent_split(prep))
        graph_of_node = np.repeat(np.arange(graphs), sizes)
        node_order = np.argsort(graph_of_node * 2 + colours, kind="stable")
        position = np.empty_like(node_order)
        position[node_order] = np.arange(len(node_order))
        base = prep.node_ptr[g]
        src, dst = position[base + src] - base, position[base + dst] - base
        half[:] = np.where(sizes <= COLOUR_NODES, np.bincount(graph_of_node[colours == 0], minlength=graphs), 0)
    width = int(sizes.max()) if graphs else 1
    if graphs * R * width * width < 2 ** 62:  # (graph, term, src, dst) as one key: a tenth of lexsort's time
        order = np.argsort(((g * R + term) * width + src) * width + dst, kind="stable")
    else:
        order = np.lexsort((dst, src, term, g))
    g, term, src, dst, val = g[order], term[order], src[order], dst[order], val[order]
    rbase = np.zeros(graphs + 1, np.int64)
    np.cumsum(R * (sizes + 1), out=rbase[1:])
    rowid = rbase[g] + term * (sizes[g] + 1) + src
    counts = np.bincount(rowid, minlength=int(rbase[-1]))
    starts = np.zeros(int(rbase[-1]) + 1, np.int64)
    np.cumsum(counts, out=starts[1:])
    first_nz = starts[rbase[:-1]]
    graph_of_entry = np.repeat(np.arange(graphs), R * (sizes + 1))
    rptr = starts[:-1] - first_nz[graph_of_entry] if len(graph_of_entry) else np.zeros(0, np.int64)
    nnz = np.bincount(g, minlength=graphs)
    info = np.stack([sizes, rbase[:-1], first_nz, prep.node_ptr[:-1]], axis=1).astype(np.int32)
    most = np.zeros((graphs, 2), np.int32)
    if len(arc):  # rows' arcs over all terms (by node), and the graph's most arcs at a node
        per_node = np.bincount(prep.node_ptr[g] + src, minlength=prep.n_nodes)
        most[:, 0] = np.maximum.reduceat(per_node, prep.node_ptr[:-1])
        most[:, 1] = _most_arcs(prep)
    nf = feature_columns(prep.node_values, node_features, prep.n_nodes, node_widths).astype(real)
    deg, st = prep.degree.astype(real), start_probabilities(prep, p).astype(real)
    if node_order is not None:
        nf, deg, st = nf[node_order], deg[node_order], st[node_order]
    return Side(R, np.ascontiguousarray(info), rptr.astype(np.int32), dst.astype(np.int32), val.astype(real),
                np.ascontiguousarray(nf).reshape(-1), deg, st, nnz, sizes, most, half)
