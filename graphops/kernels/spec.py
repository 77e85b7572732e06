"""Base kernels from YAML (:func:`from_spec`) and as compiled Numba functions
(:func:`compile_kernel`)."""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

from graphops.errors import InputError, did_you_mean
from graphops.kernels.basekernels import (Additive, BaseKernel, Constant, KroneckerDelta, Normalized, Power, Product,
                                          QuasiProduct, RationalQuadratic, SquareExponential, Sum, TensorProduct)
from graphops.kernels.sequence import Convolution, DotProduct

__all__ = ["from_spec", "compile_kernel", "keyword_body"]


# YAML -------------------------------------------------------------------------------------
_ELEMENTARY: dict[str, tuple[type, tuple[str, ...]]] = {
    "kronecker_delta": (KroneckerDelta, ("h", "on", "h_bounds")),
    "square_exponential": (SquareExponential, ("length_scale", "on", "length_scale_bounds")),
    "constant": (Constant, ("c", "c_bounds")),
    "rational_quadratic": (RationalQuadratic, ("length_scale", "alpha", "on", "length_scale_bounds", "alpha_bounds")),
}
_NAMES = (*_ELEMENTARY, "tensor_product", "additive", "product", "sum", "normalized", "power", "convolution",
          "dot_product")


def from_spec(spec: Any, where: str = "kernel") -> BaseKernel:
    """A kernel from its YAML form: ``{kronecker_delta: {h: 0.5, on: label}}``,
    ``{tensor_product: {label: {kronecker_delta: {h: 0.5}}, ...}}``, ``{product: [k1, k2]}``,
    ``{product: {}}`` (GraphDot's quasi-kernel ``x * y``; ``{product: {on: w}}``), ``{sum: [...]}``,
    ``{additive: {...}}``, ``{normalized: k}``, ``{power: {kernel: k, exponent: 2}}``,
    ``{convolution: {kernel: k, mean: true}}``, ``{dot_product: {}}``, or a kernel object."""
    if isinstance(spec, BaseKernel):
        return spec
    if not isinstance(spec, Mapping) or len(spec) != 1:
        raise InputError(f"{where}: a base kernel is written as a mapping with one key ({', '.join(_NAMES)}), "
                         f"e.g. {{kronecker_delta: {{h: 0.5, on: label}}}}; got {spec!r}")
    (name, body), = spec.items()
    if name in _ELEMENTARY:
        cls, allowed = _ELEMENTARY[name]
        required = allowed[:2] if cls is RationalQuadratic else allowed[:1]
        try:
            body = keyword_body(body, allowed, required, shorthand=_is_number)
        except InputError as exc:
            raise InputError(f"{where}.{name}: {exc}") from None
        return _built(where, name, lambda: cls(**body))
    if name in ("tensor_product", "additive"):
        if not isinstance(body, Mapping) or not body:
            raise InputError(f"{where}.{name}: expected a mapping of feature: kernel; got {body!r}")
        cls = TensorProduct if name == "tensor_product" else Additive
        parts = {str(f): from_spec(k, f"{where}.{name}.{f}") for f, k in body.items()}
        return _built(where, name, lambda: cls(**parts))
    if name == "product" and (body is None or isinstance(body, Mapping)):  # the quasi-kernel x * y
        try:
            on = keyword_body(body or {}, ("on",), ()).get("on")
        except InputError as exc:
            raise InputError(f"{where}.product: {exc} ({{product: {{}}}} or {{product: {{on: feature}}}} is the "
                             f"quasi-kernel x * y; a list of kernels their product)") from None
        return _built(where, name, lambda: QuasiProduct(on))
    if name in ("product", "sum"):
        if not isinstance(body, Sequence) or isinstance(body, str) or not body:
            also = " (or {} / {on: feature}: the quasi-kernel x * y)" if name == "product" else ""
            raise InputError(f"{where}.{name}: expected a list of kernels{also}; got {body!r}")
        items = [from_spec(k, f"{where}.{name}[{i}]") for i, k in enumerate(body)]
        return _built(where, name, lambda: Product(*items) if name == "product" else Sum(*items))
    if name == "normalized":
        inner = from_spec(body, f"{where}.normalized")
        return _built(where, name, lambda: Normalized(inner))
    if name == "power":  # {power: {kernel: k, exponent: 2}} (exponent: a number, or {constant: {c: 2}})
        if not isinstance(body, Mapping) or set(body) != {"kernel", "exponent"}:
            raise InputError(f"{where}.power: expected {{kernel: ..., exponent: ...}}; got {body!r}")
        inner = from_spec(body["kernel"], f"{where}.power.kernel")
        exp = body["exponent"]
        exp = from_spec(exp, f"{where}.power.exponent") if isinstance(exp, Mapping) else exp
        return _built(where, name, lambda: Power(inner, exp))
    if name == "convolution":  # {convolution: {kernel: k, mean: true, on: rings}}
        if not isinstance(body, Mapping) or "kernel" not in body or set(body) - {"kernel", "mean", "on"}:
            raise InputError(f"{where}.convolution: expected {{kernel: ..., mean: true or false, on: feature}} "
                             f"(mean and on optional); got {body!r}")
        inner = from_spec(body["kernel"], f"{where}.convolution.kernel")
        return _built(where, name, lambda: Convolution(inner, body.get("mean", True), body.get("on")))
    if name == "dot_product":  # {dot_product: {on: vector}} or {dot_product: {}}
        if body is None:
            body = {}
        if not isinstance(body, Mapping) or set(body) - {"on"}:
            raise InputError(f"{where}.dot_product: expected {{on: feature}} or {{}}; got {body!r}")
        return _built(where, name, lambda: DotProduct(body.get("on")))
    raise InputError(f"{where}: unknown base kernel {name!r}; known: {', '.join(_NAMES)}.{did_you_mean(name, _NAMES)}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def keyword_body(body: Any, allowed: Sequence[str], required: Sequence[str],
                 shorthand: Callable[[Any], bool] | None = None) -> dict:
    """The keyword arguments a YAML form's body gives (``{h: 0.5, on: label}``), checked: a value
    ``shorthand`` accepts stands for ``{allowed[0]: value}``; unknown keys and missing required ones
    are an InputError naming them and what is allowed (the caller prefixes where it is)."""
    if shorthand is not None and shorthand(body):
        body = {allowed[0]: body}
    if not isinstance(body, Mapping):
        raise InputError(f"expected a mapping of {', '.join(allowed)}; got {body!r}")
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise InputError(f"unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(allowed)}."
                         f"{did_you_mean(unknown[0], allowed)}")
    missing = [k for k in required if k not in body]
    if missing:
        raise InputError(f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} required")
    return dict(body)


def _built(where: str, name: str, make: Callable[[], BaseKernel]) -> BaseKernel:
    try:
        return make()
    except InputError as exc:
        raise InputError(f"{where}.{name}: {exc}") from None


# compiled form ------------------------------------------------------------------------------
def compile_kernel(kernel: BaseKernel, features: Sequence[str] | None = None,
                   gradient: bool = False, widths: Mapping[str, int] | None = None
                   ) -> tuple[Callable[..., Any], tuple[str, ...]]:
    """A Numba function ``k(x, y, p)`` of two feature rows (float64 arrays laid out as
    :meth:`BaseKernel.row_source` says, one entry per scalar feature in the returned order,
    ``widths[name]`` per sequence feature) and the hyperparameter values ``p``; with
    ``gradient=True`` it also fills ``out`` with the derivatives: ``k(x, y, p, out)``. Compiled
    once per kernel shape."""
    from graphops.base.jit import njit

    names = tuple(features) if features is not None else kernel.features
    value, grads = kernel.row_source("python", names, widths)
    helpers = kernel.helpers("python")
    key = (value, tuple(grads) if gradient else None, tuple(helpers))
    if key in _COMPILED:
        return _COMPILED[key], names
    lines = [*helpers.values(), "def k(x, y, p" + (", out" if gradient else "") + "):"]
    if gradient:
        lines += [f"    out[{i}] = {g}" for i, g in enumerate(grads)]
    lines.append(f"    return {value}")
    scope: dict[str, Any] = {"math": math, "njit": njit}
    exec(compile("\n".join(lines), f"<base kernel {kernel!r}>", "exec"), scope)  # noqa: S102 - our own source
    fn = njit(cache=False)(scope["k"])
    _COMPILED[key] = fn
    return fn, names


_COMPILED: dict[Any, Callable[..., Any]] = {}
