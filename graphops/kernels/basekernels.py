"""Base kernels on node and edge features, for graph kernels that compare features pairwise
(the marginalized graph kernel's node and edge kernels).

A base kernel maps two feature records ``x``, ``y`` (each a mapping feature name -> value or
array) to a similarity. The names follow GraphDot:

* ``KroneckerDelta(h, on=...)``: 1 where the values are equal, ``h`` elsewhere;
* ``SquareExponential(length_scale, on=...)``: ``exp(-(x - y)**2 / (2 * length_scale**2))``;
* ``Constant(c)``: ``c`` everywhere;
* ``TensorProduct(label=KroneckerDelta(0.5), charge=SquareExponential(1.0))``: the product of
  per-feature kernels; ``Additive(...)``: their sum;
* ``k1 * k2``, ``k1 + k2``, and ``k.normalized`` (``k(x, y) / sqrt(k(x, x) * k(y, y))``);
* ``Product()`` with no kernels: GraphDot's quasi-kernel ``x * y`` of one scalar feature
  (:class:`QuasiProduct`; ``Product(k1, k2)`` is the product of kernels). Its values depend on
  the features', so a node or edge kernel using it is checked against the values of a call's
  graphs (:meth:`BaseKernel.check` with ``ranges``).

Hyperparameters are numbered in a fixed order (:attr:`BaseKernel.hyperparameters`), each with
bounds, and may be fixed (left out of gradients and of ``theta``). A kernel evaluates itself on
arrays (:meth:`BaseKernel.__call__`, :meth:`BaseKernel.gradient`) and writes itself as source
code (:meth:`BaseKernel.source`), Python for Numba or C for CUDA, reading its hyperparameters
from an array so that new values need no new compilation. YAML writes a kernel as a nested
mapping: ``{kronecker_delta: {h: 0.5, on: label}}`` (:func:`from_spec`).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping, Sequence

import numpy as np

from graphops.errors import InputError, did_you_mean

__all__ = ["BaseKernel", "Hyper", "KroneckerDelta", "SquareExponential", "RationalQuadratic", "Constant",
           "TensorProduct", "Additive", "Product", "QuasiProduct", "Sum", "Power", "Normalized", "Normalize",
           "named_values", "ordered_bounds"]


@dataclasses.dataclass(frozen=True)
class Hyper:
    """One hyperparameter: its kernel's name for it, value, bounds and whether it is fixed."""

    name: str
    value: float
    bounds: tuple[float, float]
    fixed: bool = False


def ordered_bounds(bounds: Any, param: str, shown: type = tuple) -> tuple[float, float] | None:
    """A hyperparameter's bounds as ``(low, high)``, or ``None`` for ``'fixed'``; a ``ValueError``
    naming ``param`` for anything else or a pair out of order, with the fix (the pair written as
    ``shown``, a tuple or a list, as the caller's users write it)."""
    if isinstance(bounds, str) and bounds == "fixed":
        return None
    try:
        lo, hi = (float(b) for b in bounds)
    except (TypeError, ValueError):
        pair = "(low, high)" if shown is tuple else "[low, high]"
        raise ValueError(f"{param} must be a pair {pair} or 'fixed'; got {bounds!r}") from None
    if lo > hi:
        given = list(bounds) if shown is list else bounds
        raise ValueError(f"{param}={given!r} has low {lo!r} above high {hi!r}; give them in order, "
                         f"{param}={shown((hi, lo))!r}, or {param}='fixed'")
    return lo, hi


def _bounds(name: str, value: float, bounds: Any, low: float, high: float, what: str,
            param: str | None = None) -> tuple[float, float]:
    """``bounds`` of hyperparameter ``name`` as (low, high), checked: a pair in order within
    ``[low, high]``, or 'fixed'. ``param``: the argument that holds them (``{name}_bounds``)."""
    param = param or f"{name}_bounds"
    try:
        pair = ordered_bounds(bounds, param)
    except ValueError as exc:
        raise InputError(f"{what}: {exc}") from None
    if pair is None:
        return (value, value)
    lo, hi = pair
    if not (low <= lo <= hi <= high):
        raise InputError(f"{what}: {param} {bounds!r} must satisfy {low} <= low <= high <= {high}")
    return (lo, hi)


def _number(name: str, value: Any, low: float, high: float, what: str, open_low: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(f"{what}: {name} must be a number; got {value!r}")
    value = float(value)
    if not (low < value <= high if open_low else low <= value <= high) or math.isnan(value):
        interval = f"({low}, {high}]" if open_low else f"[{low}, {high}]"
        raise InputError(f"{what}: {name}={value!r} is outside {interval}")
    if math.isinf(value):  # an unbounded interval still means a finite number: inf x 0 has no value
        raise InputError(f"{what}: {name}={value!r} must be a finite number")
    return value


class BaseKernel:
    """What every base kernel offers; see the module text."""

    # structure ------------------------------------------------------------------------
    @property
    def hyperparameters(self) -> list[Hyper]:
        """Every hyperparameter, in a fixed order (free and fixed)."""
        raise NotImplementedError

    @property
    def hyperparameter_names(self) -> list[str]:
        """A unique name for each of :attr:`hyperparameters`, in their order, as scikit-learn's
        nested parameters write them below the kernel's own name: ``h``; ``label__h`` inside a
        tensor product (the feature's name first); ``0__h``, ``1__h`` for the parts of a product or
        sum only where two parts would give the same name."""
        return [h.name for h in self.hyperparameters]

    def with_named(self, **values: float) -> "BaseKernel":
        """This kernel with some hyperparameters set by :attr:`hyperparameter_names` (unknown names
        are an error naming the known ones)."""
        return self.with_values(named_values(self, values))

    @property
    def features(self) -> tuple[str, ...]:
        """The feature names read, in first-use order."""
        raise NotImplementedError

    def with_values(self, values: Sequence[float]) -> "BaseKernel":
        """The same kernel with the hyperparameters set to ``values`` (all of them, in order)."""
        raise NotImplementedError

    @property
    def minmax(self) -> tuple[float, float]:
        """(lowest, highest) value the kernel can take (GraphDot's ``minmax``; a sequence kernel
        assumes non-empty sequences, which the data check enforces where it matters)."""
        raise NotImplementedError

    def interval(self, ranges: Mapping[str, tuple[float, float]] | None = None) -> tuple[float, float]:
        """(lowest, highest) value the kernel can take where each feature named in ``ranges`` lies
        within its (low, high), e.g. the values a call's graphs hold; without ``ranges``, or for
        a feature it does not name: :attr:`minmax`. Only a quasi-kernel narrows with the values."""
        return self.minmax

    def _range(self, ranges: Mapping[str, tuple[float, float]] | None = None) -> tuple[bool, float]:
        """(whether every value is > 0, an upper bound of the values), within ``ranges``."""
        lo, hi = self.interval(ranges)
        return lo > 0, hi

    @property
    def quasi(self) -> bool:
        """Whether a quasi-kernel (:class:`QuasiProduct`) is inside: the range then depends on the
        features' values, and :meth:`check` needs them."""
        return any(k.quasi for k in self._children())

    @property
    def sequence_features(self) -> tuple[str, ...]:
        """The features read as sequences (variable-length: :class:`Convolution`, :class:`DotProduct`)."""
        return tuple(dict.fromkeys(f for k in self._children() for f in k.sequence_features))

    @property
    def scalar_features(self) -> tuple[str, ...]:
        """The features read as single numbers (by every kernel but the sequence kernels)."""
        return tuple(dict.fromkeys(f for k in self._children() for f in k.scalar_features))

    def _children(self) -> tuple["BaseKernel", ...]:
        return ()

    def helpers(self, lang: str) -> dict[str, str]:
        """Functions the kernel's :meth:`source` calls (by name), to be defined before it: a
        sequence kernel's loops (Numba functions for 'python', device templates for 'c')."""
        out: dict[str, str] = {}
        for k in self._children():
            out.update(k.helpers(lang))
        return out

    # evaluation -------------------------------------------------------------------------
    def __call__(self, x: Any, y: Any) -> Any:
        """k(x, y) elementwise over arrays (NumPy broadcasting); ``x``, ``y`` are records (feature
        name -> value), or plain values for a kernel that names no feature (GraphDot's
        ``KroneckerDelta(0.5)(1, 2)``; a sequence for a sequence kernel)."""
        kernel, x, y = self._bound(x, y)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # IEEE: inf, nan where they arise;
            return kernel._eval(x, y)[0]  # every _eval runs under this (its guards pick the values that count)

    def gradient(self, x: Any, y: Any) -> list[Any]:
        """dk/d(hyperparameter) for every hyperparameter, in order (raw, not log, scale)."""
        kernel, x, y = self._bound(x, y)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return kernel._eval(x, y)[1]

    def _bound(self, x: Any, y: Any) -> tuple["BaseKernel", Mapping[str, Any], Mapping[str, Any]]:
        """(kernel, record, record): plain values become the records of a feature named '_'."""
        if isinstance(x, Mapping) and isinstance(y, Mapping):
            return self, x, y
        if self.features:
            raise InputError(f"{self!r} reads the features {', '.join(map(repr, self.features))}: call it on "
                             f"records (mappings of feature name to value), not on {x!r}, {y!r}")
        return self._on("_"), {"_": x}, {"_": y}

    def _eval(self, x: Mapping[str, Any], y: Mapping[str, Any]) -> tuple[Any, list[Any]]:
        raise NotImplementedError

    # code ---------------------------------------------------------------------------------
    def source(self, lang: str, x: Mapping[str, str], y: Mapping[str, str], p: str = "p",
               first: int = 0) -> tuple[str, list[str]]:
        """(value expression, derivative expressions) in ``lang`` ('python' or 'c'): features
        are the variables ``x[name]``/``y[name]``, hyperparameter ``i`` is ``{p}[first + i]``."""
        raise NotImplementedError

    def self_source(self, lang: str, p: str = "p", first: int = 0) -> tuple[str, list[str]] | None:
        """(value, derivatives) of ``k(x, x)`` as code when it does not depend on ``x`` (1 for
        KroneckerDelta, SquareExponential, RationalQuadratic; ``c`` for Constant; their sums and
        products), else None. Normalization uses it to skip evaluating ``k(x, x)`` and ``k(y, y)``."""
        return None

    def row_source(self, lang: str, names: Sequence[str], widths: Mapping[str, int] | None = None
                   ) -> tuple[str, list[str]]:
        """:meth:`source` for two feature rows ``x``, ``y`` holding the features ``names`` in
        that order and hyperparameters in ``p``. A scalar feature is one entry; a sequence
        feature (``widths[name]`` entries: its length, then its values padded with zeros) is passed
        to the kernel as the row from its length on (``x + c`` in C, ``x[c:]`` in Python)."""
        names = tuple(names)
        missing = [f for f in self.features if f not in names]
        if missing:
            raise InputError(f"{self!r} reads {', '.join(map(repr, missing))}, not among the features "
                             f"{', '.join(map(repr, names)) or '(none)'}")
        x, y, at = {}, {}, 0
        for f in names:
            if widths and f in widths:
                x[f], y[f] = (f"(x + {at})", f"(y + {at})") if lang == "c" else (f"x[{at}:]", f"y[{at}:]")
                at += widths[f]
            else:
                x[f], y[f] = f"x[{at}]", f"y[{at}]"
                at += 1
        return self.source(lang, x, y)

    def unnamed(self) -> "BaseKernel | None":
        """The first elementary kernel inside that needs a feature but names none."""
        return None

    # composition ---------------------------------------------------------------------------
    def __mul__(self, other: Any) -> "BaseKernel":
        return Product(self, _kernel(other, "*"))

    def __rmul__(self, other: Any) -> "BaseKernel":
        return Product(_kernel(other, "*"), self)

    def __add__(self, other: Any) -> "BaseKernel":
        return Sum(self, _kernel(other, "+"))

    def __radd__(self, other: Any) -> "BaseKernel":
        return Sum(_kernel(other, "+"), self)

    def __pow__(self, exponent: Any) -> "BaseKernel":
        """``k ** c``: a number (a fixed exponent) or a :class:`Constant` (its hyperparameter)."""
        return Power(self, exponent)

    def _on(self, on: str) -> "BaseKernel":
        """This kernel reading feature ``on`` wherever it reads one (set by TensorProduct/Additive)."""
        return self

    def _check_on(self, on: str) -> None:
        """A kernel naming its feature may sit only under that feature."""
        if getattr(self, "on", None) is not None and self.on != on:
            raise InputError(f"{self!r} sits under the feature {on!r} but names {self.on!r}; name one")

    @property
    def normalized(self) -> "BaseKernel":
        """``k(x, y) / sqrt(k(x, x) k(y, y))`` (normalizing twice changes nothing)."""
        return Normalized(self)

    # checks -----------------------------------------------------------------------------------
    def check(self, role: str, limit: float = 1.0, ranges: Mapping[str, tuple[float, float]] | None = None) -> None:
        """A node kernel must be > 0 (the system divides by it) and an edge kernel >= 0; an edge
        kernel at most 1 and a node kernel at most ``limit`` keep the marginalized kernel's system
        diagonally dominant, so that it converges (mg_kernel passes ``limit = 1 / (1 - q)**2``:
        ``D/V`` then stays above the row sums of ``A x A' o E``). Say which bound fails and the fix.
        A kernel with a quasi-kernel inside is checked only with ``ranges`` (feature -> (low,
        high) over the graphs of a call), where its values are known."""
        if ranges is None and self.quasi:
            return
        positive, upper = self._range(ranges)
        low = self.interval(ranges)[0]
        node = role == "node_kernel"
        bound = limit if node else 1.0
        here = "" if ranges is None else " on these graphs (" + ", ".join(
            f"{f} in [{lo:g}, {hi:g}]" for f, (lo, hi) in ranges.items()) + ")"
        where = (f"(0, {bound:.6g}] (1/(1-q)^2 at this q: the system's diagonal then dominates)" if node and
                 bound != 1.0 else "(0, 1]" if node else "[0, 1]")
        if upper > bound + 1e-12:
            raise InputError(f"{self!r} can reach {upper:g}{here}, above {bound:.6g}; {'a node' if node else 'an edge'}"
                             f" kernel must stay in {where} (use .normalized, or smaller constants)")
        if node and not positive:
            raise InputError(f"{self!r} can be {min(low, 0.0):g}{here}; a node kernel must stay in (0, 1] (e.g. "
                             f"KroneckerDelta(h) with h > 0)")
        if low < 0:
            raise InputError(f"{self!r} can be {low:g}{here}; an edge kernel must stay in [0, 1] (e.g. a quasi-kernel "
                             f"Product() on a feature of values >= 0)")

    @property
    def theta(self) -> np.ndarray:
        """Log of the free hyperparameters (scikit-learn's convention)."""
        return np.log([h.value for h in self.hyperparameters if not h.fixed])

    def _bare(self) -> str:
        """The repr without the feature a TensorProduct/Additive binds."""
        return repr(self)

    def __eq__(self, other: Any) -> bool:
        return type(self) is type(other) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))


def named_values(owner: Any, values: Mapping[str, float]) -> list[float]:
    """All of ``owner``'s hyperparameter values in order, those named in ``values`` (by
    ``hyperparameter_names``) replaced; an unknown name is an error naming the known ones."""
    names = owner.hyperparameter_names
    unknown = [k for k in values if k not in names]
    if unknown:
        raise InputError(f"{owner!r} has no hyperparameter {unknown[0]!r}; its hyperparameters: "
                         f"{', '.join(names) or '(none)'}.{did_you_mean(unknown[0], names)}")
    return [float(values.get(n, h.value)) for n, h in zip(names, owner.hyperparameters)]


def _kernel(value: Any, op: str) -> BaseKernel:
    """A kernel, or a number as a fixed :class:`Constant` (GraphDot's ``k + 0.01``, ``2 * k``)."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return Constant(float(value), c_bounds="fixed")
    if not isinstance(value, BaseKernel):
        raise InputError(f"base kernels combine with {op} only with base kernels or numbers; got {value!r}")
    return value


def _lang(lang: str) -> str:
    if lang not in ("python", "c"):
        raise ValueError(f"lang must be 'python' or 'c'; got {lang!r}")
    return lang


def _name(on: Any, what: str) -> str | None:
    if on is not None and (not isinstance(on, str) or not on):
        raise InputError(f"{what}: on must be a feature name (str); got {on!r}")
    return on


class _OneFeature(BaseKernel):
    """A kernel of one scalar feature, ``on`` (or of none: ``needs_feature`` False)."""

    on: str | None = None
    needs_feature = True

    @property
    def features(self) -> tuple[str, ...]:
        return () if self.on is None or not self.needs_feature else (self.on,)

    @property
    def scalar_features(self) -> tuple[str, ...]:
        return self.features


class _Elementary(_OneFeature):
    """A kernel of one feature (or none) and one hyperparameter."""

    param = ""
    low, high, open_low = 0.0, 1.0, False
    bound_low, bound_high = 0.0, 1.0

    def __init__(self, value: float, on: str | None = None, bounds: Any = None):
        what = type(self).__name__
        self.value = _number(self.param, value, self.low, self.high, what, self.open_low)
        self.on = _name(on, what)
        self.bounds = _bounds(self.param, self.value, bounds if bounds is not None else self.default_bounds(),
                              self.bound_low, self.bound_high, what)
        if not self.bounds[0] <= self.value <= self.bounds[1]:
            raise InputError(f"{what}: {self.param}={self.value} lies outside its bounds {self.bounds}")

    def default_bounds(self) -> tuple[float, float]:
        return (self.bound_low, self.bound_high)

    @property
    def fixed(self) -> bool:
        return self.bounds[0] == self.bounds[1]

    @property
    def hyperparameters(self) -> list[Hyper]:
        return [Hyper(self.param, self.value, self.bounds, self.fixed)]

    def with_values(self, values: Sequence[float]) -> "BaseKernel":
        (value,) = values
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__, value=float(value))
        return clone

    def unnamed(self) -> BaseKernel | None:
        return self if self.needs_feature and self.on is None else None

    def _named(self) -> str:
        if self.on is None:
            raise InputError(f"{self!r} names no feature: write {type(self).__name__}(..., on='label') or use it "
                             f"inside TensorProduct(label=...)")
        return self.on

    def _feature(self, rec: Mapping[str, Any]) -> Any:
        try:
            return rec[self._named()]
        except KeyError:
            raise InputError(f"{self!r} reads the feature {self.on!r}, which is not there (features: "
                             f"{', '.join(map(repr, rec)) or 'none'})") from None

    def _vars(self, x: Mapping[str, str], y: Mapping[str, str]) -> tuple[str, str]:
        return x[self._named()], y[self._named()]

    def __repr__(self) -> str:
        on = f", on={self.on!r}" if self.on is not None and self.needs_feature else ""
        return f"{type(self).__name__}({self.value!r}{on}{self._fixed()})"

    def _fixed(self) -> str:
        return f", {self.param}_bounds='fixed'" if self.fixed else ""

    def _bare(self) -> str:
        return f"{type(self).__name__}({self.value!r}{self._fixed()})"

    def _on(self, on: str) -> "_Elementary":
        """This kernel reading feature ``on`` (set by TensorProduct/Additive)."""
        self._check_on(on)
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__, on=on)
        return clone


class KroneckerDelta(_Elementary):
    """1 where the two values are equal, ``h`` elsewhere (``h`` in [0, 1])."""

    param = "h"

    def self_source(self, lang, p="p", first=0):
        return "1.0", ["0.0"]

    def default_bounds(self) -> tuple[float, float]:
        return (min(1e-3, self.value), 1.0)

    def __init__(self, h: float, on: str | None = None, h_bounds: Any = None):
        super().__init__(h, on, h_bounds)

    @property
    def minmax(self) -> tuple[float, float]:
        return self.value, 1.0

    def _eval(self, x, y):
        eq = np.asarray(self._feature(x) == self._feature(y))
        return np.where(eq, 1.0, self.value), [np.where(eq, 0.0, 1.0)]

    def source(self, lang, x, y, p="p", first=0):
        a, b = self._vars(x, y)
        h = f"{p}[{first}]"
        if _lang(lang) == "c":
            return f"({a} == {b} ? 1.0 : {h})", [f"({a} == {b} ? 0.0 : 1.0)"]
        return f"(1.0 if {a} == {b} else {h})", [f"(0.0 if {a} == {b} else 1.0)"]


class _Similarity(BaseKernel):
    """A similarity of one float feature: 1 for equal values, falling towards 0 (never reaching it
    at finite values) with their distance (SquareExponential, RationalQuadratic)."""

    @property
    def minmax(self) -> tuple[float, float]:
        return 0.0, 1.0

    def _range(self, ranges: Mapping[str, tuple[float, float]] | None = None) -> tuple[bool, float]:
        return True, 1.0  # > 0 at every finite value

    def self_source(self, lang, p="p", first=0):
        return "1.0", ["0.0"] * len(self.hyperparameters)


class SquareExponential(_Similarity, _Elementary):
    """``exp(-(x - y)**2 / (2 * length_scale**2))`` on a float feature."""

    param = "length_scale"
    high, open_low = math.inf, True
    bound_low, bound_high = 0.0, math.inf

    def default_bounds(self) -> tuple[float, float]:
        return (min(1e-2, self.value), max(1e2, self.value))

    def __init__(self, length_scale: float, on: str | None = None, length_scale_bounds: Any = None):
        super().__init__(length_scale, on, length_scale_bounds)

    def _eval(self, x, y):
        d = np.asarray(self._feature(x), float) - np.asarray(self._feature(y), float)
        ell = np.float64(self.value)  # NumPy arithmetic: a huge length scale gives inf, not OverflowError
        k = np.exp(-d * d / (2 * ell * ell))
        grad = np.where(np.isfinite(d), k * d * d, 0.0) / ell ** 3  # -> 0 as |d| -> inf
        return k, [grad[()] if grad.ndim == 0 else grad]

    def source(self, lang, x, y, p="p", first=0):
        a, b = self._vars(x, y)
        ell = f"{p}[{first}]"
        d2 = f"(({a}) - ({b})) * (({a}) - ({b}))"
        exp = "exp" if _lang(lang) == "c" else "math.exp"
        k = f"{exp}(-{d2} / (2.0 * {ell} * {ell}))"
        return k, [f"({k} * {d2} / ({ell} * {ell} * {ell}))"]


class Constant(_Elementary):
    """``c`` everywhere (``c >= 0``; a node or edge kernel as a whole must still stay in its range,
    e.g. ``SquareExponential(1.0) + Constant(0.01)`` under ``.normalized``)."""

    param = "c"
    needs_feature = False

    def self_source(self, lang, p="p", first=0):
        return f"{p}[{first}]", ["1.0"]
    high = math.inf
    bound_high = math.inf

    def default_bounds(self) -> tuple[float, float]:
        return (min(1e-3, self.value), max(1.0, self.value))

    def __init__(self, c: float, c_bounds: Any = None):
        super().__init__(c, None, c_bounds)

    def _on(self, on: str) -> "_Elementary":
        return self

    @property
    def minmax(self) -> tuple[float, float]:
        return self.value, self.value

    def _eval(self, x, y):
        return self.value, [1.0]  # one value, broadcast by what it is combined with

    def source(self, lang, x, y, p="p", first=0):
        return f"{p}[{first}]", ["1.0"]


class _Composite(BaseKernel):
    """A product or sum of kernels (the first's hyperparameters first)."""

    symbol = ""

    def __init__(self, *parts: BaseKernel):
        if not parts:
            raise InputError(f"{type(self).__name__} needs at least one kernel")
        self.parts = tuple(_kernel(k, self.symbol) for k in parts)
        both = [f for f in self.scalar_features if f in self.sequence_features]
        if both:
            raise InputError(f"{self!r} reads the feature {both[0]!r} both as a number and as a sequence "
                             f"(Convolution, DotProduct); a feature is one or the other")

    @property
    def hyperparameters(self) -> list[Hyper]:
        return [h for k in self.parts for h in k.hyperparameters]

    @property
    def hyperparameter_names(self) -> list[str]:
        parts = [k.hyperparameter_names for k in self.parts]
        flat = [n for names in parts for n in names]
        if len(set(flat)) == len(flat):
            return flat
        return [f"{i}__{n}" for i, names in enumerate(parts) for n in names]

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f for k in self.parts for f in k.features))

    def with_values(self, values: Sequence[float]) -> "BaseKernel":
        values, parts = list(values), []
        for k in self.parts:
            n = len(k.hyperparameters)
            parts.append(k.with_values(values[:n]))
            values = values[n:]
        return self._rebuild(parts)

    def _rebuild(self, parts: list[BaseKernel]) -> "BaseKernel":
        return type(self)(*parts)

    def _on(self, on: str) -> "BaseKernel":
        return self._rebuild([k._on(on) for k in self.parts])

    def _eval(self, x, y):
        evals = [k._eval(x, y) for k in self.parts]
        if self.symbol == "+":
            return sum(v for v, _ in evals), [g for _, gs in evals for g in gs]
        value = np.prod(np.broadcast_arrays(*[v for v, _ in evals]), axis=0) if len(evals) > 1 else evals[0][0]
        grads = []
        for i, (_, gs) in enumerate(evals):
            others = [v for j, (v, _) in enumerate(evals) if j != i]
            rest = np.prod(np.broadcast_arrays(*others), axis=0) if others else 1.0
            grads += [g * rest for g in gs]
        return value, grads

    def source(self, lang, x, y, p="p", first=0):
        codes, at = [], first
        for k in self.parts:
            codes.append(k.source(lang, x, y, p, at))
            at += len(k.hyperparameters)
        return self._combine(codes)

    def unnamed(self) -> BaseKernel | None:
        return next((u for u in (k.unnamed() for k in self.parts) if u is not None), None)

    @property
    def minmax(self) -> tuple[float, float]:
        return self.interval()

    def interval(self, ranges: Mapping[str, tuple[float, float]] | None = None) -> tuple[float, float]:
        spans = [k.interval(ranges) for k in self.parts]
        if self.symbol == "+":
            return sum(lo for lo, _ in spans), sum(hi for _, hi in spans)
        return _product_span(spans)

    def _children(self) -> tuple[BaseKernel, ...]:
        return self.parts

    def self_source(self, lang, p="p", first=0):
        codes, at = [], first
        for k in self.parts:
            code = k.self_source(lang, p, at)
            if code is None:
                return None
            codes.append(code)
            at += len(k.hyperparameters)
        return self._combine(codes)

    def _combine(self, codes: list[tuple[str, list[str]]]) -> tuple[str, list[str]]:
        """The parts' (value, derivatives) code summed or multiplied (factors of 1.0 and terms
        of 0.0 left out, so constant self-similarities fold away)."""
        if self.symbol == "+":
            return "(" + " + ".join(v for v, _ in codes) + ")", [g for _, gs in codes for g in gs]
        factors = [v for v, _ in codes if v != "1.0"]
        grads = []
        for i, (_, gs) in enumerate(codes):
            rest = " * ".join(v for j, (v, _) in enumerate(codes) if j != i and v != "1.0")
            grads += ["0.0" if g == "0.0" else f"({g} * {rest})" if rest else g for g in gs]
        return ("(" + " * ".join(factors) + ")" if factors else "1.0"), grads

    def _range(self, ranges: Mapping[str, tuple[float, float]] | None = None) -> tuple[bool, float]:
        if any(k.interval(ranges)[0] < 0 for k in self.parts):  # a part that can be negative: the bounds
            lo, hi = self.interval(ranges)
            return lo > 0, hi
        parts = [k._range(ranges) for k in self.parts]
        if self.symbol == "+":
            return any(pos for pos, _ in parts), sum(up for _, up in parts)
        return all(pos for pos, _ in parts), math.prod(up for _, up in parts)

    def __repr__(self) -> str:
        return "(" + f" {self.symbol} ".join(map(repr, self.parts)) + ")"

    def _bare(self) -> str:
        return "(" + f" {self.symbol} ".join(k._bare() for k in self.parts) + ")"


def _times(a: float, b: float) -> float:
    """``a * b`` of two bounds, 0 where either is 0 (a value that is 0 times one without bound)."""
    return 0.0 if a == 0 or b == 0 else a * b


def _product_span(spans: list[tuple[float, float]]) -> tuple[float, float]:
    """(low, high) of a product of factors each within its (low, high), signs and all."""
    lo, hi = 1.0, 1.0
    for a, b in spans:
        corners = [_times(x, y) for x in (lo, hi) for y in (a, b)]
        lo, hi = min(corners), max(corners)
    return lo, hi


class Product(_Composite):
    """``k1 * k2 * ...``; ``Product()`` with no kernels is GraphDot's quasi-kernel ``x * y``
    (:class:`QuasiProduct`, ``Product(on=...)`` naming its feature)."""

    symbol = "*"

    def __new__(cls, *parts: Any, **named: Any) -> "BaseKernel":
        if cls is Product and not parts:
            unknown = sorted(set(named) - {"on"})
            if unknown:
                raise InputError(f"Product() (the quasi-kernel x * y) takes only on=; got {', '.join(unknown)}")
            return QuasiProduct(named.get("on"))
        return super().__new__(cls)

    def __init__(self, *parts: BaseKernel, **named: Any):
        if named:
            raise InputError(f"Product(k1, k2, ...) multiplies kernels; on= names the feature of the quasi-kernel "
                             f"Product(on=...) alone, without kernels; got {', '.join(sorted(named))}")
        super().__init__(*parts)

    def __getnewargs_ex__(self) -> tuple[tuple, dict]:
        """copy and pickle rebuild a product of kernels from its kernels (not the quasi-kernel)."""
        return tuple(self.parts), {}


class QuasiProduct(_OneFeature):
    """GraphDot's ``Product()``: ``x * y`` of one scalar feature, no hyperparameters (so no
    derivatives). A quasi-kernel: its values are those of the features, maybe negative or above
    1, so a node or edge kernel using it (``TensorProduct(w=Product(), label=KroneckerDelta(0.5))``)
    is checked against the values of the graphs it is computed on. Written ``Product()`` (GraphDot's
    repr), ``{product: {}}`` or ``{product: {on: w}}`` in YAML."""

    def __init__(self, on: str | None = None):
        self.on = _name(on, "Product")

    hyperparameters = property(lambda self: [])

    @property
    def quasi(self) -> bool:
        return True

    def with_values(self, values: Sequence[float]) -> "BaseKernel":
        if len(values):
            raise InputError("Product() (the quasi-kernel x * y) has no hyperparameters")
        return self

    def unnamed(self) -> BaseKernel | None:
        return self if self.on is None else None

    def _on(self, on: str) -> "BaseKernel":
        self._check_on(on)
        return QuasiProduct(on)

    @property
    def minmax(self) -> tuple[float, float]:
        return -math.inf, math.inf  # GraphDot: (None, None), unknown without the values

    def interval(self, ranges: Mapping[str, tuple[float, float]] | None = None) -> tuple[float, float]:
        if not ranges or self.on not in ranges:
            return self.minmax
        a, b = ranges[self.on]
        corners = (a * a, a * b, b * b)
        return min(corners), max(corners)

    def _eval(self, x, y):
        if self.on is None:
            raise InputError("Product() names no feature: write Product(on='w') or use it inside TensorProduct(w=...)")
        return np.asarray(x[self.on], float) * np.asarray(y[self.on], float), []

    def source(self, lang, x, y, p="p", first=0):
        _lang(lang)
        if self.on is None:
            raise InputError(f"{self!r} names no feature")
        return f"(({x[self.on]}) * ({y[self.on]}))", []

    def __repr__(self) -> str:
        return "Product()" if self.on is None else f"Product(on={self.on!r})"

    def _bare(self) -> str:
        return "Product()"


class Sum(_Composite):
    """``k1 + k2 + ...``."""

    symbol = "+"


class _PerFeature(_Composite):
    """Kernels keyed by the feature each one reads."""

    def __init__(self, **kernels: BaseKernel):
        if not kernels:
            raise InputError(f"{type(self).__name__} needs at least one feature=kernel")
        self.names = tuple(kernels)
        parts = []
        for name, k in kernels.items():  # any kernel: elementary or composite, of that feature
            parts.append(_kernel(k, self.symbol)._on(name))
        super().__init__(*parts)

    def _rebuild(self, parts: list[BaseKernel]) -> "BaseKernel":
        return type(self)(**dict(zip(self.names, parts)))

    @property
    def hyperparameter_names(self) -> list[str]:
        return [f"{f}__{n}" for f, k in zip(self.names, self.parts) for n in k.hyperparameter_names]

    def _on(self, on: str) -> "BaseKernel":
        raise InputError(f"{self!r} names its own features; it cannot sit under the feature {on!r}")

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={k._bare()}" for n, k in zip(self.names, self.parts))
        return f"{type(self).__name__}({inner})"


class TensorProduct(_PerFeature, Product):
    """The product of per-feature kernels: ``TensorProduct(label=KroneckerDelta(0.5), ...)``."""


class Additive(_PerFeature, Sum):
    """The sum of per-feature kernels (normalize it to keep values in [0, 1])."""


class Power(BaseKernel):
    """``k ** c`` (GraphDot's exponentiation): ``c`` a number (a fixed exponent) or a
    :class:`Constant` whose value is a hyperparameter. ``d(k^c)/dθ = c k^(c-1) dk/dθ`` for the
    base's hyperparameters, ``k^c log k`` for the exponent's (0 where k is 0)."""

    def __init__(self, kernel: BaseKernel, exponent: Any):
        self.kernel = _kernel(kernel, "**")
        if isinstance(exponent, Constant):
            self.exponent = exponent
        elif isinstance(exponent, (int, float, np.integer, np.floating)) and not isinstance(exponent, bool):
            self.exponent = Constant(float(exponent), c_bounds="fixed")
        else:
            raise InputError(f"the exponent of {kernel!r} ** ... must be a number or a Constant; got {exponent!r}")
        if not self.exponent.value > 0:
            raise InputError(f"the exponent of {kernel!r} ** ... must be > 0; got {self.exponent.value}")

    @property
    def hyperparameters(self) -> list[Hyper]:
        return [*self.kernel.hyperparameters, *self.exponent.hyperparameters]

    @property
    def hyperparameter_names(self) -> list[str]:
        names = self.kernel.hyperparameter_names
        return [*names, "exponent__c" if "c" in names else "c"]

    @property
    def features(self) -> tuple[str, ...]:
        return self.kernel.features

    def with_values(self, values):
        values = list(values)
        n = len(self.kernel.hyperparameters)
        return Power(self.kernel.with_values(values[:n]), self.exponent.with_values(values[n:]))

    def unnamed(self) -> BaseKernel | None:
        return self.kernel.unnamed()

    def _on(self, on: str) -> "BaseKernel":
        return Power(self.kernel._on(on), self.exponent)

    @property
    def minmax(self) -> tuple[float, float]:
        return self.interval()

    def interval(self, ranges: Mapping[str, tuple[float, float]] | None = None) -> tuple[float, float]:
        c = self.exponent.value

        def power(x: float) -> float:  # Python floats raise OverflowError where the value is inf
            try:
                return x ** c
            except OverflowError:
                return math.inf

        lo, hi = self.kernel.interval(ranges)
        if lo < 0:  # a negative base to a real power: no bound to state
            return -math.inf, math.inf
        return power(lo), power(hi)

    def _children(self) -> tuple[BaseKernel, ...]:
        return (self.kernel,)

    def _range(self, ranges: Mapping[str, tuple[float, float]] | None = None) -> tuple[bool, float]:
        return self.kernel._range(ranges)[0], self.interval(ranges)[1]

    def _eval(self, x, y):
        k, grads = self.kernel._eval(x, y)
        c = self.exponent.value
        value = np.power(k, c)
        dc = np.where(np.asarray(k) > 0, value * np.log(np.where(np.asarray(k) > 0, k, 1.0)), 0.0)
        return value, [c * np.power(k, c - 1) * g for g in grads] + [dc]

    def source(self, lang, x, y, p="p", first=0):
        k, grads = self.kernel.source(lang, x, y, p, first)
        c = f"{p}[{first + len(self.kernel.hyperparameters)}]"
        if _lang(lang) == "c":
            value = f"pow({k}, {c})"
            dc = f"(({k}) > 0 ? pow({k}, {c}) * log({k}) : 0.0)"
            return value, [f"({c} * pow({k}, {c} - 1.0) * ({g}))" for g in grads] + [dc]
        value = f"(({k}) ** {c})"
        dc = f"((({k}) ** {c}) * math.log({k}) if ({k}) > 0 else 0.0)"
        return value, [f"({c} * ({k}) ** ({c} - 1.0) * ({g}))" for g in grads] + [dc]

    def __repr__(self) -> str:
        return f"({self.kernel!r} ** {self._exp()})"

    def _bare(self) -> str:
        return f"({self.kernel._bare()} ** {self._exp()})"

    def _exp(self) -> str:
        return repr(self.exponent.value) if self.exponent.fixed else repr(self.exponent)


class RationalQuadratic(_Similarity, _OneFeature):
    """``(1 + (x - y)**2 / (2 alpha length_scale**2)) ** -alpha`` on a float feature (GraphDot's
    RationalQuadratic: many square exponentials of different length scales; SquareExponential as
    ``alpha`` grows)."""

    def __init__(self, length_scale: float, alpha: float, on: str | None = None, length_scale_bounds: Any = None,
                 alpha_bounds: Any = None):
        what = "RationalQuadratic"
        self.length_scale = _number("length_scale", length_scale, 0.0, math.inf, what, open_low=True)
        self.alpha = _number("alpha", alpha, 0.0, math.inf, what, open_low=True)
        self.on = _name(on, what)
        self.length_scale_bounds = _bounds("length_scale", self.length_scale, length_scale_bounds if
                                           length_scale_bounds is not None else
                                           (min(1e-2, self.length_scale), max(1e2, self.length_scale)),
                                           0.0, math.inf, what)
        self.alpha_bounds = _bounds("alpha", self.alpha, alpha_bounds if alpha_bounds is not None else
                                    (min(1e-3, self.alpha), max(1e3, self.alpha)), 0.0, math.inf, what)

    @property
    def hyperparameters(self) -> list[Hyper]:
        return [Hyper("length_scale", self.length_scale, self.length_scale_bounds,
                      self.length_scale_bounds[0] == self.length_scale_bounds[1]),
                Hyper("alpha", self.alpha, self.alpha_bounds, self.alpha_bounds[0] == self.alpha_bounds[1])]

    def with_values(self, values):
        ell, alpha = values
        return RationalQuadratic(float(ell), float(alpha), self.on, "fixed" if self.hyperparameters[0].fixed
                                 else self.length_scale_bounds, "fixed" if self.hyperparameters[1].fixed
                                 else self.alpha_bounds)

    def unnamed(self) -> BaseKernel | None:
        return self if self.on is None else None

    def _on(self, on: str) -> "BaseKernel":
        self._check_on(on)
        return RationalQuadratic(self.length_scale, self.alpha, on, self.length_scale_bounds, self.alpha_bounds)

    def _eval(self, x, y):
        name = self.on
        if name is None:
            raise InputError(f"{self!r} names no feature: write RationalQuadratic(..., on='x') or use it inside "
                             f"TensorProduct(x=...)")
        d = np.asarray(x[name], float) - np.asarray(y[name], float)
        ell, a = np.float64(self.length_scale), np.float64(self.alpha)
        r = d * d / (2 * a * ell * ell)
        u = 1 + r
        k = u ** -a
        finite = np.isfinite(d)  # the derivatives -> 0 as |d| -> inf
        grads = [np.where(finite, k * d * d / (ell ** 3 * u), 0.0), np.where(finite, k * (r / u - np.log(u)), 0.0)]
        return k, [g[()] if g.ndim == 0 else g for g in grads]

    def source(self, lang, x, y, p="p", first=0):
        if self.on is None:
            raise InputError(f"{self!r} names no feature")
        a_, b_ = x[self.on], y[self.on]
        ell, alpha = f"{p}[{first}]", f"{p}[{first + 1}]"
        d2 = f"(({a_}) - ({b_})) * (({a_}) - ({b_}))"
        r = f"({d2} / (2.0 * {alpha} * {ell} * {ell}))"
        u = f"(1.0 + {r})"
        if _lang(lang) == "c":
            k = f"pow({u}, -{alpha})"
            return k, [f"({k} * {d2} / ({ell} * {ell} * {ell} * {u}))", f"({k} * ({r} / {u} - log({u})))"]
        k = f"({u} ** -{alpha})"
        return k, [f"({k} * {d2} / ({ell} * {ell} * {ell} * {u}))", f"({k} * ({r} / {u} - math.log({u})))"]

    def __repr__(self) -> str:
        on = f", on={self.on!r}" if self.on is not None else ""
        return f"RationalQuadratic({self.length_scale!r}, {self.alpha!r}{on})"

    def _bare(self) -> str:
        return f"RationalQuadratic({self.length_scale!r}, {self.alpha!r})"


class _Wrapping(BaseKernel):
    """A kernel made of one other (``self.kernel``), whose hyperparameters it has."""

    kernel: BaseKernel

    @property
    def hyperparameters(self) -> list[Hyper]:
        return self.kernel.hyperparameters

    @property
    def hyperparameter_names(self) -> list[str]:
        return self.kernel.hyperparameter_names

    def _children(self) -> tuple[BaseKernel, ...]:
        return (self.kernel,)

    def unnamed(self) -> BaseKernel | None:
        return self.kernel.unnamed()


class Normalized(_Wrapping):
    """``k(x, y) / sqrt(k(x, x) * k(y, y))``."""

    def __new__(cls, kernel: BaseKernel | None = None):
        if isinstance(kernel, Normalized):  # normalizing again changes nothing (GraphDot's Normalize)
            return kernel
        return super().__new__(cls)

    def __init__(self, kernel: BaseKernel):
        if isinstance(kernel, Normalized):
            return
        self.kernel = _kernel(kernel, "normalized")

    @property
    def features(self) -> tuple[str, ...]:
        return self.kernel.features

    def with_values(self, values):
        return Normalized(self.kernel.with_values(values))

    @property
    def minmax(self) -> tuple[float, float]:
        return self.interval()

    def interval(self, ranges: Mapping[str, tuple[float, float]] | None = None) -> tuple[float, float]:
        lo, hi = self.kernel.interval(ranges)
        if lo < 0:  # k(x, y) / sqrt(k(x, x) k(y, y)) of a kernel that can be negative: in [-1, 1]
            return -1.0, 1.0
        return (lo / hi if lo > 0 and math.isfinite(hi) else 0.0), 1.0

    def _range(self, ranges: Mapping[str, tuple[float, float]] | None = None) -> tuple[bool, float]:
        return self.kernel._range(ranges)[0], self.interval(ranges)[1]

    def _eval(self, x, y):
        kxy, gxy = self.kernel._eval(x, y)
        kxx, gxx = self.kernel._eval(x, x)
        kyy, gyy = self.kernel._eval(y, y)
        ok = np.asarray(kxx * kyy) > 0  # GraphDot: 0 where k(x, x) k(y, y) is 0 (e.g. an empty sequence)
        root = np.sqrt(np.where(ok, kxx * kyy, 1.0))
        value = np.where(ok, kxy / root, 0.0)
        grads = [np.where(ok, g / root - 0.5 * value * (gx / np.where(ok, kxx, 1.0) + gy / np.where(ok, kyy, 1.0)), 0.0)
                 for g, gx, gy in zip(gxy, gxx, gyy)]
        scalar = lambda a: a[()] if np.ndim(a) == 0 else a  # noqa: E731
        return scalar(value), [scalar(g) for g in grads]

    def self_source(self, lang, p="p", first=0):
        return "1.0", ["0.0"] * len(self.hyperparameters)

    def source(self, lang, x, y, p="p", first=0):
        kxy, gxy = self.kernel.source(lang, x, y, p, first)
        known = self.kernel.self_source(lang, p, first)
        if known is not None:  # k(x, x) = k(y, y) = s whatever x: k / s, no self-similarities to evaluate
            s, ds = known
            if s == "1.0" and all(d == "0.0" for d in ds):
                return kxy, gxy
            c = _lang(lang) == "c"
            value = f"(({kxy}) / ({s}))"
            grads = [f"(({g}) / ({s}) - {value} * ({d}) / ({s}))" for g, d in zip(gxy, ds)]
            guard = (lambda e: f"(({s}) > 0 ? {e} : 0.0)") if c else (lambda e: f"({e} if ({s}) > 0 else 0.0)")
            return guard(value), [guard(g) for g in grads]
        kxx, gxx = self.kernel.source(lang, x, x, p, first)
        kyy, gyy = self.kernel.source(lang, y, y, p, first)
        c = _lang(lang) == "c"
        sqrt = "sqrt" if c else "math.sqrt"
        root = f"{sqrt}(({kxx}) * ({kyy}))"
        value = f"(({kxy}) / {root})"
        grads = [f"(({g}) / {root} - 0.5 * {value} * (({gx}) / ({kxx}) + ({gy}) / ({kyy})))"
                 for g, gx, gy in zip(gxy, gxx, gyy)]
        ok = f"({kxx}) * ({kyy}) > 0"  # GraphDot: 0 where k(x, x) k(y, y) is 0

        def guard(e: str) -> str:
            return f"({ok} ? {e} : 0.0)" if c else f"({e} if {ok} else 0.0)"

        return guard(value), [guard(g) for g in grads]

    def __repr__(self) -> str:
        return f"{self.kernel!r}.normalized"

    def _bare(self) -> str:
        return f"{self.kernel._bare()}.normalized"

    def _on(self, on: str) -> "BaseKernel":
        return Normalized(self.kernel._on(on))


def Normalize(kernel: BaseKernel) -> BaseKernel:
    """GraphDot's spelling of ``kernel.normalized``."""
    return Normalized(_kernel(kernel, "Normalize"))
