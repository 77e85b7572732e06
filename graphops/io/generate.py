"""Synthetic graphs for tests and benchmarks: R-MAT (Graph500 style), 2-D grids, uniform random
simple graphs G(n, m) with random node/edge features, and sets of G(n, p) graphs.

Plugins add generators (``graphops_register_generators``): euler's random cycles, symmetric
digraphs and de Bruijn graphs, appclass's patterns. ``graphops.generate.<name>`` finds those too.

R-MAT, G(n, m) and grids give a :class:`Graph` on the host with each edge once, no self-loops and
no repeated edges (an R-MAT graph may be directed: each arc once). The generators are
deterministic: the same arguments give the same graph on every machine, whatever the
thread count.
"""
from __future__ import annotations

import numpy as np

from typing import Any

from graphops.base.device import Device, device_of, host_pandas
from graphops.model.frames import new_frame
from graphops.model.graph import Graph
from graphops.model.ids import distinct
from graphops.base.jit import njit, prange
from graphops.base.work import chunks, holding_interrupts
from graphops.errors import InputError
from graphops.io.generators import Gnm, GnpSet, Grid2D, RMat, gnm_capacity

pd = host_pandas()  # the real pandas, also under cudf.pandas

__all__ = ["rmat", "grid2d", "gnp_set", "gnm", "with_features"]


def __getattr__(name: str) -> Any:
    """A plugin's generator function (``random_cycles``, ``sample_pattern``), or a public name of a
    module that holds one (``dna``), found through the registry."""
    import importlib

    from graphops.host.algorithm import load_target
    from graphops.host.registry import get_registry

    if name.startswith("_"):
        raise AttributeError(name)
    generators = get_registry().generators.values()
    for gen in generators:
        if gen.function == name:
            return load_target(gen.target)
    for module in {g.target.partition(":")[0] for g in generators if not g.target.startswith("graphops.")}:
        found = importlib.import_module(module)
        if name in getattr(found, "__all__", ()):
            return getattr(found, name)
    raise AttributeError(f"module 'graphops.generate' has no attribute {name!r}; generators: "
                         f"{', '.join(sorted(g.function for g in generators))}")

@njit(inline="always")
def _mix(x):
    """splitmix64 finaliser: a well-spread 64-bit hash of ``x``."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(parallel=True)
def _rmat_edges(scale, lo, hi, a, ab, abc, seed, src, dst):
    """Endpoints of R-MAT samples lo..hi-1; edge i's random numbers depend only on (seed, i)."""
    inv = 1.0 / 9007199254740992.0  # 2**-53
    for i in prange(lo, hi):
        state = _mix(np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(i))
        u = 0
        v = 0
        for _ in range(scale):
            state = _mix(state + np.uint64(0x9E3779B97F4A7C15))
            r = float(state >> np.uint64(11)) * inv
            u <<= 1
            v <<= 1
            if r >= abc:
                u |= 1
                v |= 1
            elif r >= ab:
                u |= 1
            elif r >= a:
                v |= 1
        src[i] = u
        dst[i] = v


def _directed_simple(src: np.ndarray, dst: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each arc once, self-loops dropped, sorted by (src, dst)."""
    keep = src != dst
    key = distinct(src[keep] * np.int64(n) + dst[keep])
    return key // n, key % n


def _undirected_simple(src: np.ndarray, dst: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each undirected edge once (as ``lo < hi``), self-loops dropped, sorted by (lo, hi)."""
    return _directed_simple(np.minimum(src, dst), np.maximum(src, dst), n)


def rmat(scale: int, edge_factor: int = 16, a: float = 0.57, b: float = 0.19, c: float = 0.19,
         seed: int = 42, scramble: bool = True, directed: bool = False, node_features: int = 0,
         edge_features: int = 0, device: str = "cpu") -> Graph:
    """An R-MAT graph on ``2**scale`` vertices from ``edge_factor * 2**scale`` samples.

    Vertex ids are scrambled by a seeded permutation (as Graph500 does) unless
    ``scramble=False``; self-loops and repeated samples are dropped, so the graph has
    somewhat fewer than ``edge_factor * 2**scale`` edges (arcs when ``directed``). Vertices
    that no edge touches are not part of the graph, unless features are asked for (see
    :func:`with_features`): then all ``2**scale`` vertices are.

    ``device="gpu"`` draws the samples on the GPU with ``pylibraft.random.rmat`` and gives a
    cuDF-backed graph without a round trip through host memory (the way to make graphs of
    hundreds of millions of edges): the same distribution and the same post-processing, but
    RAFT's random stream, so not the same edges as ``device="cpu"`` for a seed.
    """
    p = RMat.check("rmat", scale=scale, edge_factor=edge_factor, a=a, b=b, c=c, seed=seed, scramble=scramble,
                   directed=directed, node_features=node_features, edge_features=edge_features)
    scale, edge_factor, a, b, c, seed, scramble, directed, node_features, edge_features = (
        p.scale, p.edge_factor, p.a, p.b, p.c, p.seed, p.scramble, p.directed, p.node_features, p.edge_features)
    d = max(1.0 - a - b - c, 0.0)
    n = 1 << scale
    if device == "gpu":
        return _rmat_gpu(scale, edge_factor * n, (a, b, c, d), seed, scramble, directed, node_features,
                         edge_features)
    if device != "cpu":
        raise InputError(f"rmat: device must be 'cpu' or 'gpu'; got {device!r}")
    src, dst = np.empty(edge_factor * n, np.int64), np.empty(edge_factor * n, np.int64)
    with holding_interrupts():  # Ctrl-C between chunks, never inside Numba's compiler
        for lo, hi in chunks(len(src), what=f"R-MAT scale {scale}", first=1 << 20):
            _rmat_edges(scale, lo, hi, a, a + b, a + b + c, seed, src, dst)
    if scramble:
        perm = np.random.default_rng(seed).permutation(n).astype(np.int64)
        src, dst = perm[src], perm[dst]
    lo, hi = (_directed_simple if directed else _undirected_simple)(src, dst, n)
    if node_features or edge_features:
        return with_features(lo, hi, n, directed, node_features, edge_features, seed)
    return Graph.from_edgelist(pd.DataFrame({"src": lo, "dst": hi}), directed=directed)


def _rmat_gpu(scale: int, samples: int, abcd: tuple[float, ...], seed: int, scramble: bool, directed: bool,
              node_features: int, edge_features: int) -> Graph:
    """:func:`rmat` on the GPU: pylibraft draws the samples; CuPy scrambles, dedupes and sorts."""
    try:
        import cupy as cp
        from pylibraft.random import rmat as raft_rmat
    except ImportError as exc:
        raise InputError("rmat(device='gpu') draws its samples with pylibraft, which is not installed here: "
                         "pip install 'graphops[gpu]', or generate on the CPU (device='cpu')") from exc
    n = 1 << scale
    theta = cp.tile(cp.asarray(abcd, dtype=cp.float64), scale)  # (a, b, c, d) at every level
    pairs = cp.empty((samples, 2), dtype=cp.int64)
    raft_rmat(pairs, theta, scale, scale, seed=seed)
    src, dst = pairs[:, 0], pairs[:, 1]
    if scramble:
        perm = cp.random.RandomState(seed).permutation(n).astype(cp.int64)
        src, dst = perm[src], perm[dst]
    if not directed:
        src, dst = cp.minimum(src, dst), cp.maximum(src, dst)
    keep = src != dst
    key = distinct(src[keep] * n + dst[keep])
    del pairs, src, dst, keep
    lo, hi = key // n, key % n
    if node_features or edge_features:
        return with_features(lo, hi, n, directed, node_features, edge_features, seed)
    return Graph.from_edgelist(new_frame(Device.GPU, {"src": lo, "dst": hi}), directed=directed)


def gnm(n: int, m: int, directed: bool = True, seed: int = 42, node_features: int = 0,
        edge_features: int = 0) -> Graph:
    """A simple graph drawn uniformly among those with ``n`` vertices ``0..n-1`` (all in the graph)
    and ``m`` edges (arcs when directed): no self-loops, no repeated edges, as networkx's
    ``gnm_random_graph``; features as in :func:`with_features`. ``m`` beyond the ``n(n-1)``
    arcs (``n(n-1)/2`` edges undirected) that such a graph can hold is refused."""
    p = Gnm.check("gnm", n=n, m=m, directed=directed, seed=seed, node_features=node_features,
                  edge_features=edge_features)
    n, m, directed, seed, node_features, edge_features = p.n, p.m, p.directed, p.seed, p.node_features, p.edge_features
    most = gnm_capacity(n, directed)
    keys = np.random.default_rng(seed).choice(most, size=m, replace=False) if m else np.empty(0, np.int64)
    src, dst = _arc(keys.astype(np.int64), n) if directed else _pair(keys.astype(np.int64), n)
    return with_features(src, dst, n, directed, node_features, edge_features, seed)


def _arc(key: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Arc number ``key`` of the ``n(n-1)`` arcs without self-loops, row by row."""
    u, r = np.divmod(key, max(n - 1, 1))
    return u, r + (r >= u)


def _pair(key: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Pair number ``key`` of the ``n(n-1)/2`` pairs ``u < v``, row by row (row ``u`` starts at
    ``u(2n-u-1)/2``: a float estimate of the row, corrected in integers)."""
    start = lambda u: u * (2 * n - u - 1) // 2  # noqa: E731
    u = np.floor((2 * n - 1 - np.sqrt(np.maximum((2.0 * n - 1) ** 2 - 8.0 * key, 0.0))) / 2)
    u = np.clip(u.astype(np.int64), 0, max(n - 2, 0))
    for _ in range(2):
        u = np.where(start(u) > key, u - 1, u)
        u = np.where(start(u + 1) <= key, u + 1, u)
    return u, key - start(u) + u + 1


def _features(draw: Any, rows: int, dim: int) -> dict[str, Any]:
    values = draw((dim, rows)) * 10.0
    return {f"f{i}": values[i] for i in range(dim)}


def with_features(src: Any, dst: Any, n: int, directed: bool, node_features: int,
                  edge_features: int, seed: int = 42) -> Graph:
    """A graph on vertices ``0..n-1`` whose node frame has ``node_features`` and whose edge
    frame has ``edge_features`` columns ``f0, f1, ...`` of uniform numbers in [0, 10).

    NumPy ``src``/``dst`` give a pandas graph; CuPy ones a cuDF graph with the features drawn
    on the GPU (CuPy's random stream)."""
    device = device_of(src)
    if device is Device.CPU:
        draw = np.random.default_rng([seed, 1]).random
    else:
        draw = device.xp.random.RandomState(seed + 1).random_sample
    nodes = new_frame(device, {"id": device.xp.arange(n, dtype=np.int64), **_features(draw, n, node_features)})
    edges = new_frame(device, {"src": src, "dst": dst, **_features(draw, len(src), edge_features)})
    return Graph.from_edgelist(edges, directed=directed, nodes=nodes)


def grid2d(rows: int, cols: int) -> Graph:
    """The ``rows × cols`` 4-neighbour grid, vertex ``r * cols + c``; every vertex has degree ≤ 4."""
    p = Grid2D.check("grid2d", rows=rows, cols=cols)
    rows, cols = p.rows, p.cols
    v = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    right = np.stack([v[:, :-1].ravel(), v[:, 1:].ravel()])
    down = np.stack([v[:-1, :].ravel(), v[1:, :].ravel()])
    src, dst = np.concatenate([right, down], axis=1)
    order = np.lexsort((dst, src))
    nodes = pd.DataFrame({"id": v.ravel()})
    return Graph.from_edgelist(pd.DataFrame({"src": src[order], "dst": dst[order]}), nodes=nodes)


def gnp_set(sizes: dict[int, int], p: float = 0.5, n_labels: int = 4, n_attrs: int = 2, seed: int = 42):
    """A GraphSet of Erdős–Rényi G(n, p) graphs with node labels in ``0..n_labels-1`` and
    ``n_attrs`` uniform node attributes in [0, 1), from one seeded stream (reproducible).

    :param sizes: nodes per graph -> how many such graphs (in that order), e.g. ``{10: 180, 50: 76}``
    """
    from graphops.model.graphset import GraphSet

    asked = GnpSet.check("gnp_set", sizes=sizes, p=p, n_labels=n_labels, n_attrs=n_attrs, seed=seed)
    sizes, p, n_labels, n_attrs, seed = asked.sizes, asked.p, asked.n_labels, asked.n_attrs, asked.seed
    rng = np.random.default_rng(seed)
    counts = [int(n) for n, k in sizes.items() for _ in range(int(k))]
    src, dst, labels, attrs, first = [], [], [], [], 0
    for n in counts:
        u, v = np.nonzero(np.triu(rng.random((n, n)) < p, 1))
        src.append(u + first)
        dst.append(v + first)
        labels.append(rng.integers(0, n_labels, n))
        attrs.append(rng.random((n, n_attrs)))
        first += n
    node_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    edge_ptr = np.concatenate([[0], np.cumsum([len(s) for s in src])]).astype(np.int64)
    return GraphSet(node_ptr=node_ptr, edge_ptr=edge_ptr, src=np.concatenate(src).astype(np.int64),
                    dst=np.concatenate(dst).astype(np.int64), node_labels=np.concatenate(labels).astype(np.int64),
                    node_attrs=np.concatenate(attrs) if n_attrs else None,
                    graph_labels=np.zeros(len(counts), np.int64), name="gnp_set")
