"""scikit-learn style front ends for the graph-kernel algorithms (fit / transform / fit_transform).

They are thin: parameters are validated by the algorithm's Params model and the work is
done by :func:`graphops.run`, so every backend and YAML step computes the same numbers.
"""
from __future__ import annotations

from typing import Any

from .dispatch import run
from .graphset import GraphSet
from .errors import InputError, InputTypeError

__all__ = ["ShortestPathKernel"]


class _GraphKernel:
    """Gram matrices against the graphs seen by :meth:`fit`."""

    algorithm = ""

    def __init__(self, backend: str = "auto", **params: Any):
        self.backend = backend
        self.params = params
        self.train_: GraphSet | None = None

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {"backend": self.backend, **self.params}

    def set_params(self, **params: Any) -> "_GraphKernel":
        self.backend = params.pop("backend", self.backend)
        self.params.update(params)
        return self

    def fit(self, graphs: GraphSet, y: Any = None) -> "_GraphKernel":
        """Remember the training graphs (columns of every later matrix)."""
        if not isinstance(graphs, GraphSet):
            raise InputTypeError(f"{type(self).__name__}.fit takes a GraphSet; got {type(graphs).__name__}")
        self.train_ = graphs
        return self

    def transform(self, graphs: GraphSet) -> Any:
        """``K[i, j] = k(graphs[i], train[j])``; normalized with both diagonals when asked."""
        if self.train_ is None:
            raise InputError(f"{type(self).__name__} is not fitted yet; call fit(train_graphs) first")
        return run(self.algorithm, graphs, self.train_, backend=self.backend, **self.params)

    def fit_transform(self, graphs: GraphSet, y: Any = None) -> Any:
        """Fit on ``graphs`` and return their square Gram matrix (upper triangle computed once)."""
        self.fit(graphs)
        return run(self.algorithm, graphs, backend=self.backend, **self.params)


class ShortestPathKernel(_GraphKernel):
    """The shortest-path graph kernel (algorithm ``sp_kernel``); keyword arguments as for it.

    >>> k = ShortestPathKernel(node_kernel="delta", normalize=True)   # doctest: +SKIP
    >>> K_train = k.fit_transform(train); K_test = k.transform(test)  # doctest: +SKIP
    """

    algorithm = "sp_kernel"
