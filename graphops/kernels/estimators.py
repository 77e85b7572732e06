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

import inspect
from typing import Any

from graphops.engine.dispatch import as_graphset, run
from graphops.errors import InputError, did_you_mean
from graphops.kernels.basekernels import BaseKernel
from graphops.kernels.spec import from_spec
from graphops.model.graphset import GraphSet

__all__ = ["GraphKernelEstimator", "estimator_for", "estimator_fields"]


class GraphKernelEstimator:
    """Gram matrices against the graphs seen by :meth:`fit`.

    scikit-learn's estimator contract: every constructor parameter (``backend`` and the
    algorithm's parameters, :attr:`fields`) is an attribute of its own name, stored as given and
    checked when used; ``get_params``/``set_params`` (a base-kernel parameter's hyperparameters as
    nested parameters, ``node_kernel__h``, by
    :attr:`~graphops.kernels.basekernels.BaseKernel.hyperparameter_names`); ``clone``, pickling;
    ``fit``/``transform``/``fit_transform`` taking a GraphSet, a list, tuple or array of Graphs, or a
    list of networkx graphs (what scikit-learn's splitters hand on)."""

    algorithm = ""
    fields: tuple[str, ...] = ()  # the algorithm's parameters an estimator takes (set per class)
    defaults: dict[str, Any] = {}

    def __init__(self, backend: str = "auto", **params: Any):
        unknown = [k for k in params if k not in self.fields]
        if unknown:
            raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {unknown[0]!r}; its "
                            f"parameters: backend, {', '.join(self.fields)}")
        self.backend = backend
        for name in self.fields:
            setattr(self, name, params.get(name, self.defaults.get(name)))

    def _own(self) -> dict[str, Any]:
        """The constructor's parameters as they are now (what ``clone`` passes back)."""
        return {"backend": self.backend, **{name: getattr(self, name) for name in self.fields}}

    def _call_params(self) -> dict[str, Any]:
        """The algorithm's parameters for a call (those left at None mean the algorithm's default)."""
        return {name: getattr(self, name) for name in self.fields if getattr(self, name) is not None}

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        own = self._own()
        if not deep:
            return own
        kernels = {key: _as_kernel(value, key) for key, value in own.items()}
        nested = {f"{key}__{name}": h.value for key, k in kernels.items() if k is not None
                  for name, h in zip(k.hyperparameter_names, k.hyperparameters)}
        return {**own, **nested}

    def set_params(self, **params: Any) -> "GraphKernelEstimator":
        """Set constructor parameters, or a kernel's hyperparameter as ``<kernel>__<name>``."""
        own = self._own()
        nested: dict[str, dict[str, float]] = {}
        for key in [k for k in params if "__" in k]:
            head, _, rest = key.partition("__")
            kernel = _as_kernel(params[head] if head in params else own.get(head), head)
            if kernel is None:
                raise InputError(f"{type(self).__name__}.set_params: {key!r} names a hyperparameter of {head!r}, "
                                 f"which is not a base kernel here; parameters: {', '.join(own)}")
            nested.setdefault(head, {})[rest] = params.pop(key)
        unknown = [k for k in params if k not in own]
        if unknown:
            raise InputError(f"{type(self).__name__}.set_params: no parameter {unknown[0]!r}; parameters: "
                             f"{', '.join(own)}.{did_you_mean(unknown[0], own)}")
        for key, value in params.items():
            setattr(self, key, value)
        for head, values in nested.items():
            setattr(self, head, _as_kernel(getattr(self, head), head).with_named(**values))
        return self

    def __sklearn_tags__(self) -> Any:
        """What scikit-learn's checks may assume: a transformer whose inputs are graphs (no array
        input), unsupervised (y unused), deterministic, fitted before transform."""
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags(preserves_dtype=[]),
                    input_tags=InputTags(two_d_array=False, one_d_array=False, pairwise=False),
                    requires_fit=True)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._own().items()
                         if k == "backend" or v is not self.defaults.get(k))
        return f"{type(self).__name__}({args})"

    def _graphs(self, graphs: Any, where: str) -> GraphSet:
        return as_graphset(graphs, f"{type(self).__name__}.{where}")

    def fit(self, graphs: Any, y: Any = None) -> "GraphKernelEstimator":
        """Remember the training graphs (columns of every later matrix): a GraphSet, or a list of
        networkx graphs or of Graphs (read as :meth:`GraphSet.from_networkx` reads them)."""
        self.train_ = self._graphs(graphs, "fit")
        return self

    def _fitted(self) -> GraphSet:
        train = getattr(self, "train_", None)
        if train is None:
            raise InputError(f"{type(self).__name__} is not fitted yet; call fit(train_graphs) first")
        return train

    def transform(self, graphs: Any) -> Any:
        """``K[i, j] = k(graphs[i], train[j])``; normalized with both diagonals when asked."""
        train = self._fitted()
        return run(self.algorithm, self._graphs(graphs, "transform"), train, backend=self.backend,
                   **self._call_params())

    def fit_transform(self, graphs: Any, y: Any = None) -> Any:
        """Fit on ``graphs`` and return their square Gram matrix (upper triangle computed once)."""
        self.fit(graphs)
        return run(self.algorithm, self.train_, backend=self.backend, **self._call_params())


def _as_kernel(value: Any, where: str) -> Any:
    """A parameter's value as a base kernel or a start probability (an object, or its YAML
    mapping; ``p`` reads as a start probability), else None: what has nested hyperparameters."""
    from graphops.kernels.probability import StartProbability, from_spec as start_from_spec

    if isinstance(value, (BaseKernel, StartProbability)):
        return value
    if isinstance(value, dict) and len(value) == 1:
        try:
            return start_from_spec(value, where) if where == "p" else from_spec(value, where)
        except InputError:
            return None
    return None


def estimator_fields(algo: Any) -> tuple[str, ...]:
    """The parameters an algorithm's estimator takes: its Params fields, less the modes that change
    what a call returns (a Gram declaration's ``diagonal`` and one-device modes: a diagonal, node-wise
    values, gradients)."""
    modes = set() if algo.gram is None else {algo.gram.diagonal, *algo.gram.one_device}
    return tuple(f for f in algo.params.model_fields if f not in modes)


def _signature(cls: type) -> inspect.Signature:
    """``__init__``'s signature as scikit-learn reads it: backend and each field, with its default."""
    P = inspect.Parameter
    return inspect.Signature([P("self", P.POSITIONAL_OR_KEYWORD), P("backend", P.POSITIONAL_OR_KEYWORD, default="auto"),
                              *(P(f, P.KEYWORD_ONLY, default=cls.defaults.get(f)) for f in cls.fields)])


def estimator_for(name: str, registry: Any = None) -> type[GraphKernelEstimator]:
    """The estimator class a registered algorithm exports under ``name``: one class per algorithm
    (the same object whichever registry asks, so that pickles made under one load under another)."""
    from graphops.host.registry import get_registry

    registry = registry or get_registry()
    if name not in registry.estimator_classes:
        registry.estimator_classes[name] = _make(name, registry)
    return registry.estimator_classes[name]


_CLASSES: dict[tuple, type] = {}


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
    key = (name, algo.name, algo.params)
    if key in _CLASSES:
        return _CLASSES[key]
    fields = estimator_fields(algo)

    def __init__(self: Any, backend: str = "auto", **params: Any) -> None:
        GraphKernelEstimator.__init__(self, backend, **params)

    cls = type(name, (GraphKernelEstimator,), {"algorithm": algo.name, "__doc__": doc, "__module__": "graphops.kernels",
                                               "fields": fields, "defaults": {}, "__init__": __init__})
    __init__.__signature__ = _signature(cls)  # type: ignore[attr-defined]
    _CLASSES[key] = cls
    return cls
