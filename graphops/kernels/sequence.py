"""Sequence kernels: GraphDot's ``Convolution`` and ``DotProduct`` on variable-length (sequence)
features, e.g. the ring sizes of each atom. A GraphSet holds a sequence feature as padded rows
(the length, then the values); the generated solvers pass a kernel the row from the length on and
call a helper loop (:meth:`~graphops.kernels.basekernels.BaseKernel.helpers`)."""
from __future__ import annotations

import hashlib
import math
from typing import Any, Mapping

import numpy as np

from graphops.errors import InputError
from graphops.kernels.basekernels import BaseKernel, _kernel, _lang, _name, _Wrapping

__all__ = ["Convolution", "DotProduct"]


class _Sequence(BaseKernel):
    """A kernel of one sequence feature (a variable-length list of numbers per node or edge)."""

    on: str | None = None

    @property
    def features(self) -> tuple[str, ...]:
        return () if self.on is None else (self.on,)

    @property
    def sequence_features(self) -> tuple[str, ...]:
        return self.features

    @property
    def scalar_features(self) -> tuple[str, ...]:
        return ()  # its elements are numbers, the feature itself a sequence

    def unnamed(self) -> BaseKernel | None:
        return self if self.on is None else None

    def _sequences(self, x: Mapping[str, Any], y: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        if self.on is None:
            raise InputError(f"{self!r} names no feature: write {type(self).__name__}(..., on='rings') or use it "
                             f"inside TensorProduct(rings=...)")
        out = []
        for rec in (x, y):
            if self.on not in rec:
                raise InputError(f"{self!r} reads the feature {self.on!r}, which is not there (features: "
                                 f"{', '.join(map(repr, rec)) or 'none'})")
            v = np.asarray(rec[self.on], dtype=float)
            if v.ndim != 1:
                raise InputError(f"{self!r} compares one sequence with one sequence; got a value of shape {v.shape}")
            out.append(v)
        return out[0], out[1]

    def _helper(self, lang: str, kind: str, body: str) -> str:
        return f"{kind}_{hashlib.sha1((lang + body).encode()).hexdigest()[:12]}"


def _has_sequence_kernel(kernel: BaseKernel) -> bool:
    return isinstance(kernel, _Sequence) or any(_has_sequence_kernel(k) for k in kernel._children())


class Convolution(_Sequence, _Wrapping):
    """GraphDot's Convolution: ``kernel`` between every element of one sequence and every element
    of the other, averaged (``mean=True``: ``Σ k(a, b) / (|X| |Y|)``, 0 for an empty sequence)
    or summed (``mean=False``). ``Convolution(k).normalized`` is the normalized variant. Reads
    a sequence feature: ``TensorProduct(rings=Convolution(KroneckerDelta(0.3)))``."""

    def __init__(self, kernel: BaseKernel, mean: bool = True, on: str | None = None):
        self.kernel = _kernel(kernel, "Convolution")
        if not isinstance(mean, (bool, np.bool_)):
            raise InputError(f"Convolution: mean must be true or false; got {mean!r}")
        self.mean = bool(mean)
        inner = self.kernel.features
        if len(inner) > 1 or _has_sequence_kernel(self.kernel):  # named or not yet (under a TensorProduct)
            raise InputError(f"Convolution({self.kernel!r}): the kernel compares the elements of one sequence "
                             f"feature, so it names at most one feature and reads no sequences itself")
        on = _name(on, "Convolution")
        if inner and on is not None and inner[0] != on:
            raise InputError(f"Convolution({self.kernel!r}, on={on!r}): the kernel names {inner[0]!r}; name one")
        self.on = on if on is not None else (inner[0] if inner else None)
        if self.on is not None:
            self.kernel = self.kernel._on(self.on)

    def with_values(self, values):
        return Convolution(self.kernel.with_values(values), self.mean, self.on)

    def _on(self, on: str) -> "BaseKernel":
        self._check_on(on)
        return Convolution(self.kernel, self.mean, on)

    def _range(self, ranges: Mapping[str, tuple[float, float]] | None = None) -> tuple[bool, float]:
        return self.kernel._range(ranges)[0], self.interval(ranges)[1]

    @property
    def minmax(self) -> tuple[float, float]:
        return self.interval()

    def interval(self, ranges: Mapping[str, tuple[float, float]] | None = None) -> tuple[float, float]:
        lo, hi = self.kernel.interval(ranges)
        return (lo, hi) if self.mean else (lo if lo >= 0 else -math.inf, math.inf)

    def _eval(self, x, y):
        X, Y = self._sequences(x, y)
        f = self.on
        shape = (len(X), len(Y))
        value, grads = self.kernel._eval({f: X[:, None]}, {f: Y[None, :]})
        fold = (lambda a: float(np.broadcast_to(a, shape).mean()) if X.size and Y.size else 0.0) if self.mean \
            else (lambda a: float(np.broadcast_to(a, shape).sum()))
        return fold(value), [fold(g) for g in grads]

    def _loop(self, lang: str, expression: str) -> tuple[str, str]:
        """(name, definition) of the helper folding ``expression`` over element pairs."""
        if _lang(lang) == "c":
            result = "(n * m ? s / (double)(n * m) : 0.0)" if self.mean else "s"
            body = (f"template <typename R>\n__device__ __forceinline__ double NAME(const R* a, const R* b, "
                    f"const double* p) {{\n    const int n = (int)a[0], m = (int)b[0];\n    double s = 0.0;\n"
                    f"    for (int i = 0; i < n; ++i)\n        for (int j = 0; j < m; ++j)\n"
                    f"            s += (double)({expression});\n    return {result};\n}}\n")
        else:
            result = "s / (n * m) if n * m else 0.0" if self.mean else "s"
            body = (f"@njit(cache=False)\ndef NAME(a, b, p):\n    n = int(a[0])\n    m = int(b[0])\n    s = 0.0\n"
                    f"    for i in range(n):\n        for j in range(m):\n            s += {expression}\n"
                    f"    return {result}\n")
        name = self._helper(lang, "conv", body)
        return name, body.replace("NAME", name)

    def _loops(self, lang: str) -> list[tuple[str, str]]:
        f = self.on if self.on is not None else "_"
        value, grads = self.kernel.source(lang, {f: "a[1 + i]"}, {f: "b[1 + j]"}, "p", 0)
        return [self._loop(lang, e) for e in (value, *grads)]

    def helpers(self, lang):
        return dict(self._loops(lang))

    def source(self, lang, x, y, p="p", first=0):
        if self.on is None:
            raise InputError(f"{self!r} names no feature")
        a, b = x[self.on], y[self.on]
        at = f"{p} + {first}" if _lang(lang) == "c" else f"{p}[{first}:]"
        calls = [f"{name}({a}, {b}, {at})" for name, _ in self._loops(lang)]
        return calls[0], calls[1:]

    def __repr__(self) -> str:
        mean = "" if self.mean else ", mean=False"
        on = f", on={self.on!r}" if self.on is not None else ""
        return f"Convolution({self.kernel._bare()}{mean}{on})"

    def _bare(self) -> str:
        return f"Convolution({self.kernel._bare()}{'' if self.mean else ', mean=False'})"


class DotProduct(_Sequence):
    """GraphDot's DotProduct: ``Σ x_i y_i`` of two vector features (sequences of one length;
    values >= 0, so that the kernel is >= 0). No hyperparameters; ``DotProduct().normalized`` is
    the cosine similarity."""

    def __init__(self, on: str | None = None):
        self.on = _name(on, "DotProduct")

    hyperparameters = property(lambda self: [])

    def with_values(self, values):
        if len(values):
            raise InputError("DotProduct has no hyperparameters")
        return self

    def _on(self, on: str) -> "BaseKernel":
        self._check_on(on)
        return DotProduct(on)

    @property
    def minmax(self) -> tuple[float, float]:
        return 0.0, math.inf

    def _eval(self, x, y):
        X, Y = self._sequences(x, y)
        if len(X) != len(Y):
            raise InputError(f"{self!r}: the two vectors differ in length ({len(X)} and {len(Y)})")
        return float(X @ Y), []

    def _dot(self, lang: str) -> tuple[str, str]:
        if _lang(lang) == "c":
            body = ("template <typename R>\n__device__ __forceinline__ double NAME(const R* a, const R* b) {\n"
                    "    const int n = (int)a[0] < (int)b[0] ? (int)a[0] : (int)b[0];\n    double s = 0.0;\n"
                    "    for (int i = 1; i <= n; ++i) s += (double)a[i] * (double)b[i];\n    return s;\n}\n")
        else:
            body = ("@njit(cache=False)\ndef NAME(a, b):\n    s = 0.0\n    for i in range(1, min(int(a[0]), int(b[0])) + 1):\n"
                    "        s += a[i] * b[i]\n    return s\n")
        name = self._helper(lang, "dot", body)
        return name, body.replace("NAME", name)

    def helpers(self, lang):
        return dict([self._dot(lang)])

    def source(self, lang, x, y, p="p", first=0):
        if self.on is None:
            raise InputError(f"{self!r} names no feature")
        return f"{self._dot(lang)[0]}({x[self.on]}, {y[self.on]})", []

    def __repr__(self) -> str:
        return "DotProduct()" if self.on is None else f"DotProduct(on={self.on!r})"

    def _bare(self) -> str:
        return "DotProduct()"
