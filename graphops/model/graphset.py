"""GraphSet: many small graphs held as one batched (block-diagonal) CSR with per-graph offsets."""
from __future__ import annotations

import dataclasses
import logging
from typing import Any, Iterator, Sequence

import numpy as np

from graphops.model.csr import CSR, CSRViews, build_csr
from graphops.base.device import Device, device_of, host_pandas, to_device
from graphops.model.frames import column_array, new_frame
from graphops.errors import InputError
from graphops.model.sequences import is_sequence, sequence_array, sequences_of

log = logging.getLogger("graphops")

__all__ = ["GraphSet"]

_PER_NODE = ("node_labels", "node_attrs")
_PER_EDGE = ("src", "dst", "weights", "edge_labels", "edge_attrs")
_PER_GRAPH = ("graph_labels", "graph_attrs")
_TABLES = ("node_features", "edge_features")


def _is_attr_name(name: str) -> bool:
    return name.startswith("attr") and name[4:].isdigit()


def _feature_table(labels: Any, attrs: Any, named: dict[str, Any]) -> dict[str, Any]:
    table = {} if labels is None else {"label": labels}
    if attrs is not None:
        table.update({f"attr{j}": attrs[:, j] for j in range(attrs.shape[1])})
    table.update(named)
    return table


def _feature_columns(frames: list[Any], names: Sequence[str] | None, what: str) -> dict[str, Any]:
    """Named columns of every graph's node or edge frame, concatenated: integers and booleans
    as int64, floats as float64, anything else (strings, categories) as integer codes of its
    sorted distinct values, the same codes in every graph."""
    pd = host_pandas()

    out: dict[str, Any] = {}
    for name in names or ():
        parts = []
        for k, frame in enumerate(frames):
            if frame is not None and len(frame) == 0:
                continue  # no nodes or edges: nothing to contribute (and often no columns)
            if frame is None or name not in frame.columns:
                have = [] if frame is None else [c for c in frame.columns if c not in ("id", "src", "dst")]
                raise InputError(f"graph {k} has no {what} feature {name!r} (its {what} columns: "
                                 f"{', '.join(map(repr, have)) or 'none'})")
            parts.append(frame[name].reset_index(drop=True))
        col = pd.concat(parts, ignore_index=True) if parts else pd.Series([], dtype="int64")
        if col.dtype == object and len(col) and any(is_sequence(v) for v in col):
            out[name] = sequence_array(list(col), name, what)
            continue
        if col.isna().any():
            raise InputError(f"{what} feature {name!r} is missing on some {what}s; give every {what} a value")
        if pd.api.types.is_bool_dtype(col) or pd.api.types.is_integer_dtype(col):
            out[name] = col.to_numpy(dtype=np.int64)
        elif pd.api.types.is_float_dtype(col):
            out[name] = col.to_numpy(dtype=np.float64)
        else:
            _one_kind(col, name, what)
            try:
                codes, _ = pd.factorize(col, sort=True)
            except TypeError as exc:
                raise InputError(f"{what} feature {name!r} mixes types that cannot be ordered ({exc}); use one "
                                 f"type per feature") from None
            out[name] = codes.astype(np.int64)
    return out


def _one_kind(col: Any, name: str, what: str) -> None:
    """A feature of strings (or other labels) must not mix in numbers: '2' and 2 would become
    two unrelated categories, and a number among labels is usually a data error."""
    examples: dict[str, Any] = {}
    for v in col.unique():
        kind = "number" if isinstance(v, (int, float, np.number)) and not isinstance(v, bool) else \
            "string" if isinstance(v, str) else type(v).__name__
        examples.setdefault(kind, v)
    if len(examples) > 1:
        shown = " and ".join(f"{k} ({v!r})" for k, v in examples.items())
        raise InputError(f"{what} feature {name!r} mixes value types: {shown}; use one type per feature "
                         f"(all numbers, or all strings)")


def _ranges(starts: Any, counts: Any, xp: Any) -> Any:
    """Concatenation of ``arange(s, s + c)`` for each (s, c), without a Python loop."""
    total = int(counts.sum())
    offsets = xp.cumsum(counts) - counts
    return xp.repeat(starts - offsets, counts.tolist() if xp is not np else counts) + xp.arange(
        total, dtype=xp.int64)


@dataclasses.dataclass(eq=False)
class GraphSet(CSRViews):
    """Many undirected (or directed) graphs in a few large arrays.

    Nodes of graph ``i`` are ``node_ptr[i]:node_ptr[i+1]`` and its edges
    ``edge_ptr[i]:edge_ptr[i+1]``; ``src``/``dst`` hold global node indices, each
    undirected edge once. Per-node ``node_labels`` (int64) and ``node_attrs``
    (float64, ``n × d``), per-edge ``edge_labels``/``edge_attrs``/``weights`` and
    per-graph ``graph_labels``/``graph_attrs`` are optional, and so are any number of
    further named node and edge feature columns (``node_features``/``edge_features``:
    name -> int64 or float64 array). :meth:`node_feature_table` and
    :meth:`edge_feature_table` give them all by name: ``label``, ``attr0``, ``attr1``, ...
    and the named ones. All arrays live on one device (NumPy or CuPy); :meth:`to` moves
    them as a handful of transfers.
    """

    kind = "graphset"  # what Params.check_declared reads, as of a pipeline's declared graphset

    node_ptr: Any
    edge_ptr: Any
    src: Any
    dst: Any
    directed: bool = False
    weights: Any = None
    node_labels: Any = None
    edge_labels: Any = None
    node_attrs: Any = None
    edge_attrs: Any = None
    graph_labels: Any = None
    graph_attrs: Any = None
    name: str = "graphset"
    node_features: dict[str, Any] = dataclasses.field(default_factory=dict)
    edge_features: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        for what, table, count in (("node", self.node_features, self.n_nodes),
                                   ("edge", self.edge_features, self.n_edges)):
            for key, values in table.items():
                if not isinstance(key, str) or not key:
                    raise InputError(f"{what} feature names must be non-empty strings; got {key!r}")
                if getattr(values, "ndim", 0) not in (1, 2) or len(values) != count:
                    raise InputError(f"{what} feature {key!r} must be one value per {what} ({count}), or one padded "
                                     f"sequence per {what} ({count} rows); got shape {getattr(values, 'shape', None)}")
                if values.ndim == 2:
                    lengths = values[:, 0] if len(values) else values[:0, 0]
                    if values.shape[1] < 1 or bool(((lengths < 0) | (lengths > values.shape[1] - 1)
                                                    | (lengths != lengths.astype(np.int64))).any()):
                        raise InputError(f"{what} sequence feature {key!r}: column 0 must hold each sequence's length "
                                         f"(0 to {values.shape[1] - 1}), the values after it (see sequence_array)")
        clash = [k for k in self.node_features if k == "label" or _is_attr_name(k)]
        clash += [k for k in self.edge_features if k == "label" or _is_attr_name(k)]
        if clash:
            raise InputError(f"feature names {clash} are taken by node_labels/edge_labels ('label') and the "
                             f"attribute matrices ('attr0', ...); pick other names")

    def node_feature_table(self) -> dict[str, Any]:
        """Every per-node feature by name: ``label``, ``attr0``..., then the named ones."""
        return _feature_table(self.node_labels, self.node_attrs, self.node_features)

    def edge_feature_table(self) -> dict[str, Any]:
        """Every per-edge feature by name: ``label``, ``attr0``..., then the named ones."""
        return _feature_table(self.edge_labels, self.edge_attrs, self.edge_features)

    # sizes ---------------------------------------------------------------------------
    @property
    def device(self) -> Device:
        return device_of(self.node_ptr)

    def __len__(self) -> int:
        return int(len(self.node_ptr) - 1)

    @property
    def n_graphs(self) -> int:
        return len(self)

    @property
    def n_nodes(self) -> int:
        return int(self.node_ptr[-1])

    @property
    def n_edges(self) -> int:
        return int(self.edge_ptr[-1])

    @property
    def weighted(self) -> bool:
        return self.weights is not None

    def graph_sizes(self) -> Any:
        """Number of nodes of each graph."""
        return self.node_ptr[1:] - self.node_ptr[:-1]

    def __repr__(self) -> str:
        parts = [f"{len(self)} graphs", f"{self.n_nodes} nodes", f"{self.n_edges} edges"]
        for attr in ("node_labels", "edge_labels", "node_attrs", "graph_labels"):
            if getattr(self, attr) is not None:
                parts.append(attr)
        return f"GraphSet({self.name!r}: {', '.join(parts)}, on {self.device.value})"

    # views ---------------------------------------------------------------------------
    def _build_csr(self) -> CSR:
        csr = build_csr(self.src, self.dst, self.n_nodes, directed=self.directed, weights=self.weights)
        return dataclasses.replace(
            csr, graph_ptr=self.node_ptr, edge_ptr=self.edge_ptr, node_labels=self.node_labels,
            edge_labels=self.edge_labels, node_attrs=self.node_attrs)

    def to(self, device: Device | str) -> "GraphSet":
        """This set with every array on ``device``."""
        device = Device.parse(device)
        if device is self.device:
            return self
        moved = {f.name: to_device(getattr(self, f.name), device)
                 for f in dataclasses.fields(self) if f.name not in ("directed", "name", *_TABLES)}
        for table in _TABLES:
            moved[table] = {k: to_device(v, device) for k, v in getattr(self, table).items()}
        return dataclasses.replace(self, **moved)

    # selection -----------------------------------------------------------------------
    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self[i]

    def __getitem__(self, key: Any) -> Any:
        """``gs[i]`` is a :class:`Graph`; a slice, list or index array gives a GraphSet."""
        if isinstance(key, (int, np.integer)):
            return self._graph(self._check_index(int(key)))
        xp = self.device.xp
        idx = xp.arange(len(self), dtype=xp.int64)[key] if isinstance(key, slice) else xp.asarray(key)
        if idx.dtype == bool:
            idx = xp.flatnonzero(idx)
        return self._subset(idx.astype(xp.int64))

    def _check_index(self, i: int) -> int:
        if not -len(self) <= i < len(self):
            raise IndexError(f"graph index {i} out of range for a GraphSet of {len(self)} graphs")
        return i % len(self)

    def _subset(self, idx: Any) -> "GraphSet":
        xp = self.device.xp
        if len(idx) and (int(idx.min()) < -len(self) or int(idx.max()) >= len(self)):
            raise IndexError(f"graph indices out of range for a GraphSet of {len(self)} graphs")
        idx = idx % max(len(self), 1)
        n_counts = self.node_ptr[idx + 1] - self.node_ptr[idx]
        e_counts = self.edge_ptr[idx + 1] - self.edge_ptr[idx]
        nodes = _ranges(self.node_ptr[idx], n_counts, xp)
        edges = _ranges(self.edge_ptr[idx], e_counts, xp)
        node_ptr = xp.concatenate([xp.zeros(1, xp.int64), xp.cumsum(n_counts)])
        shift = xp.repeat(self.node_ptr[idx] - node_ptr[:-1],
                          e_counts.tolist() if xp is not np else e_counts)
        take = {**{k: nodes for k in _PER_NODE}, **{k: edges for k in _PER_EDGE},
                **{k: idx for k in _PER_GRAPH}}
        arrays = {k: (None if getattr(self, k) is None else getattr(self, k)[rows])
                  for k, rows in take.items()}
        arrays["src"], arrays["dst"] = arrays["src"] - shift, arrays["dst"] - shift
        edge_ptr = xp.concatenate([xp.zeros(1, xp.int64), xp.cumsum(e_counts)])
        return GraphSet(node_ptr=node_ptr, edge_ptr=edge_ptr, directed=self.directed, name=self.name,
                        node_features={k: v[nodes] for k, v in self.node_features.items()},
                        edge_features={k: v[edges] for k, v in self.edge_features.items()}, **arrays)

    def _graph(self, i: int) -> Any:
        from graphops.model.graph import Graph

        n0, n1 = int(self.node_ptr[i]), int(self.node_ptr[i + 1])
        e0, e1 = int(self.edge_ptr[i]), int(self.edge_ptr[i + 1])
        xp = self.device.xp
        edges = {"src": self.src[e0:e1] - n0, "dst": self.dst[e0:e1] - n0}
        edges.update(_named(self.weights, "weight", e0, e1))
        edges.update(_named(self.edge_labels, "label", e0, e1))
        edges.update(_named(self.edge_attrs, "attr", e0, e1))
        edges.update({k: _values(v[e0:e1]) for k, v in self.edge_features.items()})
        nodes = {"id": xp.arange(n1 - n0, dtype=xp.int64)}
        nodes.update(_named(self.node_labels, "label", n0, n1))
        nodes.update(_named(self.node_attrs, "attr", n0, n1))
        nodes.update({k: _values(v[n0:n1]) for k, v in self.node_features.items()})
        return Graph.from_edgelist(new_frame(self.device, edges),
                                   weight="weight" if self.weighted else None,
                                   directed=self.directed, nodes=new_frame(self.device, nodes))

    # construction --------------------------------------------------------------------
    @classmethod
    def from_graphs(cls, graphs: Sequence[Any], node_label: str | None = None,
                    edge_label: str | None = None, node_attrs: Sequence[str] | None = None,
                    name: str = "graphset", node_features: Sequence[str] | None = None,
                    edge_features: Sequence[str] | None = None) -> "GraphSet":
        """Batch :class:`Graph` objects (host copies are taken); label/attribute columns by name,
        and ``node_features``/``edge_features``: further columns kept under their own names.
        Naming none of them takes the columns every node (edge) frame has, as
        :meth:`from_networkx` takes attributes: an integer ``label`` as the label, the rest as
        features (not ``id``, ``src``, ``dst`` or ``weight``)."""
        graphs = [g.to(Device.CPU) for g in graphs]
        if not graphs:
            raise InputError("a GraphSet needs at least one graph; got an empty list")
        if all(v is None for v in (node_label, edge_label, node_attrs, node_features, edge_features)):
            node_label, node_features = _shared_columns([g.nodes for g in graphs], ("id",))
            edge_label, edge_features = _shared_columns([g.edges for g in graphs], ("src", "dst", "weight"))
        directed = {g.directed for g in graphs}
        if len(directed) > 1:
            raise InputError("cannot batch directed and undirected graphs into one GraphSet")
        parts = [_graph_parts(g, k, node_label, edge_label, node_attrs) for k, g in enumerate(graphs)]
        node_ptr = np.concatenate([[0], np.cumsum([g.n_vertices for g in graphs])]).astype(np.int64)
        edge_ptr = np.concatenate([[0], np.cumsum([g.n_edges for g in graphs])]).astype(np.int64)
        arrays = {}
        for key in parts[0]:
            chunks = [p[key] + (node_ptr[k] if key in ("src", "dst") else 0)
                      for k, p in enumerate(parts)] if parts[0][key] is not None else None
            arrays[key] = None if chunks is None else np.concatenate(chunks)
        return cls(node_ptr=node_ptr, edge_ptr=edge_ptr, directed=directed.pop(), name=name,
                   node_features=_feature_columns([g.nodes for g in graphs], node_features, "node"),
                   edge_features=_feature_columns([g.edges for g in graphs], edge_features, "edge"), **arrays)

    @classmethod
    def from_rdkit(cls, mols: Sequence[Any], name: str = "molecules", labels: Any = None) -> "GraphSet":
        """RDKit molecules as a GraphSet: atoms are nodes, bonds undirected edges, with GraphDot's
        feature names (``atomic_number``, ``charge``, ``hcount``, ``hybridization``,
        ``aromatic``, ``chiral``; bonds ``order``, ``aromatic``, ``conjugated``, ``in_ring``,
        ``stereo``); the atomic number is the node label and the bond type the edge label
        (:mod:`graphops.model.molecules`; ``pip install 'graphops[chem]'``).

        :param labels: optional per-molecule labels (``graph_labels``)"""
        from graphops.model.molecules import molecule_arrays

        return cls(**molecule_arrays(mols, name, labels))

    @classmethod
    def from_smiles(cls, strings: Sequence[Any], name: str = "molecules", labels: Any = None,
                    where: Sequence[str] | None = None) -> "GraphSet":
        """SMILES strings as a GraphSet (as :meth:`from_rdkit`). Strings that do not parse, or
        whose molecule RDKit rejects, are all named in one error with RDKit's reason (``where``
        names each row, e.g. ``file.csv, line 7``); none is dropped silently."""
        from graphops.model.molecules import molecule_arrays, parse_smiles

        return cls(**molecule_arrays(parse_smiles(strings, where), name, labels, where))

    @classmethod
    def from_networkx(cls, graphs: Sequence[Any], node_label: str | None = None,
                      edge_label: str | None = None, node_attrs: Sequence[str] | None = None,
                      weight: str | None = None, name: str = "graphset",
                      node_features: Sequence[str] | None = None,
                      edge_features: Sequence[str] | None = None) -> "GraphSet":
        """Batch networkx graphs (any node ids; they are numbered in iteration order); node and
        edge attributes named in ``node_features``/``edge_features`` become feature columns
        under their attribute names.

        Naming nothing (no label, attributes or features) takes every attribute that all nodes
        (all edges) of all graphs have and whose values are numbers, booleans or strings: an
        integer ``label`` as the node (edge) label, the others as features under their names
        (e.g. ``element``, ``charge``; a string ``label`` is a feature too). This is how
        ``graphops.run`` and the kernel estimators read a list of networkx graphs."""
        from graphops.base.device import require
        from graphops.model.graph import Graph

        nx = require("networkx", "GraphSet.from_networkx")
        graphs = list(graphs)
        if all(v is None for v in (node_label, edge_label, node_attrs, node_features, edge_features)):
            node_label, node_features = _shared_attributes([d for G in graphs for _, d in G.nodes(data=True)])
            edge_label, edge_features = _shared_attributes([d for G in graphs for _, _, d in G.edges(data=True)],
                                                           leave=(weight,))
        converted = [Graph.from_networkx(nx.convert_node_labels_to_integers(G), weight=weight)
                     for G in graphs]
        return cls.from_graphs(converted, node_label, edge_label, node_attrs, name, node_features, edge_features)


def _values(column: Any) -> Any:
    """A feature column as a frame takes it: a sequence feature as one tuple per row."""
    return sequences_of(column) if column.ndim == 2 else column


def _shared_columns(frames: list[Any], leave: tuple) -> tuple[str | None, list[str] | None]:
    """``(label, features)`` from the columns all frames have (:func:`_shared_attributes`' rule)."""
    if any(f is None for f in frames):
        return None, None
    shared = set(frames[0].columns).intersection(*[f.columns for f in frames[1:]]) - set(leave)
    names = sorted(c for c in shared if all(_scalar_column(f[c]) for f in frames))
    integer = "label" in names and all(f["label"].dtype.kind in "iub" for f in frames)
    features = [k for k in names if not (k == "label" and integer)]
    return ("label" if integer else None), (features or None)


def _scalar_column(col: Any) -> bool:
    """Numbers, booleans or strings, none missing: a column that can be a feature as it is."""
    if col.dtype.kind in "iub":
        return True
    if col.dtype.kind == "f":
        return not bool(col.isna().any())
    if col.dtype == object and len(col) and all(is_sequence(v) for v in col):
        return True  # a sequence feature
    return host_pandas().api.types.infer_dtype(col, skipna=False) in ("string", "empty")


def _shared_attributes(records: list[dict], leave: tuple = ()) -> tuple[str | None, list[str] | None]:
    """``(label, features)``: the attributes every record has, of scalar values (an integer ``label``
    is the label; everything else a feature, sorted by name)."""
    if not records:
        return None, None
    shared = set(records[0]).intersection(*records[1:]) - set(leave)
    scalar = (int, float, bool, str, np.integer, np.floating, np.bool_)
    names = sorted(k for k in shared if all(isinstance(r[k], scalar) for r in records)
                   or all(is_sequence(r[k]) for r in records))
    integer = "label" in names and all(isinstance(r["label"], (int, np.integer, bool, np.bool_)) for r in records)
    features = [k for k in names if not (k == "label" and integer)]
    return ("label" if integer else None), (features or None)


def _named(arr: Any, name: str, lo: int, hi: int) -> dict[str, Any]:
    if arr is None:
        return {}
    if arr.ndim == 1:
        return {name: arr[lo:hi]}
    return {f"{name}{j}": arr[lo:hi, j] for j in range(arr.shape[1])}


def _column(frame: Any, col: str | None, what: str, k: int, dtype: str) -> Any:
    if col is None:
        return None
    if frame is None or col not in frame.columns:
        raise InputError(f"graph {k} has no {what} column {col!r}")
    return column_array(frame[col], dtype)


def _graph_parts(g: Any, k: int, node_label, edge_label, node_attrs) -> dict[str, Any]:
    attrs = None
    if node_attrs:
        attrs = np.stack([_column(g.nodes, c, "node attribute", k, "float64") for c in node_attrs], 1)
    return {
        "src": g.src_index, "dst": g.dst_index, "weights": g.weights,
        "node_labels": _column(g.nodes, node_label, "node label", k, "int64"),
        "edge_labels": _column(g.edges, edge_label, "edge label", k, "int64"),
        "node_attrs": attrs,
    }
