"""Parameters of ``appclass``, its input requirements, its memory schedule and its work count."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from graphops.plugin import GeneratorParams, InputError, Params, Seed

OUTPUTS = ("pattern_node", "rank", "data_node", "log_prob")
GiB = float(1 << 30)


class AppclassParams(Params):
    """Application classification: match a small pattern graph to a data graph by log-domain
    max-product belief propagation, exactly as the PNNL and owensgroup reference programs do.

    Both graphs are directed, with node features (every node-frame column but ``id``) and
    edge features (every edge-frame column but ``src``/``dst``) of equal dimensions in the
    two graphs. The result is MU, a DV × PV float64 matrix of log-probabilities: column ``j``
    is the distribution of pattern node ``j`` over the data nodes (its logsumexp is 0). The
    method runs exactly PV rounds and has no parameters; it keeps both quirks of the reference
    programs (both edge messages gather by the data edge's source; CV and CE are normalised
    twice), so its printed output (``%e``) is byte-identical to theirs.

    * ``top_k``: instead of MU, a frame with each pattern node's ``top_k`` best data nodes:
      ``pattern_node, rank, data_node, log_prob`` (rank 1 = most likely; ties by data node).
    * ``schedule``: ``stored`` keeps the normalised edge distances CE (DE × PE doubles);
      ``recompute`` recomputes them from the data edge features in every pass (DE × de
      doubles held, more arithmetic); ``auto`` stores CE when the footprint fits in
      ``memory_limit`` (default: the device's free memory, less 10 %) and recomputes otherwise.
    """

    top_k: int | None = Field(None, ge=1, le=2 ** 31)
    schedule: Literal["auto", "stored", "recompute"] = "auto"
    memory_limit: float | None = Field(None, gt=0, le=2.0 ** 60, description="bytes the call may hold on its device")

    def result_kind(self) -> str:
        return "frame" if self.top_k is not None else "array"

    def check_declared(self, data: Any, pattern: Any) -> None:
        for role, g in (("data", data), ("pattern", pattern)):
            if not g.directed:
                raise ValueError(f"appclass needs directed graphs and the {role} graph is undirected; build "
                                 f"it with directed=True (YAML: directed: true) or read it with "
                                 f"graphops.functions.read_appclass(vertex_file, edge_file)")

    def check_inputs(self, data: Any, pattern: Any) -> None:
        problem = pair_problem(data, pattern)
        if problem is None:
            return
        kind, *v = problem
        if kind == "features":
            what, a, b = v
            raise InputError(f"appclass: the data graph has {a} {what} features and the pattern has {b}; "
                             f"both graphs must use the same {what} feature columns")
        if kind == "no_edges":
            raise InputError("appclass: the pattern graph has no edges; a pattern needs at least one edge")
        pn, dn = v
        raise InputError(f"appclass: the pattern ({pn} nodes) is larger than the data graph ({dn} "
                         f"nodes); did you swap them? The call is run('appclass', data, pattern)")


def pair_problem(data: Any, pattern: Any) -> tuple | None:
    """The first problem between a data graph and a pattern, for the caller to name in its own
    terms (roles in a call, files on the command line): ``("features", "node"|"edge", data dims,
    pattern dims)``, ``("no_edges",)`` or ``("larger", pattern nodes, data nodes)``."""
    from .common import features

    d, p = features(data), features(pattern)
    for what, a, b in (("node", d.node_dim, p.node_dim), ("edge", d.edge_dim, p.edge_dim)):
        if a != b:
            return "features", what, a, b
    if p.m == 0:
        return ("no_edges",)
    if p.n > d.n:
        return "larger", p.n, d.n
    return None


def plan_schedule(data: Any, pattern: Any, params: AppclassParams, device: str,
                  free: float | None = None) -> tuple[str, str]:
    """The schedule to run and why: the one asked for, or for ``auto`` the cheapest that fits."""
    from .common import footprint

    sizes = (data.n, data.m, pattern.n, pattern.m, data.node_dim, data.edge_dim)
    need = {s: footprint(*sizes, s)["peak"] for s in ("stored", "recompute")}
    limit = params.memory_limit or (0.9 * free if free is not None else None)
    where = f"{params.memory_limit / GiB:.2f} GiB memory_limit" if params.memory_limit else \
        f"{(free or 0) / GiB:.2f} GiB free on the {device}"
    if params.schedule != "auto":
        chosen = params.schedule
        why = "requested"
    elif limit is None or need["stored"] <= limit:
        chosen, why = "stored", f"CE fits: {need['stored'] / GiB:.2f} GiB peak"
    else:
        chosen, why = "recompute", f"storing CE needs {need['stored'] / GiB:.2f} GiB > {where}"
    if limit is not None and need[chosen] > limit:
        raise InputError(f"appclass: the {chosen} schedule needs {need[chosen] / GiB:.2f} GiB and the limit is "
                         f"{where} (stored: {need['stored'] / GiB:.2f} GiB, recompute: "
                         f"{need['recompute'] / GiB:.2f} GiB). Use a device with more memory, free some, "
                         f"or raise memory_limit")
    return chosen, why


def cost(inputs: dict[str, Any], params: AppclassParams) -> dict[str, Any]:
    """Least bytes any implementation moves: per round, CE read once (DE × PE doubles) and the
    edge list, plus the node arrays (MU, CV, VF/VR, FMax/RMax) read or written once each; the
    first round also reads the features. Counted on the data and pattern sizes."""
    from .common import features

    d, p = features(inputs["data"]), features(inputs["pattern"])
    rounds = p.n
    per_round = 8.0 * d.m * p.m + 8.0 * d.m + 8.0 * d.n * (3 * p.n + 4 * p.m)
    init = 8.0 * (d.m * d.edge_dim + d.n * d.node_dim + d.m * p.m + 2 * d.n * p.n)
    return {"bytes": init + rounds * per_round, "flops": 3.0 * d.m * p.m * d.edge_dim,
            "counts": {"edge-pattern pairs x rounds": d.m * p.m * rounds}}


class Pattern(GeneratorParams):
    """A pattern sampled from another graph of the file (:func:`graphops_appclass.io.sample_pattern`)."""

    of: str = Field(min_length=1)
    max_nodes: int = Field(9, ge=1, le=2 ** 31)
    seed: Seed = 42
