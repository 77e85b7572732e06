"""Parameters of ``jaccard``, its input requirements, and its work count."""
from __future__ import annotations

from typing import Any

from pydantic import Field

from graphops.plugin import Pairs, Params, device_of

OUTPUTS = ("first", "second", "jaccard_coeff")


class JaccardParams(Params):
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
    * ``cpu_share`` (hybrid backend only): the fraction of pairs, lightest first by
      d_u + d_v, given to the CPU threads; ``None`` lets a degree-statistics heuristic
      plus a short calibration choose (0 = GPU only).
    """

    use_weight: bool = False
    symmetrize: bool = False
    cpu_share: float | None = Field(None, ge=0.0, le=1.0)

    def check_declared(self, graph: Any, pairs: Any = None) -> None:
        if graph.directed and not self.symmetrize:
            raise ValueError("jaccard is defined on undirected graphs and this graph is directed. "
                             "Pass symmetrize=True (YAML: params: {symmetrize: true}) to treat each arc "
                             "as an undirected edge, or build the graph with directed=False")
        if self.use_weight and graph.weighted is False:
            raise ValueError("use_weight=True but the graph has no edge weights; build it with "
                             "weight='<column>' (YAML: weight: <column>) or drop use_weight")

    def check_inputs(self, graph: Any, pairs: Any = None) -> None:
        if not self.use_weight:
            return
        w = graph.weights
        bad = w < 0
        if bool(bad.any()):
            xp = device_of(w).xp
            row = int(xp.flatnonzero(bad)[0])
            raise ValueError(f"use_weight=True needs non-negative weights; edge row {row} has weight "
                             f"{float(w[row])!r} ({int(bad.sum())} negative in all). Fix or drop them")


def cost(inputs: dict[str, Any], params: JaccardParams) -> dict[str, Any]:
    """Least bytes any implementation moves (the pairs in, one float out per pair, the
    adjacency read once), the least lookups (``probes``: each entry of a pair's shorter list
    looked up in the longer one, Σ min(d_u, d_v)) and the counts that rates are quoted in."""
    from .common import adjacency, work_stats

    g = inputs["graph"]
    adj = adjacency(g.csr(), params.symmetrize, params.use_weight)
    given = inputs.get("pairs")
    pairs = (Pairs.edges_of(g) if given is None else given).index(g, g.device)
    stats = work_stats(adj, pairs.first, pairs.second)
    return {"bytes": 24.0 * stats["pairs"] + adj.nbytes(), "flops": 0.0, "probes": stats["sum_min"],
            "counts": {"pairs": stats["pairs"], "Σ min(d_u,d_v)": stats["sum_min"]}}
