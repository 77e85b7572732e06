"""Parameters of ``jaccard``, its input requirements, and its work count."""
from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, PrivateAttr, field_validator, model_validator

from graphops.plugin import Pairs, Params, device_of

OUTPUTS = ("first", "second", "jaccard_coeff")


class SimilarityParams(Params):
    """What every measure of the similarity family takes: which pairs, and how neighbourhoods are read.

    * ``candidates``: ``"edges"`` (the default) scores the ``pairs`` input, or every distinct
      edge without it; ``"two_hop"`` scores every pair of distinct vertices that share a
      neighbour (cuGraph's ``jaccard(G)`` without ``vertex_pair``, less its self pairs), both
      orders (u, v) and (v, u), grouped by the first vertex in the graph's vertex order.
    * ``vertices`` (two_hop only): the first vertices of the pairs, by original id (each once).
    * ``top_k``: only the k highest scores, highest first, ties broken by (first, second) in the
      graph's vertex order. With two_hop and no ``vertices`` each unordered pair counts once
      (first before second); the work goes in chunks, so memory holds k rows plus one chunk.
    * ``use_weight``, ``symmetrize``: as for ``jaccard``.
    * ``cpu_share`` (hybrid backend only): the fraction of given pairs or edges, lightest first by
      d_u + d_v, given to the CPU threads; ``None`` lets a degree-statistics heuristic plus a short
      calibration choose (0 = GPU only). Two-hop pairs run on the GPU alone.
    """

    measure: ClassVar[str] = "jaccard"  # the algorithm (measures.MEASURES)

    use_weight: bool = False
    symmetrize: bool = False
    candidates: Literal["edges", "two_hop"] = "edges"
    vertices: tuple[int | str, ...] | None = None
    top_k: int | None = Field(None, ge=1, le=1_000_000_000)
    cpu_share: float | None = Field(None, ge=0.0, le=1.0)
    _vertex_index: Any = PrivateAttr(default=None)  # vertices as internal indices (check_inputs)

    @field_validator("vertices", mode="before")
    @classmethod
    def _vertex_ids(cls, value: Any) -> Any:
        """Vertex ids: all integers (within int64) or all strings, each said once when wrong."""
        import numbers

        if value is None:
            return value
        if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
            raise ValueError(f"vertices= is a list of vertex ids (e.g. [0, 33]); got a {type(value).__name__}")
        ids = list(value)
        for v in ids:
            if isinstance(v, bool) or not isinstance(v, (numbers.Integral, str)):
                raise ValueError(f"vertices= holds {v!r} ({type(v).__name__}); a vertex id is an integer or a string")
            if isinstance(v, numbers.Integral) and not -2**63 <= int(v) < 2**63:
                raise ValueError(f"vertices= holds {int(v)}, beyond the 64-bit signed range of a graph's integer ids")
        if len({isinstance(v, str) for v in ids}) > 1:
            raise ValueError("vertices= mixes integers and strings; a graph's ids are all integers or all strings: "
                             "give them as the graph has them")
        return tuple(v if isinstance(v, str) else int(v) for v in ids)

    @model_validator(mode="after")
    def _pairs_chosen_once(self) -> "SimilarityParams":
        if self.vertices is not None and self.candidates != "two_hop":
            raise ValueError("vertices= picks the first vertices of two-hop pairs: pass candidates='two_hop' "
                             "(YAML: candidates: two_hop) with it, or leave vertices out")
        if self.vertices is not None and len(self.vertices) == 0:
            raise ValueError("vertices= is empty: name at least one vertex, or leave it out for all of them")
        return self

    def check_declared(self, graph: Any, pairs: Any = None) -> None:
        if graph.directed and not self.symmetrize:
            raise ValueError(f"{self._name()} is defined on undirected graphs and this graph is directed. "
                             "Pass symmetrize=True (YAML: params: {symmetrize: true}) to treat each arc "
                             "as an undirected edge, or build the graph with directed=False")
        if self.use_weight and graph.weighted is False:
            raise ValueError("use_weight=True but the graph has no edge weights; build it with "
                             "weight='<column>' (YAML: weight: <column>) or drop use_weight")
        if self.candidates == "two_hop" and pairs is not None:
            raise ValueError("candidates='two_hop' chooses the pairs itself, and a pairs input was given too: "
                             "drop the pairs input, or leave candidates at 'edges' to score the given pairs")
        if getattr(graph, "kind", "graph") != "daskgraph":
            return
        if self.candidates == "two_hop":
            raise ValueError(f"{self._name()} with candidates='two_hop' runs on one device in this version: "
                             "build a Graph from the Dask frame (ddf.compute()) or score given pairs on the cluster")
        if self.top_k is not None:
            raise ValueError(f"{self._name()} on a Dask edge frame scores given pairs or every edge by their shared "
                             "counts, unweighted, without top_k in this version: drop top_k, or build a Graph from "
                             "the frame (ddf.compute()) and run it on the cluster from there")

    def check_inputs(self, graph: Any, pairs: Any = None) -> None:
        if self.vertices is not None:
            ids = _id_column(self.vertices)
            index = Pairs(ids, ids, "vertices").index(graph, graph.device).first
            xp = device_of(index).xp
            self._vertex_index = xp.unique(index)  # each once, in vertex order
        if not self.use_weight:
            return
        w = graph.weights
        bad = w < 0
        xp = device_of(w).xp
        if bool(bad.any()):
            row = int(xp.flatnonzero(bad)[0])
            raise ValueError(f"use_weight=True needs non-negative weights; edge row {row} has weight "
                             f"{float(w[row])!r} ({int(bad.sum())} negative in all). Fix or drop them")
        if len(w):
            self._weights_in_range(xp, w)

    def _weights_in_range(self, xp: Any, w: Any) -> None:
        """Weights whose sums (and, for cosine, products) float64 holds: a weight sum beyond it, or a
        product lost below it, would give NaN or 0 without a word."""
        import math

        import numpy as np

        largest = float(w.max())
        positive = w[w > 0]
        smallest = float(positive.min()) if len(positive) else 0.0
        fix = "rescale them (e.g. divide by the largest), which leaves every coefficient as it is"
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is what is looked for here
            total = 2.0 * float(w.sum())
        if not math.isfinite(total):
            raise ValueError(f"use_weight=True: the weights (up to {largest:.3g}) add up beyond what float64 holds "
                             f"in a vertex's weight sum; {fix}")
        if self.measure == "cosine" and (largest > 1e150 or 0 < smallest < 1e-150):
            raise ValueError(f"use_weight=True: cosine multiplies weights, and weights from {smallest:.3g} to "
                             f"{largest:.3g} leave float64's range when squared; {fix}")

    def _name(self) -> str:
        return self.measure

    def default_pairs(self) -> bool:
        """The call scores the given pairs or the edges (``candidates='edges'`` without top_k): the
        one mode every backend of ``jaccard`` runs."""
        return self.candidates == "edges" and self.top_k is None


class JaccardParams(SimilarityParams):
    """Jaccard similarity ``|N(u) ∩ N(v)| / |N(u) ∪ N(v)|`` of vertex pairs (cuGraph's semantics).

    * Pairs: the ``pairs`` input, a pandas/cuDF frame of vertex pairs by original id
      (columns ``first`` and ``second``, or exactly two columns) or a :class:`Graph` whose
      edges are the pairs (the YAML ``pairs`` input). Results come in the pairs' row order,
      repeats included. Without pairs every distinct edge is scored once, in edge-frame
      order, as stored (``u-v`` and ``v-u`` are one edge of an undirected graph).
    * Neighbourhoods are sets: a vertex is its own neighbour only when a self-loop is
      stored, and repeated edges count once (the first one's weight is used).
      J = 0 when the union is empty.
    * ``use_weight``: Σ_{w∈N(u)∩N(v)} min(w_uw, w_vw) / (Σ_∩ max(w_uw, w_vw) + the weights
      of the neighbours of u and of v they do not share); weights must be ≥ 0.
    * Directed graphs are refused unless ``symmetrize=True`` (each arc becomes an
      undirected edge; when both directions are stored the first one's weight is used).
    * ``candidates``, ``vertices``, ``top_k``, ``cpu_share``: which pairs, and the hybrid
      backend's CPU share (:class:`SimilarityParams`).
    """


def _id_column(ids: tuple) -> Any:
    """Vertex ids as the pairs machinery takes them: an integer array, or a string Series."""
    import numpy as np

    if all(isinstance(v, int) for v in ids):
        return np.asarray(ids, np.int64)
    import pandas as pd

    return pd.Series([str(v) for v in ids])


class SorensenParams(SimilarityParams):
    """Sørensen–Dice coefficient ``2 |N(u) ∩ N(v)| / (d_u + d_v)`` of vertex pairs (cuGraph's
    semantics; weighted: ``2 Σ_∩ min(w_uw, w_vw) / (W_u + W_v)``, W a vertex's weight sum). Pairs as
    for ``jaccard`` (:class:`SimilarityParams`)."""

    measure: ClassVar[str] = "sorensen"


class OverlapParams(SimilarityParams):
    """Overlap coefficient ``|N(u) ∩ N(v)| / min(d_u, d_v)`` of vertex pairs (cuGraph's semantics;
    weighted: ``Σ_∩ min(w_uw, w_vw) / min(W_u, W_v)``). Pairs as for ``jaccard``."""

    measure: ClassVar[str] = "overlap"


class CosineParams(SimilarityParams):
    """Cosine similarity, the Salton index ``|N(u) ∩ N(v)| / √(d_u d_v)`` (weighted:
    ``Σ_∩ w_uw w_vw / (‖w_u‖ ‖w_v‖)``, each norm over the vertex's whole neighbourhood), as
    cuGraph's documentation describes it; cuGraph's code normalizes over the shared neighbours
    only, so there every unweighted pair that shares a neighbour scores 1. Pairs as for ``jaccard``."""

    measure: ClassVar[str] = "cosine"


class _IndexParams(SimilarityParams):
    """networkx's link-prediction indices: sums over the common neighbours w of u and v (u and v
    themselves excluded), d(w) networkx's degree (a self-loop counted twice); no weighted form."""

    @model_validator(mode="after")
    def _no_weights(self) -> "_IndexParams":
        if self.use_weight:
            raise ValueError(f"{self.measure} has no weighted form (networkx's definition counts common "
                             "neighbours by their degree): drop use_weight")
        return self


class AdamicAdarParams(_IndexParams):
    """Adamic–Adar index ``Σ_w 1 / log d(w)`` over the common neighbours w (networkx's
    ``adamic_adar_index``). Pairs as for ``jaccard``."""

    measure: ClassVar[str] = "adamic_adar"


class ResourceAllocationParams(_IndexParams):
    """Resource allocation index ``Σ_w 1 / d(w)`` over the common neighbours w (networkx's
    ``resource_allocation_index``). Pairs as for ``jaccard``."""

    measure: ClassVar[str] = "resource_allocation"


def cost(inputs: dict[str, Any], params: JaccardParams) -> dict[str, Any]:
    """Least bytes any implementation moves (the pairs in, one float out per pair, the
    adjacency read once), the least lookups (``probes``: each entry of a pair's shorter list
    looked up in the longer one, Σ min(d_u, d_v)) and the counts that rates are quoted in."""
    from .common import adjacency, work_stats

    g = inputs["graph"]
    adj = adjacency(g.csr(), params.symmetrize, params.use_weight)
    if params.candidates == "two_hop":  # the wedges u-w-v walked, Σ_w d_w² (each first vertex's rows)
        deg = adj.degrees()
        wedges = float((deg.astype("float64") ** 2).sum())
        return {"bytes": float(adj.nbytes()), "flops": 0.0, "probes": wedges, "counts": {"wedges": wedges}}
    given = inputs.get("pairs")
    pairs = (Pairs.edges_of(g) if given is None else given).index(g, g.device)
    stats = work_stats(adj, pairs.first, pairs.second)
    return {"bytes": 24.0 * stats["pairs"] + adj.nbytes(), "flops": 0.0, "probes": stats["sum_min"],
            "counts": {"pairs": stats["pairs"], "Σ min(d_u,d_v)": stats["sum_min"]}}
