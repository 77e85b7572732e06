"""``MarginalizedGraphKernel``: the marginalized graph kernel as a scikit-learn estimator and
Gaussian-process kernel (``theta``, ``bounds``, ``__call__(X, Y, eval_gradient)``, ``diag``,
``clone_with_theta``), so ``GaussianProcessRegressor(kernel=MarginalizedGraphKernel(...))``
fits its hyperparameters. ``X`` is a GraphSet, or a sequence of networkx graphs (their
attributes named by the base kernels become features).

Exported as ``graphops.kernels.MarginalizedGraphKernel``. Every value comes from
``graphops.run("mg_kernel", ...)``, so backends, YAML steps and this class agree.
"""
from __future__ import annotations

from collections import namedtuple
from typing import Any, Sequence

import numpy as np

from graphops.plugin import (BaseKernel, Graph, GraphKernelEstimator, GraphSet, InputError, KroneckerDelta,
                             StartProbability, start_from_spec,
                             from_spec, run)

from .params import MGKernelParams, check_q_bounds

__all__ = ["MarginalizedGraphKernel"]

try:  # scikit-learn's GP code takes only its own Kernel subclasses
    from sklearn.gaussian_process.kernels import Hyperparameter
    from sklearn.gaussian_process.kernels import Kernel as _SklearnKernel
    _BASES: tuple[type, ...] = (GraphKernelEstimator, _SklearnKernel)
except ImportError:  # without scikit-learn: the same fields
    Hyperparameter = namedtuple("Hyperparameter", ("name", "value_type", "bounds", "n_elements", "fixed"))
    _BASES = (GraphKernelEstimator,)


class MarginalizedGraphKernel(*_BASES):
    """Marginalized graph kernel (GraphDot's convention) with its hyperparameters: ``q`` and
    those of the node and edge base kernels.

    :param node_kernel: base kernel on node features (or its YAML mapping)
    :param edge_kernel: base kernel on edge features
    :param q: stopping probability; ``q_bounds`` its bounds or ``"fixed"``
    :param backend: graphops backend (``auto``, ``cpu``, ``gpu``)
    :param params: any other ``mg_kernel`` parameter (``p``, ``lmin``, ``normalize``, ``tol``, ...)
    """

    algorithm = "mg_kernel"
    fields = tuple(f for f in MGKernelParams.model_fields if f not in ("diagonal", "nodewise", "eval_gradient"))
    defaults = {"node_kernel": KroneckerDelta(0.5, on="label"), "edge_kernel": KroneckerDelta(0.5, on="label"),
                "q": 0.05, "q_bounds": (1e-4, 1.0 - 1e-4)}

    def __init__(self, node_kernel: Any = defaults["node_kernel"], edge_kernel: Any = defaults["edge_kernel"],
                 q: float = 0.05, q_bounds: Any = defaults["q_bounds"], backend: str = "auto", **params: Any):
        # stored as given (scikit-learn's contract); kernels are read when used (a YAML mapping too).
        # The signature scikit-learn reads names every field (set after the class).
        super().__init__(backend, node_kernel=node_kernel, edge_kernel=edge_kernel, q=q, q_bounds=q_bounds, **params)

    def _kernel(self, role: str) -> BaseKernel:
        return from_spec(getattr(self, role), role)

    # hyperparameters (scikit-learn's kernel API) --------------------------------------------
    def _hypers(self) -> list[tuple[str, float, Any, BaseKernel | None, int]]:
        """(name, value, bounds or 'fixed', kernel or None for q, index within the kernel); q_bounds
        checked here, where scikit-learn reads them (the constructor stores its arguments as given)."""
        try:
            check_q_bounds(self.q, self.q_bounds)
        except ValueError as exc:
            raise InputError(f"MarginalizedGraphKernel: {exc}") from None
        out: list[tuple[str, float, Any, BaseKernel | None, int]] = [("q", self.q, self.q_bounds, None, 0)]
        for role in ("node_kernel", "edge_kernel", "p"):
            kernel = self._kernel(role) if role != "p" else self._start()
            if kernel is None:
                continue
            out += [(f"{role}__{name}", h.value, "fixed" if h.fixed else h.bounds, kernel, k)
                    for k, (name, h) in enumerate(zip(kernel.hyperparameter_names, kernel.hyperparameters))]
        return out

    def _start(self) -> StartProbability | None:
        """``p`` when it is a start probability with hyperparameters (given as an object or YAML)."""
        p = getattr(self, "p", None)
        p = start_from_spec(p) if isinstance(p, dict) else p
        return p if isinstance(p, StartProbability) else None

    @property
    def hyperparameters(self) -> list[Hyperparameter]:
        return [Hyperparameter(name, "numeric", b if isinstance(b, str) else np.atleast_2d(b), 1,
                               isinstance(b, str)) for name, _, b, _, _ in self._hypers()]

    @property
    def theta(self) -> np.ndarray:
        """Log of the free hyperparameters: q, then the node and the edge kernel's."""
        return np.log([v for _, v, b, _, _ in self._hypers() if not isinstance(b, str)])

    @theta.setter
    def theta(self, theta: Sequence[float]) -> None:
        free = [h for h in self._hypers() if not isinstance(h[2], str)]
        theta = np.asarray(theta, dtype=np.float64)
        if theta.shape != (len(free),):
            raise InputError(f"theta has {theta.shape} entries; this kernel has {len(free)} free hyperparameters "
                             f"({', '.join(h[0] for h in free)})")
        values = {role: [h.value for h in self._kernel(role).hyperparameters] for role in ("node_kernel", "edge_kernel")}
        start = self._start()
        values["p"] = [h.value for h in start.hyperparameters] if start is not None else []
        for (name, _, _, kernel, k), t in zip(free, np.exp(theta)):
            if kernel is None:
                self.q = float(t)
            else:
                values[name.split("__")[0]][k] = float(t)
        self.node_kernel = self._kernel("node_kernel").with_values(values["node_kernel"])
        self.edge_kernel = self._kernel("edge_kernel").with_values(values["edge_kernel"])
        if start is not None:
            self.p = start.with_values(values["p"])

    @property
    def bounds(self) -> np.ndarray:
        """Log of the free hyperparameters' bounds, ``(n, 2)``."""
        rows = [b for _, _, b, _, _ in self._hypers() if not isinstance(b, str)]
        return np.log(np.asarray(rows, dtype=np.float64).reshape(-1, 2))

    @property
    def n_dims(self) -> int:
        return len(self.theta)

    @property
    def requires_vector_input(self) -> bool:
        return False

    def is_stationary(self) -> bool:
        return False

    def clone_with_theta(self, theta: Sequence[float]) -> "MarginalizedGraphKernel":
        clone = type(self)(**self.get_params(deep=False))
        clone.theta = theta
        return clone

    # values ---------------------------------------------------------------------------------
    def _names(self) -> dict[str, Any]:
        """How a sequence of graphs becomes a GraphSet: the features the base kernels name."""
        nodes, edges = list(self._kernel("node_kernel").features), list(self._kernel("edge_kernel").features)
        p = getattr(self, "p", None)
        start = start_from_spec(p) if isinstance(p, dict) else p
        reads = start.features if isinstance(start, StartProbability) else (p,) if isinstance(p, str) and p != "uniform" \
            else ()
        nodes += [f for f in reads if f not in nodes]
        return dict(node_label="label" if "label" in nodes else None, edge_label="label" if "label" in edges else None,
                    node_features=[f for f in nodes if f != "label"] or None,
                    edge_features=[f for f in edges if f != "label"] or None)

    def __call__(self, X: Any, Y: Any = None, eval_gradient: bool = False, nodal: bool = False,
                 lmin: int | None = None) -> Any:
        """``K(X, Y)`` (``Y`` None: ``K(X, X)``); with ``eval_gradient`` also ``dK`` by ``theta``
        (``dK[a, b, h]``, for a cross matrix too, as GraphDot and ``graphops.run`` give it).
        GraphDot's keywords: ``nodal=True`` gives the node-wise matrix (all nodes of X by all nodes
        of Y; with ``eval_gradient`` also its derivatives), ``lmin`` overrides the parameter."""
        inputs = (self._graphs(X),) if Y is None else (self._graphs(X), self._graphs(Y))
        return run(self.algorithm, *inputs, backend=self.backend, eval_gradient=eval_gradient, nodewise=nodal,
                   **self._all(lmin))

    def diag(self, X: Any, nodal: bool = False, eval_gradient: bool = False, lmin: int | None = None) -> Any:
        """``K(x, x)`` for every graph of ``X``; GraphDot's keywords: ``nodal=True`` gives the
        diagonal of the node-wise matrix (one value per node), ``eval_gradient=True`` also the
        derivatives by ``theta`` (graphs, or nodes, x hyperparameters; each graph solved on its own)."""
        gs = self._graphs(X)
        if nodal and eval_gradient:
            parts = [run(self.algorithm, gs[[i]], backend=self.backend, nodewise=True, eval_gradient=True,
                         **self._all(lmin)) for i in range(len(gs))]
            return (np.concatenate([np.diag(np.asarray(R)) for R, _ in parts]),
                    np.concatenate([np.einsum("iih->ih", np.asarray(dR)) for _, dR in parts]))
        if nodal:
            return np.concatenate([np.diag(np.asarray(run(self.algorithm, gs[[i]], backend=self.backend,
                                                          nodewise=True, **self._all(lmin))))
                                   for i in range(len(gs))])
        if eval_gradient:
            parts = [run(self.algorithm, gs[[i]], backend=self.backend, eval_gradient=True, **self._all(lmin))
                     for i in range(len(gs))]
            return (np.array([float(np.asarray(K)[0, 0]) for K, _ in parts]),
                    np.stack([np.asarray(dK)[0, 0] for _, dK in parts]).reshape(len(gs), -1))
        return np.asarray(run(self.algorithm, gs, backend=self.backend, diagonal=True, **self._all(lmin)))

    def _all(self, lmin: int | None = None) -> dict[str, Any]:
        params = self._call_params()
        if lmin is not None:
            params["lmin"] = lmin
        return params

    def _graphs(self, X: Any, where: str = "__call__") -> GraphSet:
        """X as a GraphSet: as given, or a sequence of Graphs or networkx graphs with the features
        the base kernels name."""
        if isinstance(X, GraphSet):
            return X
        if isinstance(X, (str, bytes)) or not hasattr(X, "__iter__") or not hasattr(X, "__len__"):
            return super()._graphs(X, where)  # names what is accepted
        graphs = list(X)
        if graphs and all(isinstance(g, Graph) for g in graphs):
            return GraphSet.from_graphs(graphs, **self._names())
        if graphs and all(type(g).__module__.split(".")[0] == "networkx" for g in graphs):
            return GraphSet.from_networkx(graphs, **self._names())
        return super()._graphs(X, where)  # empty, mixed or not graphs: the shared message


def _init_signature() -> Any:
    import inspect

    P = inspect.Parameter
    head = [P("self", P.POSITIONAL_OR_KEYWORD)]
    head += [P(n, P.POSITIONAL_OR_KEYWORD, default=MarginalizedGraphKernel.defaults[n])
             for n in ("node_kernel", "edge_kernel", "q", "q_bounds")]
    head.append(P("backend", P.POSITIONAL_OR_KEYWORD, default="auto"))
    rest = [P(f, P.KEYWORD_ONLY, default=None) for f in MarginalizedGraphKernel.fields
            if f not in ("node_kernel", "edge_kernel", "q", "q_bounds")]
    return inspect.Signature(head + rest)


MarginalizedGraphKernel.__init__.__signature__ = _init_signature()
