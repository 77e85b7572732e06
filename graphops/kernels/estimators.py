"""scikit-learn style front ends for graph-kernel algorithms (fit / transform / fit_transform).

A plugin whose algorithm returns a Gram matrix exports an estimator from :mod:`graphops.kernels` by declaring its
class name: ``Algorithm(name="sp_kernel", ..., estimator="ShortestPathKernel")`` makes
``from graphops.kernels import ShortestPathKernel`` work (looked up in the registry on
first use; core code names no plugin). The estimators are thin: parameters are validated by
the algorithm's Params model and the work is done by :func:`graphops.run`, so every backend
and YAML step computes the same numbers. The base kernels on node and edge features
(:mod:`graphops.kernels.basekernels`) are importable from here too.
"""
from __future__ import annotations

from typing import Any

from graphops.engine.dispatch import as_graphset, run
from graphops.model.graphset import GraphSet
from graphops.errors import InputError

__all__ = ["GraphKernelEstimator", "estimator_for"]


class GraphKernelEstimator:
    """Gram matrices against the graphs seen by :meth:`fit`."""

    algorithm = ""

    def __init__(self, backend: str = "auto", **params: Any):
        self.backend = backend
        self.params = params
        self.train_: GraphSet | None = None

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {"backend": self.backend, **self.params}

    def set_params(self, **params: Any) -> "GraphKernelEstimator":
        self.backend = params.pop("backend", self.backend)
        self.params.update(params)
        return self

    def fit(self, graphs: Any, y: Any = None) -> "GraphKernelEstimator":
        """Remember the training graphs (columns of every later matrix): a GraphSet, or a list of
        networkx graphs or of Graphs (read as :meth:`GraphSet.from_networkx` reads them)."""
        self.train_ = as_graphset(graphs, f"{type(self).__name__}.fit")
        return self

    def transform(self, graphs: Any) -> Any:
        """``K[i, j] = k(graphs[i], train[j])``; normalized with both diagonals when asked."""
        if self.train_ is None:
            raise InputError(f"{type(self).__name__} is not fitted yet; call fit(train_graphs) first")
        graphs = as_graphset(graphs, f"{type(self).__name__}.transform")
        return run(self.algorithm, graphs, self.train_, backend=self.backend, **self.params)

    def fit_transform(self, graphs: Any, y: Any = None) -> Any:
        """Fit on ``graphs`` and return their square Gram matrix (upper triangle computed once)."""
        self.fit(graphs)
        return run(self.algorithm, self.train_, backend=self.backend, **self.params)


def estimator_for(name: str, registry: Any = None) -> type[GraphKernelEstimator]:
    """The estimator class a registered algorithm exports under ``name`` (one class per registry)."""
    from graphops.host.registry import get_registry

    registry = registry or get_registry()
    if name not in registry.estimator_classes:
        registry.estimator_classes[name] = _make(name, registry)
    return registry.estimator_classes[name]


def _make(name: str, registry: Any) -> type[GraphKernelEstimator]:
    found = [a for a in registry.algorithms.values() if a.estimator == name]
    if not found:
        offered = sorted(a.estimator for a in registry.algorithms.values() if a.estimator)
        raise AttributeError(f"module 'graphops.kernels' has no attribute {name!r}; the installed plugins "
                             f"export: {', '.join(offered) or '(none)'}")
    algo = found[0]
    if algo.estimator_class is not None:
        from graphops.host.algorithm import load_target

        return load_target(algo.estimator_class)
    doc = (f"{algo.summary} (algorithm ``{algo.name}``, plugin ``{algo.plugin}``); keyword arguments as "
           f"for ``graphops.run({algo.name!r}, ...)``.")
    return type(name, (GraphKernelEstimator,), {"algorithm": algo.name, "__doc__": doc, "__module__": "graphops.kernels"})
