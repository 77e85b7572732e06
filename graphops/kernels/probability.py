"""Start probabilities as functions of node features (GraphDot's starting probabilities, the
"microprobabilities"): where a random walk of the marginalized graph kernel starts.

* ``Uniform(p)``: ``p`` at every node, ``p`` a hyperparameter (GraphDot's ``Uniform``);
* ``Constant(p)``: ``p`` at every node, fixed;
* ``Feature(on)``: the value of a node feature (values must be > 0);
* ``Assign(on, values, default)``: a probability per value of a node feature (a label), each a
  hyperparameter; ``default`` for the values not listed;
* ``a * b``, ``a + b``: products and sums of these per-feature terms (numbers are Constants);
* ``Adhoc(f)``: any function of the node records (GraphDot's ``Adhoc``; no hyperparameters).

Each evaluates itself on a GraphSet's node feature table (NumPy, once per set), with its
derivatives by each hyperparameter, so every backend reads plain per-node arrays. YAML writes
them as ``{uniform: {p: 1.0}}``, ``{assign: {on: label, values: {6: 1.0, 8: 0.5}, default: 0.1}}``,
``{feature: {on: weight}}``, ``{product: [...]}``, ``{sum: [...]}`` (:func:`from_spec`); the
older forms stay: ``"uniform"`` (1 per node), a number, a feature name.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from graphops.errors import InputError, did_you_mean
from graphops.kernels.basekernels import Hyper, _bounds, _number, named_values
from graphops.kernels.spec import keyword_body

__all__ = ["StartProbability", "Uniform", "Constant", "Feature", "Assign", "Adhoc", "from_spec", "start_from_spec",
           "start_values"]


class StartProbability:
    """What every start probability offers; see the module text."""

    @property
    def hyperparameters(self) -> list[Hyper]:
        return []

    @property
    def hyperparameter_names(self) -> list[str]:
        return [h.name for h in self.hyperparameters]

    @property
    def features(self) -> tuple[str, ...]:
        return ()

    def with_named(self, **values: float) -> "StartProbability":
        """This start probability with some hyperparameters set by :attr:`hyperparameter_names`."""
        return self.with_values(named_values(self, values))

    def with_values(self, values: Sequence[float]) -> "StartProbability":
        if len(values):
            raise InputError(f"{self!r} has no hyperparameters")
        return self

    def __call__(self, nodes: Mapping[str, Any], n: int | None = None) -> np.ndarray:
        """The probability of every node (``nodes``: feature name -> one value per node; ``n``
        the number of nodes, for terms that read no feature)."""
        return self._eval(nodes, _count(nodes, n))[0]

    def gradient(self, nodes: Mapping[str, Any], n: int | None = None) -> list[np.ndarray]:
        """d(probability)/d(hyperparameter) per node, for every hyperparameter in order."""
        return self._eval(nodes, _count(nodes, n))[1]

    def _eval(self, nodes: Mapping[str, Any], n: int) -> tuple[np.ndarray, list[np.ndarray]]:
        raise NotImplementedError

    def __mul__(self, other: Any) -> "StartProbability":
        return _Combined("*", self, _term(other))

    __rmul__ = __mul__

    def __add__(self, other: Any) -> "StartProbability":
        return _Combined("+", self, _term(other))

    __radd__ = __add__

    def __eq__(self, other: Any) -> bool:
        return type(self) is type(other) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))


def _count(nodes: Mapping[str, Any], n: int | None) -> int:
    if n is not None:
        return int(n)
    for v in nodes.values():
        return len(v)
    raise InputError("a start probability reading no feature needs the number of nodes (n=...)")


def _term(value: Any) -> StartProbability:
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return Constant(float(value))
    if not isinstance(value, StartProbability):
        raise InputError(f"start probabilities combine only with start probabilities or numbers; got {value!r}")
    return value


class Uniform(StartProbability):
    """``p`` at every node; ``p`` a hyperparameter with ``p_bounds`` (GraphDot's default (1e-3, 1e3))."""

    def __init__(self, p: float = 1.0, p_bounds: Any = (1e-3, 1e3)):
        self.p = _number("p", p, 0.0, math.inf, "Uniform", open_low=True)
        self.p_bounds = _bounds("p", self.p, p_bounds, 0.0, math.inf, "Uniform")
        if not self.p_bounds[0] <= self.p <= self.p_bounds[1]:
            raise InputError(f"Uniform: p={self.p} lies outside its bounds {self.p_bounds}")

    @property
    def hyperparameters(self) -> list[Hyper]:
        return [Hyper("p", self.p, self.p_bounds, self.p_bounds[0] == self.p_bounds[1])]

    def with_values(self, values):
        (p,) = values
        return Uniform(float(p), "fixed" if self.p_bounds[0] == self.p_bounds[1] else self.p_bounds)

    def _eval(self, nodes, n):
        return np.full(n, self.p), [np.ones(n)]

    def __repr__(self) -> str:
        fixed = self.p_bounds[0] == self.p_bounds[1]
        return f"Uniform({self.p!r}{', p_bounds=' + repr('fixed') if fixed else ''})"


class Constant(StartProbability):
    """``p`` at every node, fixed (``p`` > 0)."""

    def __init__(self, p: float):
        self.p = _number("p", p, 0.0, math.inf, "Constant", open_low=True)

    def _eval(self, nodes, n):
        return np.full(n, self.p), []

    def __repr__(self) -> str:
        return f"Constant({self.p!r})"


def _column(nodes: Mapping[str, Any], on: str, what: str) -> np.ndarray:
    if on not in nodes:
        raise InputError(f"{what} reads the node feature {on!r}, which is not there (node features: "
                         f"{', '.join(map(repr, nodes)) or 'none'}).{did_you_mean(on, list(nodes))}")
    values = np.asarray(nodes[on])
    if values.ndim != 1:
        raise InputError(f"{what}: node feature {on!r} holds sequences; a start probability reads one number per node")
    return values


class Feature(StartProbability):
    """The value of node feature ``on`` (every value must be > 0)."""

    def __init__(self, on: str):
        if not isinstance(on, str) or not on:
            raise InputError(f"Feature: on must be a node feature name; got {on!r}")
        self.on = on

    @property
    def features(self) -> tuple[str, ...]:
        return (self.on,)

    def _eval(self, nodes, n):
        return np.asarray(_column(nodes, self.on, repr(self)), dtype=np.float64), []

    def __repr__(self) -> str:
        return f"Feature({self.on!r})"


class Assign(StartProbability):
    """A probability per value of node feature ``on``: ``values`` maps a value to its probability
    (each a hyperparameter with ``bounds``), ``default`` (fixed) covers the others; a value not
    listed with no ``default`` is an error naming it."""

    def __init__(self, on: str, values: Mapping[Any, float], default: float | None = None,
                 bounds: Any = (1e-3, 1e3)):
        if not isinstance(on, str) or not on:
            raise InputError(f"Assign: on must be a node feature name; got {on!r}")
        if not isinstance(values, Mapping) or not values:
            raise InputError(f"Assign: values must map feature values to probabilities, e.g. {{6: 1.0, 8: 0.5}}; "
                             f"got {values!r}")
        self.on = on
        self.values = {k: _number(f"values[{k!r}]", v, 0.0, math.inf, "Assign", open_low=True)
                       for k, v in values.items()}
        self.default = None if default is None else _number("default", default, 0.0, math.inf, "Assign",
                                                            open_low=True)
        self.bounds = bounds
        self._bounds = {k: _bounds(f"values[{k!r}]", v, bounds, 0.0, math.inf, "Assign", "bounds")
                        for k, v in self.values.items()}
        for k, v in self.values.items():
            lo, hi = self._bounds[k]
            if not lo <= v <= hi:
                raise InputError(f"Assign: values[{k!r}]={v} lies outside its bounds {(lo, hi)}")

    @property
    def features(self) -> tuple[str, ...]:
        return (self.on,)

    @property
    def hyperparameters(self) -> list[Hyper]:
        return [Hyper(f"values[{k!r}]", v, self._bounds[k], self._bounds[k][0] == self._bounds[k][1])
                for k, v in self.values.items()]

    @property
    def hyperparameter_names(self) -> list[str]:
        return [f"p{k}" for k in self.values]

    def with_values(self, values):
        return Assign(self.on, dict(zip(self.values, (float(v) for v in values))), self.default, self.bounds)

    def _eval(self, nodes, n):
        column = _column(nodes, self.on, repr(self))
        out = np.full(len(column), np.nan if self.default is None else self.default)
        grads = []
        for k, v in self.values.items():
            hit = column == k
            out[hit] = v
            grads.append(hit.astype(np.float64))
        if self.default is None and np.isnan(out).any():
            missing = sorted(set(column[np.isnan(out)].tolist()))
            raise InputError(f"{self!r}: node feature {self.on!r} takes the value(s) {missing[:5]} that values does "
                             f"not list; list them, or give a default")
        return out, grads

    def __repr__(self) -> str:
        default = "" if self.default is None else f", default={self.default!r}"
        return f"Assign({self.on!r}, {self.values!r}{default})"


class Adhoc(StartProbability):
    """``f(nodes)``: any function of the node feature table giving one value > 0 per node
    (GraphDot's ``Adhoc``; no hyperparameters)."""

    def __init__(self, f: Callable[[Mapping[str, Any]], Any], name: str | None = None):
        if not callable(f):
            raise InputError(f"Adhoc: f must be callable; got {f!r}")
        self.f = f
        self.name = name or getattr(f, "__name__", "f")

    def _eval(self, nodes, n):
        out = np.asarray(self.f(nodes), dtype=np.float64).reshape(-1)
        if len(out) != n:
            raise InputError(f"{self!r} gave {len(out)} values for {n} nodes")
        return out, []

    def __repr__(self) -> str:
        return f"Adhoc({self.name})"


class _Combined(StartProbability):
    def __init__(self, op: str, *parts: StartProbability):
        self.op = op
        flat: list[StartProbability] = []
        for p in parts:
            flat += list(p.parts) if isinstance(p, _Combined) and p.op == op else [p]
        self.parts = tuple(flat)

    @property
    def hyperparameters(self) -> list[Hyper]:
        return [h for p in self.parts for h in p.hyperparameters]

    @property
    def hyperparameter_names(self) -> list[str]:
        names = [[n for n in p.hyperparameter_names] for p in self.parts]
        flat = [n for ns in names for n in ns]
        return flat if len(set(flat)) == len(flat) else [f"{i}__{n}" for i, ns in enumerate(names) for n in ns]

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f for p in self.parts for f in p.features))

    def with_values(self, values):
        values, parts = list(values), []
        for p in self.parts:
            k = len(p.hyperparameters)
            parts.append(p.with_values(values[:k]))
            values = values[k:]
        return _Combined(self.op, *parts)

    def _eval(self, nodes, n):
        evals = [p._eval(nodes, n) for p in self.parts]
        if self.op == "+":
            return sum(v for v, _ in evals), [g for _, gs in evals for g in gs]
        value = np.prod([v for v, _ in evals], axis=0)
        grads = []
        for i, (_, gs) in enumerate(evals):
            rest = np.prod([v for j, (v, _) in enumerate(evals) if j != i], axis=0) if len(evals) > 1 else 1.0
            grads += [g * rest for g in gs]
        return value, grads

    def __repr__(self) -> str:
        return "(" + f" {self.op} ".join(map(repr, self.parts)) + ")"


_FORMS = ("uniform", "constant", "feature", "assign", "product", "sum")


def from_spec(spec: Any, where: str = "p") -> Any:
    """A start probability from its YAML form, or the older forms as they are (``"uniform"``, a
    number, a feature name); a :class:`StartProbability` is returned as it is."""
    if isinstance(spec, StartProbability) or isinstance(spec, str):
        return spec
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        return float(spec)
    if not isinstance(spec, Mapping) or len(spec) != 1:
        raise InputError(f"{where}: start probabilities are 'uniform', a number, a node feature name, or a mapping "
                         f"with one key ({', '.join(_FORMS)}), e.g. {{uniform: {{p: 1.0}}}}; got {spec!r}")
    (name, body), = spec.items()
    try:
        if name == "uniform":
            return Uniform(**keyword_body(body, ("p", "p_bounds"), (), shorthand=_plain))
        if name == "constant":
            return Constant(**keyword_body(body, ("p",), ("p",), shorthand=_plain))
        if name == "feature":
            return Feature(**keyword_body(body, ("on",), ("on",), shorthand=_plain))
        if name == "assign":
            return Assign(**keyword_body(body, ("on", "values", "default", "bounds"), ("on", "values")))
        if name in ("product", "sum"):
            if not isinstance(body, Sequence) or isinstance(body, str) or not body:
                raise InputError(f"expected a list of start probabilities; got {body!r}")
            parts = [_term(from_spec(b, f"{where}.{name}[{i}]")) for i, b in enumerate(body)]
            return _Combined("*" if name == "product" else "+", *parts)
    except InputError as exc:
        raise InputError(f"{where}.{name}: {exc}") from None
    raise InputError(f"{where}: unknown start probability {name!r}; known: {', '.join(_FORMS)}."
                     f"{did_you_mean(name, _FORMS)}")


def _plain(value: Any) -> bool:
    """``{uniform: 2.0}``, ``{feature: mass}``: a value that is not a mapping stands for the first key."""
    return not isinstance(value, Mapping)


def start_values(p: Any, nodes: Mapping[str, Any], n: int, gradient: bool = False) -> Any:
    """Per-node start probabilities for any accepted form of ``p`` (and, with ``gradient``, their
    derivatives as an ``n x hyperparameters`` array)."""
    if isinstance(p, StartProbability):
        value, grads = p._eval(nodes, n)
        value = np.asarray(value, dtype=np.float64)
        if not gradient:
            return value
        return value, (np.stack(grads, axis=1) if grads else np.zeros((n, 0)))
    if p == "uniform":
        value = np.ones(n)
    elif isinstance(p, float):
        value = np.full(n, p)
    else:
        value = np.asarray(nodes[p], dtype=np.float64)
    return (value, np.zeros((n, 0))) if gradient else value


start_from_spec = from_spec  # the plugin API's name for it (beside the base kernels' from_spec)
