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
                             from_spec, run)

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

    def __init__(self, node_kernel: Any = KroneckerDelta(0.5, on="label"),
                 edge_kernel: Any = KroneckerDelta(0.5, on="label"), q: float = 0.05,
                 q_bounds: Any = (1e-4, 1.0 - 1e-4), backend: str = "auto", **params: Any):
        super().__init__(backend, **params)
        self.node_kernel = from_spec(node_kernel, "node_kernel")
        self.edge_kernel = from_spec(edge_kernel, "edge_kernel")
        self.q = q
        self.q_bounds = q_bounds  # as given: scikit-learn's clone checks that parameters are kept

    # scikit-learn estimator API ------------------------------------------------------------
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {"node_kernel": self.node_kernel, "edge_kernel": self.edge_kernel, "q": self.q,
                "q_bounds": self.q_bounds, **super().get_params(deep)}

    def set_params(self, **params: Any) -> "MarginalizedGraphKernel":
        for key in ("node_kernel", "edge_kernel"):
            if key in params:
                setattr(self, key, from_spec(params.pop(key), key))
        if "q" in params:
            self.q = params.pop("q")
        if "q_bounds" in params:
            self.q_bounds = params.pop("q_bounds")
        return super().set_params(**params)

    def __repr__(self) -> str:
        return (f"MarginalizedGraphKernel(node_kernel={self.node_kernel!r}, edge_kernel={self.edge_kernel!r}, "
                f"q={self.q!r})")

    def _all(self) -> dict[str, Any]:
        return {"node_kernel": self.node_kernel, "edge_kernel": self.edge_kernel, "q": self.q,
                "q_bounds": self.q_bounds, **self.params}

    # hyperparameters (scikit-learn's kernel API) --------------------------------------------
    def _hypers(self) -> list[tuple[str, float, Any, BaseKernel | None, int]]:
        """(name, value, bounds or 'fixed', kernel or None for q, index within the kernel)."""
        out: list[tuple[str, float, Any, BaseKernel | None, int]] = [("q", self.q, self.q_bounds, None, 0)]
        for role in ("node_kernel", "edge_kernel"):
            kernel = getattr(self, role)
            out += [(f"{role}__{h.name}", h.value, "fixed" if h.fixed else h.bounds, kernel, k)
                    for k, h in enumerate(kernel.hyperparameters)]
        return out

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
        values = {"node_kernel": [h.value for h in self.node_kernel.hyperparameters],
                  "edge_kernel": [h.value for h in self.edge_kernel.hyperparameters]}
        for (name, _, _, kernel, k), t in zip(free, np.exp(theta)):
            if kernel is None:
                self.q = float(t)
            else:
                values[name.split("__")[0]][k] = float(t)
        self.node_kernel = self.node_kernel.with_values(values["node_kernel"])
        self.edge_kernel = self.edge_kernel.with_values(values["edge_kernel"])

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
        clone = type(self)(**self.get_params())
        clone.theta = theta
        return clone

    # values ---------------------------------------------------------------------------------
    def _graphs(self, X: Any) -> GraphSet:
        if isinstance(X, GraphSet):
            return X
        graphs = list(X)
        if not graphs:
            raise InputError("MarginalizedGraphKernel: X holds no graphs")
        if isinstance(graphs[0], GraphSet):
            raise InputError("MarginalizedGraphKernel: pass a GraphSet or a sequence of networkx graphs as X; a "
                             "sequence of GraphSets is not joined")
        nodes, edges = list(self.node_kernel.features), list(self.edge_kernel.features)
        names = dict(node_label="label" if "label" in nodes else None, edge_label="label" if "label" in edges else None,
                     node_features=[f for f in nodes if f != "label"] or None,
                     edge_features=[f for f in edges if f != "label"] or None)
        if isinstance(graphs[0], Graph):  # e.g. a GraphSet that scikit-learn turned into an array of graphs
            return GraphSet.from_graphs(graphs, **names)
        return GraphSet.from_networkx(graphs, **names)

    def __call__(self, X: Any, Y: Any = None, eval_gradient: bool = False) -> Any:
        """``K(X, Y)`` (``Y`` None: ``K(X, X)``); with ``eval_gradient`` also ``dK`` by ``theta``
        (only for ``Y`` None, as scikit-learn asks)."""
        if eval_gradient and Y is not None:
            raise ValueError("eval_gradient is only offered for Y=None (scikit-learn's kernel API)")
        inputs = (self._graphs(X),) if Y is None else (self._graphs(X), self._graphs(Y))
        return run(self.algorithm, *inputs, backend=self.backend, eval_gradient=eval_gradient, **self._all())

    def diag(self, X: Any) -> np.ndarray:
        """``K(x, x)`` for every graph of ``X``."""
        return np.asarray(run(self.algorithm, self._graphs(X), backend=self.backend, diagonal=True,
                              **self._all()))

    def fit_transform(self, graphs: GraphSet, y: Any = None) -> Any:
        self.fit(graphs)
        return run(self.algorithm, graphs, backend=self.backend, **self._all())

    def transform(self, graphs: GraphSet) -> Any:
        if self.train_ is None:
            raise InputError("MarginalizedGraphKernel is not fitted yet; call fit(train_graphs) first")
        return run(self.algorithm, graphs, self.train_, backend=self.backend, **self._all())

