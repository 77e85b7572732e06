"""Graphs as the GPU solver reads them: 8×8 adjacency tiles ("octiles") with bitmasks, after
an optional reverse Cuthill–McKee reordering of each graph. Host-side (NumPy and Numba), so
the layout is tested without a GPU.

Graph ``g`` with ``n`` nodes has ``nt = ceil(n / 8)`` tile rows. Only non-empty tiles are kept,
sorted by (row, column); tile ``t`` has ``mask[t]`` (bit ``ii * 8 + jj``: node ``8I + ii`` links
to ``8J + jj``), 64 weights ``w[t]`` (0 where no edge), and ``64 × NFE`` edge-feature values.
``trp`` gives each graph's ``nt + 1`` row starts (relative to its first tile). Nodes are in the
new order: ``perm[v]`` is node ``v``'s new local index.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphops.plugin import InputError, distinct, njit, prange

from .common import Prepared, align16, feature_columns, start_probabilities

__all__ = ["Octiles", "octiles", "rcm", "graph_bytes"]


@dataclass(frozen=True)
class Octiles:
    n: np.ndarray          # nodes per graph (int32)
    nt: np.ndarray         # tile rows per graph
    tiles: np.ndarray      # non-empty tiles per graph
    info: np.ndarray       # (graphs, 4) int32: n, first tile, first trp entry, first node
    trp: np.ndarray
    tcol: np.ndarray
    mask: np.ndarray       # uint64
    w: np.ndarray          # tiles × 64
    ef: np.ndarray         # tiles × NFE × 64
    nf: np.ndarray         # nodes × NFN, new order
    deg: np.ndarray
    st: np.ndarray
    perm: np.ndarray       # new local index of each node (int64)
    bytes: np.ndarray      # shared-memory bytes of each graph staged (see graph_bytes)


def graph_bytes(n: np.ndarray, nt: np.ndarray, tiles: np.ndarray, nfn: int, nfe: int, real_size: int) -> np.ndarray:
    """Bytes of a graph staged in shared memory, 16-aligned: the ``graph_bytes`` of mg_kernel.cu."""
    return align16(8 * tiles + real_size * (64 * tiles * (1 + nfe) + n * (nfn + 2)) + 4 * (nt + 1 + tiles))


@njit(parallel=True)
def _rcm(node_ptr, indptr, indices, degree, perm):
    """Reverse Cuthill–McKee per graph: each component from a pseudo-peripheral node (George &
    Liu: repeat a BFS from the farthest node of least degree while the depth grows), neighbours
    visited by increasing degree; the order is then reversed."""
    for g in prange(len(node_ptr) - 1):
        lo, hi = node_ptr[g], node_ptr[g + 1]
        n = hi - lo
        if n == 0:
            continue
        order = np.empty(n, np.int64)
        level = np.full(n, -1, np.int64)
        seen = np.zeros(n, np.bool_)
        done = 0
        while done < n:
            start = -1
            for v in range(n):  # unvisited node of least degree
                if not seen[v] and (start < 0 or degree[lo + v] < degree[lo + start]):
                    start = v
            # pseudo-peripheral node of start's component
            depth = -1
            while True:
                for v in range(n):
                    level[v] = -1
                level[start] = 0
                queue = np.empty(n, np.int64)
                queue[0] = start
                head, tail = 0, 1
                while head < tail:
                    v = queue[head]
                    head += 1
                    for a in range(indptr[lo + v], indptr[lo + v + 1]):
                        u = indices[a] - lo
                        if level[u] < 0:
                            level[u] = level[v] + 1
                            queue[tail] = u
                            tail += 1
                last = level[queue[tail - 1]]
                if last <= depth:
                    break
                depth = last
                best = queue[tail - 1]
                for t in range(tail):
                    v = queue[t]
                    if level[v] == last and degree[lo + v] < degree[lo + best]:
                        best = v
                start = best
            # Cuthill–McKee from start
            first = done
            order[done] = start
            seen[start] = True
            done += 1
            head = first
            while head < done:
                v = order[head]
                head += 1
                mark = done
                for a in range(indptr[lo + v], indptr[lo + v + 1]):
                    u = indices[a] - lo
                    if not seen[u]:
                        seen[u] = True
                        order[done] = u
                        done += 1
                for s in range(mark + 1, done):  # insertion sort of the new ones by degree
                    u = order[s]
                    t = s
                    while t > mark and degree[lo + order[t - 1]] > degree[lo + u]:
                        order[t] = order[t - 1]
                        t -= 1
                    order[t] = u
        for s in range(n):
            perm[lo + order[n - 1 - s]] = s


def rcm(prep: Prepared) -> np.ndarray:
    """New local index of every node: reverse Cuthill–McKee within each graph."""
    base = np.repeat(prep.node_ptr[:-1], np.diff(prep.arc_ptr))
    src, dst = prep.arc_src + base, prep.arc_dst + base
    order = np.argsort(src, kind="stable")
    indptr = np.zeros(prep.n_nodes + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=prep.n_nodes), out=indptr[1:])
    degree = np.diff(indptr)
    perm = np.empty(prep.n_nodes, np.int64)
    _rcm(prep.node_ptr, indptr, dst[order], degree, perm)
    return perm


def octiles(prep: Prepared, node_features: tuple[str, ...], edge_features: tuple[str, ...], p: object,
            real: type, reorder: str, widths: tuple[dict, dict] = ({}, {})) -> Octiles:
    """The tiles of every graph of ``prep`` (see the module's docstring), values as ``real``."""
    node_ptr, arc_ptr = prep.node_ptr, prep.arc_ptr
    sizes = np.diff(node_ptr)
    graphs = len(sizes)
    if reorder == "rcm":
        perm = rcm(prep)
    else:
        perm = np.arange(prep.n_nodes, dtype=np.int64) - np.repeat(node_ptr[:-1], sizes)
    nt = (sizes + 7) // 8
    graph_of_arc = np.repeat(np.arange(graphs), np.diff(arc_ptr))
    base = node_ptr[graph_of_arc]
    s, d = perm[prep.arc_src + base], perm[prep.arc_dst + base]
    row_ptr = np.zeros(graphs + 1, np.int64)
    np.cumsum(nt, out=row_ptr[1:])
    row = row_ptr[graph_of_arc] + (s >> 3)  # global tile row
    key = row * (1 << 24) + (d >> 3)
    keys, tile_of_arc = np.unique(key, return_inverse=True)
    bit = (s & 7) * 8 + (d & 7)
    slot = tile_of_arc * 64 + bit
    if len(slot) and len(distinct(slot)) != len(slot):
        a = int(np.flatnonzero(np.bincount(slot)[slot] > 1)[0])
        raise InputError(f"mg_kernel: graph {int(graph_of_arc[a])} of {prep.name!r} has parallel edges between its "
                         f"nodes {int(prep.arc_src[a])} and {int(prep.arc_dst[a])}; the gpu backend takes simple "
                         f"graphs: merge them (sum their weights), or use the cpu backend")
    n_tiles = len(keys)
    mask = np.zeros(n_tiles, np.uint64)
    np.bitwise_or.at(mask, tile_of_arc, np.left_shift(np.uint64(1), bit.astype(np.uint64)))
    w = np.zeros(n_tiles * 64, real)
    w[slot] = prep.arc_w
    ecols = feature_columns(prep.edge_values, edge_features, prep.n_edges, widths[1])
    nfe = ecols.shape[1]
    ef = np.zeros((n_tiles, nfe, 64), real)
    if len(slot):
        ef[tile_of_arc[:, None], np.arange(nfe)[None, :], bit[:, None]] = ecols[prep.arc_edge]
    tile_row = keys >> 24
    tcol = (keys & ((1 << 24) - 1)).astype(np.int32)
    row_start = np.zeros(row_ptr[-1] + 1, np.int64)
    np.cumsum(np.bincount(tile_row, minlength=row_ptr[-1]), out=row_start[1:])
    tile_ptr = row_start[row_ptr]  # first tile of each graph
    # trp: nt + 1 entries per graph, relative to the graph's first tile
    trp_ptr = row_ptr + np.arange(graphs + 1)
    trp = np.empty(trp_ptr[-1], np.int64)
    graph_of_entry = np.repeat(np.arange(graphs), nt + 1)
    entry = np.arange(trp_ptr[-1]) - trp_ptr[graph_of_entry]
    trp[:] = row_start[row_ptr[graph_of_entry] + entry] - tile_ptr[graph_of_entry]
    new = perm + np.repeat(node_ptr[:-1], sizes)  # new global position of each node
    ncols = feature_columns(prep.node_values, node_features, prep.n_nodes, widths[0])
    nf = np.empty_like(ncols, dtype=real)
    nf[new] = ncols
    deg = np.empty(prep.n_nodes, real)
    deg[new] = prep.degree
    st = np.empty(prep.n_nodes, real)
    st[new] = start_probabilities(prep, p)
    tiles = np.diff(tile_ptr)
    info = np.stack([sizes, tile_ptr[:-1], trp_ptr[:-1], node_ptr[:-1]], axis=1).astype(np.int32)
    return Octiles(sizes.astype(np.int32), nt.astype(np.int32), tiles.astype(np.int64), np.ascontiguousarray(info),
                   trp.astype(np.int32), tcol, mask, w, ef.reshape(-1), nf.reshape(-1), deg, st, perm,
                   graph_bytes(sizes, nt, tiles, ncols.shape[1], nfe, np.dtype(real).itemsize))
