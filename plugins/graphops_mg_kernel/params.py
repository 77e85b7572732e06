"""Parameters of ``mg_kernel``: base kernels, stopping probability, start probabilities, solver."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, PrivateAttr, field_validator, model_validator

from graphops.plugin import (BaseKernel, DotProduct, KroneckerDelta, Params, StartProbability, did_you_mean, from_spec,
                             ordered_bounds, start_from_spec, start_values)


class MGKernelParams(Params):
    """The marginalized graph kernel (Kashima et al.) in GraphDot's convention.

    ``K(G, G') = Σ p_i p'_i' x_ii'`` where ``(D_× / V_× − A_× ⊙ E_×) x = D_× 1``: ``V_×`` the
    node kernel on every node pair, ``E_×`` the edge kernel on every pair of edges, ``A_×`` the
    product of the weighted adjacencies, ``D_×`` the product of the degrees divided by
    ``1 − q`` (a node without edges counts degree 1). Solved per graph pair by conjugate
    gradients preconditioned with ``D_× / V_×``; the product matrix is never stored.

    :param node_kernel: a base kernel on node features (values in (0, 1]); a kernel object
        or its YAML form, e.g. ``{kronecker_delta: {h: 0.5, on: label}}``
    :param edge_kernel: a base kernel on edge features (values in [0, 1])
    :param q: stopping probability, in (0, 1)
    :param p: start probabilities: ``"uniform"`` (1 per node), a positive number for every
        node, the name of a node feature, or a start probability of node features with
        hyperparameters (:mod:`graphops.kernels.probability`: ``Uniform(p)``, ``Assign(on, values)``,
        their products and sums; YAML ``{uniform: {p: 1.0}}``), whose derivatives come last in
        ``eval_gradient``
    :param normalize: ``K[a, b] / sqrt(K[a, a] K[b, b])``
    :param lmin: 1 leaves out walks of length 0 (the node-kernel term)
    :param tol: stop when ``||r|| <= tol * ||D_× 1||`` (relative residual, 1e-16 to 1; default by precision)
    :param max_iter: most CG iterations per pair (default: the number of unknowns + 100); a
        pair that has not converged by then is an error naming it
    :param nodewise: return the node-wise similarities ``p_i p'_k (x_ik − [lmin] V_ik)`` (whose
        sum over a pair's nodes is K) as one matrix of all nodes of ``graphs`` by all nodes of
        ``other`` (or of ``graphs``), in node order, instead of K
    :param diagonal: return only ``K[a, a]`` for every graph of ``graphs`` (a vector)
    :param eval_gradient: return ``(K, dK)`` (with ``nodewise``: the node-wise matrix and its
        derivatives), ``dK[a, b, h]`` the derivative of ``K[a, b]`` by the
        logarithm of hyperparameter ``h``: ``q`` (unless ``q_bounds`` is ``fixed``), then the node
        kernel's and the edge kernel's hyperparameters that are not fixed (scikit-learn's order
        and log scale)
    :param q_bounds: bounds of ``q`` as a hyperparameter (``[low, high]``), or ``fixed``
    :param progress: show a progress bar (``None``: for jobs lasting over a second on a terminal)
    :param precision: arithmetic of the gpu solver: ``float32`` (its default: the mat-vec in
        float32, dot products and K summed in float64; the tile solvers keep the solution in
        float64, the factored ones in float32, and the column solver sums each thread's share of
        a dot product, at most eight terms, in float32) or ``float64``. The cpu backend
        always computes in float64. The default ``tol`` is 1e-10 in float64 and 1e-6 in float32
    :param matvec: gpu: how the product-graph mat-vec is formed. ``factored``: the edge kernel
        written as a few separable terms over the distinct edge values (labels), each term two
        small sparse-times-dense products; ``tiles``: 8×8 adjacency tiles with the edge kernel
        evaluated for every pair of edges (any edge kernel); ``auto``: factored when the edge
        values allow it with at most eight terms (seven labels). Values agree to rounding
    :param reorder: gpu: renumber each graph's nodes by reverse Cuthill–McKee (``rcm``) so its
        edges fill fewer 8×8 tiles, or keep the order (``none``); values do not change
    :param primitive: gpu: visit a tile pair's non-zeros through its bitmasks (``sparse``) or
        all 64 × 64 entries (``dense``, for benchmarks and dense graphs)
    :param teams: gpu: size the team solving a pair to the pair (``auto``: a warp for small
        pairs, up to a block of 1024 threads) or use at least a block of 256 threads (``block``)
    :param staging: gpu: copy each pair's graphs and search direction into shared memory
        (``shared``; pairs too large for it use global memory) or always use global memory
    :param tile: gpu: most rows of the Gram matrix per device tile (device memory holds two)
    """

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    node_kernel: BaseKernel = KroneckerDelta(0.5, on="label")
    edge_kernel: BaseKernel = KroneckerDelta(0.5, on="label")
    q: float = Field(0.05, gt=0, lt=1)
    p: Any = "uniform"
    normalize: bool = False
    lmin: Literal[0, 1] = 0
    tol: float | None = Field(None, ge=1e-16, lt=1)  # below float64's precision no residual gets there
    max_iter: int | None = Field(None, ge=1, le=2 ** 31)
    nodewise: bool = False
    diagonal: bool = False
    eval_gradient: bool = False
    q_bounds: tuple[float, float] | Literal["fixed"] = (1e-4, 1.0 - 1e-4)
    progress: bool | None = None
    precision: Literal["float32", "float64"] | None = None
    matvec: Literal["auto", "factored", "tiles"] = "auto"
    reorder: Literal["rcm", "none"] = "rcm"
    primitive: Literal["sparse", "dense"] = "sparse"
    teams: Literal["auto", "block"] = "auto"
    staging: Literal["shared", "global"] = "shared"
    tile: int = Field(1024, ge=1, le=2 ** 31)
    _layout: Any = PrivateAttr(default=None)  # sequence feature widths of a run (common.with_layout)

    @field_validator("node_kernel", "edge_kernel", mode="before")
    @classmethod
    def _kernel(cls, value: Any, info: Any) -> BaseKernel:
        kernel = from_spec(value, info.field_name)
        if info.field_name == "edge_kernel":
            kernel.check("edge_kernel")
        return kernel

    @field_validator("q_bounds")
    @classmethod
    def _q_bounds(cls, value: Any, info: Any) -> Any:
        check_q_bounds(info.data.get("q"), value)
        return value

    @field_validator("p", mode="before")
    @classmethod
    def _start(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError(f"p must be 'uniform', a positive number, a node feature name or a start probability "
                             f"(e.g. {{uniform: {{p: 1.0}}}}); got {value!r}")
        if isinstance(value, (int, float)):
            if not value > 0:
                raise ValueError(f"p={value!r}: a start probability must be positive")
            return float(value)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, (StartProbability, dict)):
            return start_from_spec(value)
        raise ValueError(f"p must be 'uniform', a positive number, a node feature name or a start probability "
                         f"(e.g. {{uniform: {{p: 1.0}}}}); got {value!r}")

    def several_arrays(self) -> bool:
        return self.eval_gradient

    def tolerance(self, real: str = "float64") -> float:
        """``tol``, or its default for the arithmetic ``real`` (1e-10 in float64, 1e-6 in float32)."""
        return self.tol if self.tol is not None else (1e-6 if real == "float32" else 1e-10)

    def hyperparameters(self) -> list[tuple[str, float, tuple[float, float] | str]]:
        """(name, value, bounds or 'fixed') of q, then the node and the edge kernel's
        hyperparameters, in the order of the solvers' raw derivatives."""
        out = [("q", self.q, self.q_bounds)]
        for role in ("node_kernel", "edge_kernel"):
            kernel = getattr(self, role)
            out += [(f"{role}.{name}", h.value, "fixed" if h.fixed else h.bounds)
                    for name, h in zip(kernel.hyperparameter_names, kernel.hyperparameters)]
        return out + [(f"p.{name}", h.value, "fixed" if h.fixed else h.bounds)
                      for name, h in zip(self.start.hyperparameter_names, self.start.hyperparameters)]

    @property
    def start(self) -> Any:
        """``p`` as a StartProbability when it is one (its hyperparameters come last), else a
        stand-in without hyperparameters."""
        return self.p if isinstance(self.p, StartProbability) else _NO_START

    def free(self) -> tuple[list[int], list[float]]:
        """Positions (among :meth:`hyperparameters`) and values of the free hyperparameters."""
        pairs = [(k, v) for k, (_, v, b) in enumerate(self.hyperparameters()) if b != "fixed"]
        return [k for k, _ in pairs], [v for _, v in pairs]

    @model_validator(mode="after")
    def _modes(self) -> "MGKernelParams":
        chosen = [m for m in ("nodewise", "diagonal", "eval_gradient") if getattr(self, m)]
        if len(chosen) > 1 and chosen != ["nodewise", "eval_gradient"]:
            raise ValueError(f"{' and '.join(chosen)} cannot be asked together; ask for one of them per call (or "
                             f"nodewise with eval_gradient: the node-wise values and their derivatives)")
        if self.nodewise and self.eval_gradient and self.normalize:
            raise ValueError("nodewise with eval_gradient gives the node-wise values as they are; normalize=True is "
                             "not offered with it (normalize the graph-level K instead, or drop eval_gradient)")
        return self

    @model_validator(mode="after")
    def _node_kernel_range(self) -> "MGKernelParams":
        self.node_kernel.check("node_kernel", limit=1.0 / (1.0 - self.q) ** 2)
        return self

    @model_validator(mode="after")
    def _features_named(self) -> "MGKernelParams":
        for role in ("node_kernel", "edge_kernel"):
            kernel = getattr(self, role)
            unnamed = kernel.unnamed()
            if unnamed:
                raise ValueError(f"{role}: {unnamed!r} names no feature; write e.g. "
                                 f"{type(unnamed).__name__}(..., on='label') or TensorProduct(label=...)")
        return self

    def check_inputs(self, graphs: Any, other: Any = None) -> None:
        if self.diagonal and other is not None:
            raise ValueError("mg_kernel: diagonal=True gives K[a, a] of one GraphSet; pass only 'graphs'")
        sets = {"graphs": graphs} if other is None else {"graphs": graphs, "other": other}
        for slot, gs in sets.items():
            if len(gs) == 0:
                raise ValueError(f"mg_kernel: input {slot!r} is an empty GraphSet; it needs at least one graph")
            xp = gs.device.xp
            empty = xp.diff(gs.node_ptr) == 0
            if bool(empty.any()):
                raise ValueError(f"mg_kernel: graph {int(xp.argmax(empty))} of GraphSet {gs.name!r} has no nodes "
                                 f"({int(empty.sum())} such graph(s)); a walk cannot start there: drop them, e.g. "
                                 f"gs[[i for i in range(len(gs)) if gs.node_ptr[i + 1] > gs.node_ptr[i]]]")
            if gs.directed:
                raise ValueError(f"mg_kernel: GraphSet {gs.name!r} is directed; the marginalized kernel here takes "
                                 f"undirected graphs")
            for role, table in (("node_kernel", gs.node_feature_table()), ("edge_kernel", gs.edge_feature_table())):
                missing = [f for f in getattr(self, role).features if f not in table]
                if missing and (role == "node_kernel" or gs.n_edges):
                    what = "node" if role == "node_kernel" else "edge"
                    raise ValueError(f"mg_kernel: {role} reads the {what} feature(s) {', '.join(map(repr, missing))}, "
                                     f"which GraphSet {gs.name!r} lacks (its {what} features: "
                                     f"{', '.join(map(repr, table)) or 'none'}).{did_you_mean(missing[0], table)}")
            self._check_sequences(gs)
            if isinstance(self.p, StartProbability):
                table = gs.to("cpu").node_feature_table()
                try:
                    values = start_values(self.p, table, gs.n_nodes)
                except ValueError as exc:
                    raise ValueError(f"mg_kernel: p: {exc}") from None
                import numpy as np  # only when a start probability is checked

                if not bool(np.isfinite(values).all()) or not bool((values > 0).all()):
                    raise ValueError(f"mg_kernel: p={self.p!r} gives start probabilities that are not all > 0 on "
                                     f"GraphSet {gs.name!r} (smallest {float(np.min(values)) if len(values) else 0:g})")
            if isinstance(self.p, str) and self.p != "uniform":
                table = gs.node_feature_table()
                if self.p not in table:
                    raise ValueError(f"mg_kernel: p={self.p!r} is not 'uniform' and names no node feature of GraphSet "
                                     f"{gs.name!r} (its node features: {', '.join(map(repr, table)) or 'none'})."
                                     f"{did_you_mean(self.p, ['uniform', *table])}")
                values = table[self.p]
                if not bool((values > 0).all()):
                    raise ValueError(f"mg_kernel: p={self.p!r}: start probabilities must be positive")
            if gs.weights is not None and not bool(gs.device.xp.isfinite(gs.weights).all()):
                raise ValueError(f"mg_kernel: GraphSet {gs.name!r} has edge weights that are not finite numbers")
        self._check_ranges(list(sets.values()))

    def _check_ranges(self, sets: list) -> None:
        """A node or edge kernel with a quasi-kernel inside (``Product()``: x * y) has the range its
        scalar features' values give it here, over both sets (BaseKernel.check with ``ranges``)."""
        import numpy as np  # only when a kernel reads its range off the data

        for role, table in (("node_kernel", "node_feature_table"), ("edge_kernel", "edge_feature_table")):
            kernel = getattr(self, role)
            if not kernel.quasi:  # before any table is made: a set on the GPU would be copied for nothing
                continue
            tables = [getattr(gs.to("cpu"), table)() for gs in sets if role == "node_kernel" or gs.n_edges]
            if not tables:
                continue
            ranges = {}
            for f in dict.fromkeys(_quasi_features(kernel)):
                values = np.concatenate([np.asarray(t[f], np.float64).reshape(-1) for t in tables if f in t])
                if len(values):
                    ranges[f] = (float(values.min()), float(values.max()))
            try:
                kernel.check(role, 1.0 / (1.0 - self.q) ** 2, ranges)
            except ValueError as exc:
                raise ValueError(f"mg_kernel: {role}: {exc}") from None

    def _check_sequences(self, gs: Any) -> None:
        """A feature read as a sequence (Convolution, DotProduct) must be one, and one read as a
        number must not; a node kernel's sequences must not be empty (its value must stay > 0);
        DotProduct's vectors share one length and are >= 0."""
        for role, table in (("node_kernel", gs.node_feature_table()), ("edge_kernel", gs.edge_feature_table())):
            kernel = getattr(self, role)
            seq = set(kernel.sequence_features)
            what = "node" if role == "node_kernel" else "edge"
            for f in kernel.features:
                if f not in table:
                    continue
                values = table[f]
                if (values.ndim == 2) != (f in seq):
                    how = ("a sequence kernel (Convolution, DotProduct) reads it, but it holds one number per "
                           f"{what}" if f in seq else
                           "it holds a sequence per " + what + ", which only Convolution or DotProduct can read "
                           "(e.g. TensorProduct(" + f + "=Convolution(KroneckerDelta(0.5))))")
                    raise ValueError(f"mg_kernel: {role}: {what} feature {f!r} of GraphSet {gs.name!r}: {how}")
                if f not in seq or not len(values):
                    continue
                lengths = values[:, 0]
                if role == "node_kernel" and bool((lengths == 0).any()):
                    raise ValueError(f"mg_kernel: node_kernel: node feature {f!r} of GraphSet {gs.name!r} has empty "
                                     f"sequences ({int((lengths == 0).sum())} nodes); a Convolution of them is 0, and "
                                     f"a node kernel must stay > 0: give every node at least one value")
            for name, k in _dot_products(kernel):
                values = table.get(name)
                if values is None or values.ndim != 2 or not len(values):
                    continue
                lengths = values[:, 0]
                if bool((lengths != lengths[0]).any()) or bool((values[:, 1:] < 0).any()):
                    raise ValueError(f"mg_kernel: {role}: {k!r} takes vectors of one length with values >= 0; "
                                     f"{what} feature {name!r} of GraphSet {gs.name!r} has lengths "
                                     f"{sorted(set(lengths.tolist()))[:5]} and smallest value {float(values[:, 1:].min())}")


class _NoStart:
    hyperparameters: list = []
    hyperparameter_names: list = []


_NO_START = _NoStart()


def _quasi_features(kernel: Any) -> list[str]:
    """The features quasi-kernels (``Product()``) inside ``kernel`` read."""
    own = [kernel.on] if type(kernel).__name__ == "QuasiProduct" and kernel.on else []
    return own + [f for k in kernel._children() for f in _quasi_features(k)]


def _dot_products(kernel: Any) -> list[tuple[str, Any]]:
    """(feature, kernel) of every DotProduct inside ``kernel``."""
    out = [(kernel.on, kernel)] if isinstance(kernel, DotProduct) and kernel.on else []
    for k in kernel._children():
        out += _dot_products(k)
    return out


def check_q_bounds(q: float | None, q_bounds: Any) -> None:
    """``q_bounds`` must be 'fixed' or a pair ``0 < low <= q <= high < 1`` (``q`` None: not yet
    known, the pair alone checked); ValueError naming the bad value and the fix (``low > high``:
    the pair in order)."""
    pair = ordered_bounds(q_bounds, "q_bounds", list)
    if pair is None:
        return
    low, high = pair
    if not 0 < low <= (low if q is None else q) <= high < 1:
        raise ValueError(f"q_bounds={list(q_bounds)} must satisfy 0 < low <= q={q} <= high < 1 (or be 'fixed')")


def cost(inputs: dict[str, Any], params: MGKernelParams) -> dict[str, Any]:
    """The Gram matrix written once; counts of graph pairs and of edge pairs (one product-graph
    mat-vec touches each pair of arcs once)."""
    graphs, other = inputs["graphs"], inputs.get("other")
    n = len(graphs)
    m = n if other is None else len(other)
    pairs = n * (n + 1) / 2 if other is None else n * m
    return {"bytes": 8.0 * n * m, "flops": 0.0, "counts": {"graph pairs": pairs}}
