"""What both backends share: the feature arrays of a graph, the canonical edge order, the
memory footprint of each schedule, and the top-k table."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


from graphops.plugin import Device, InputError, column_array, device_of, to_device

__all__ = ["ACGraph", "features", "prepare_cpu", "prepare_gpu", "footprint", "top_k", "SCHEDULES"]

SCHEDULES = ("stored", "recompute")


@dataclass(frozen=True)
class ACGraph:
    """A graph as appclass computes on it: node features ``x`` (n × dn), edges ``src → dst``
    with features ``a`` (m × de), on one device. Features are float64, C-contiguous on the
    CPU (a row per edge) and Fortran-ordered on the GPU (a feature's values are contiguous,
    so ``a.T`` is the transposed layout the kernels read, without a copy). Edge ids are
    int64 on the CPU and int32 in the GPU backend's prepared input.

    Edges are in a canonical order (by src, then dst, then features), so the order of the
    input rows never changes a result, not even in the last bit of a sum.
    """

    x: Any
    src: Any
    dst: Any
    a: Any
    extra: dict = field(default_factory=dict, compare=False)  # per-backend derived arrays

    @property
    def n(self) -> int:
        return int(self.x.shape[0])

    @property
    def m(self) -> int:
        return int(self.src.shape[0])

    @property
    def node_dim(self) -> int:
        return int(self.x.shape[1])

    @property
    def edge_dim(self) -> int:
        return int(self.a.shape[1])


def _matrix(frame: Any, columns: list[str], rows: int, what: str) -> Any:
    xp = device_of(frame).xp
    out = xp.empty((rows, len(columns)), dtype=xp.float64)
    for i, name in enumerate(columns):
        col = frame[name]
        if getattr(col.dtype, "kind", "O") not in "iuf":
            raise InputError(f"appclass: {what} column {name!r} has dtype {col.dtype}; features must be "
                             f"numbers. Drop the column or encode it as numbers")
        out[:, i] = column_array(col, "float64")
    bad = ~xp.isfinite(out)
    if bool(bad.any()):
        row, j = (int(v) for v in xp.argwhere(bad)[0].tolist())
        raise InputError(f"appclass: {what} column {columns[j]!r} holds {float(out[row, j])!r} at row {row} "
                         f"({int(bad.sum())} NaN or infinite values in all); features must be finite")
    return out


def _canonical(src: Any, dst: Any, a: Any) -> Any:
    """Row order by (src, dst), ties (multi-edges) broken by the features, then by input order.
    Only the rows of repeated (src, dst) pairs are sorted by their features (a JohnsHopkins-sized
    graph has ~700 such rows of 186,572: sorting them all by 18 keys took 0.16 s a graph)."""
    xp = device_of(src).xp
    order = xp.lexsort(xp.stack([dst, src]))
    s, d = src[order], dst[order]
    same = (s[1:] == s[:-1]) & (d[1:] == d[:-1])
    if len(s) > 1 and bool(same.any()):
        group = xp.cumsum(xp.concatenate([xp.ones(1, dtype=bool), ~same])) - 1
        rows = xp.flatnonzero(xp.bincount(group)[group] > 1)  # positions in runs of one (src, dst)
        sub = order[rows]
        keys = [a[sub, j] for j in range(a.shape[1] - 1, -1, -1)] + [group[rows]]
        order[rows] = sub[xp.lexsort(xp.stack(keys))]
    return order


def features(graph: Any) -> ACGraph:
    """The graph's feature arrays on its home device, checked and in canonical edge order (cached)."""
    def build() -> ACGraph:
        if graph.nodes is None:
            raise InputError("appclass needs node features: build the graph with nodes=<frame with an "
                             "'id' column and feature columns>, or read it with graphops.functions.read_appclass("
                             "vertex_file, edge_file) (YAML: nodes: <vertex file>)")
        node_cols = [str(c) for c in graph.nodes.columns if str(c) != "id"]
        edge_cols = [str(c) for c in graph.edges.columns if str(c) not in ("src", "dst")]
        for what, cols in (("node", node_cols), ("edge", edge_cols)):
            if not cols:
                raise InputError(f"appclass needs {what} features; the {what} frame has no column besides "
                                 f"the {'id' if what == 'node' else 'src/dst'} columns")
        x = _matrix(graph.nodes, node_cols, graph.n_vertices, "node")
        a = _matrix(graph.edges, edge_cols, graph.n_edges, "edge")
        src, dst = graph.src_index, graph.dst_index
        order = _canonical(src, dst, a)
        xp = device_of(src).xp
        return ACGraph(_layout(x), xp.ascontiguousarray(src[order]), xp.ascontiguousarray(dst[order]),
                       _layout(a[order]))

    return graph.cached(("appclass", "features"), build)


def _layout(a: Any) -> Any:
    """Feature matrices: rows contiguous on the CPU, columns contiguous on the GPU."""
    xp = device_of(a).xp
    return xp.asfortranarray(a) if device_of(a) is Device.GPU else xp.ascontiguousarray(a)


def prepare_cpu(graph: Any) -> ACGraph:
    """The CPU backend's input (NumPy arrays), built once per graph."""
    f = features(graph)
    x, a = (_layout(to_device(v, Device.CPU)) for v in (f.x, f.a))
    return ACGraph(x, to_device(f.src, Device.CPU), to_device(f.dst, Device.CPU), a)


def prepare_gpu(graph: Any) -> ACGraph:
    """The GPU backend's input (CuPy arrays, int32 edge ids), built once per graph."""
    f = features(graph)
    if f.n >= 2 ** 31:
        raise InputError(f"appclass gpu: {f.n} vertices; the GPU backend takes fewer than 2**31")
    x, a = (_layout(to_device(v, Device.GPU)) for v in (f.x, f.a))
    src, dst = (to_device(v, Device.GPU).astype("int32") for v in (f.src, f.dst))
    return ACGraph(x, src, dst, a)


def footprint(dv: int, de: int, pv: int, pe: int, dn: int, ded: int, schedule: str) -> dict[str, int]:
    """Bytes each schedule holds on its device besides the prepared inputs (8 per double).

    ``stored`` keeps the normalised edge distances CE (DE × PE); ``recompute`` keeps nothing
    per edge and recomputes CE from the data edge features in every pass. Both keep nine node
    arrays (CV, MU: DV × PV; VF, VR, FMax, RMax, the raw in-edge maxima, the out-edge minima
    of CE and the out-edge weights: DV × PE), the node distances while they are normalised
    (DV × PV) and up to two int64 edge permutations with their offsets (the CPU's by-destination
    order); neither stores FE/RE (DE × PE each). The prepared inputs (features in the layout
    the kernels read, edge ids, out-edge offsets) are not counted: they are on the device
    before the schedule is chosen.
    """
    nodes = 8 * (3 * dv * pv + 7 * dv * pe)
    edges = 16 * de + 16 * (dv + 1)
    per_schedule = 8 * de * pe if schedule == "stored" else 0
    total = nodes + edges + per_schedule
    return {"total": total, "peak": total, "edge_state": per_schedule, "node_state": nodes}


def top_k(mu: Any, k: int) -> dict[str, Any]:
    """For each pattern node, its ``k`` most likely data nodes (highest log-probability first,
    ties by data node index): columns pattern_node, rank, data_node, log_prob."""
    xp = device_of(mu).xp
    dv, pv = mu.shape
    k = min(int(k), dv)
    order = xp.argsort(-mu.T, axis=1, kind="stable")[:, :k]  # CuPy's sorts are stable too
    data_node = order.reshape(-1).astype(xp.int64)
    pattern_node = xp.repeat(xp.arange(pv, dtype=xp.int64), k)
    return {"pattern_node": pattern_node, "rank": xp.tile(xp.arange(1, k + 1, dtype=xp.int64), pv),
            "data_node": data_node, "log_prob": mu[data_node, pattern_node]}
