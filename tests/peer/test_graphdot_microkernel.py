"""GraphDot's microkernel tests (test/microkernel/test_microkernel.py, GraphDot 0.8), ported to
graphops' base kernels: the same kernels, values, corner cases and value ranges.

Adapted, with why:
* GraphDot's ``theta`` is a named tuple of raw values that can be assigned in place; graphops'
  kernels are immutable (``with_values`` gives a new one) and ``theta`` is scikit-learn's log of
  the free values, so "``k1.theta in k.theta``" becomes "k1's hyperparameters appear, in order,
  inside k's", and assigning ``theta`` becomes a ``with_values`` round trip.
* ``kernel(x, y, jac=True)`` is ``kernel(x, y), kernel.gradient(x, y)``.
* ``Normalize(k).name == 'Normalize'`` is ``isinstance(k.normalized, Normalized)``.

* ``test_product_quasikernel``: GraphDot's ``Product()`` with no arguments is the quasi-kernel
  ``x * y``; so is graphops' (``Product(k1, k2)`` multiplies kernels). Its ``minmax`` is
  ``(-inf, inf)`` where GraphDot's is ``(None, None)``: unknown until the features' values are
  (mg_kernel checks a kernel using it against the graphs' values).

Left out, with why (GraphDot internals with no graphops counterpart): ``dtype.isalignedstruct``
and ``state`` (the layout of GraphDot's C++ structs; graphops writes hyperparameters into an array),
and ``str(k)`` (graphops' ``str`` is its ``repr``, which is checked).
"""
from __future__ import annotations

import copy
import random

import numpy as np
import pytest

from graphops.errors import InputError
from graphops.kernels import (Additive, Constant, Convolution, DotProduct, KroneckerDelta, Normalize, Normalized,
                              Product, RationalQuadratic, SquareExponential, TensorProduct)
from graphops.kernels.basekernels import BaseKernel

inf = float("inf")
nan = float("nan")
simple_kernels = [
    Constant(1.0),
    KroneckerDelta(0.5),
    SquareExponential(1.0),
    RationalQuadratic(1.0, 1.0),
]
IDS = ["Constant", "KroneckerDelta", "SquareExponential", "RationalQuadratic"]
NAMESPACE = {k.__name__: k for k in (Constant, KroneckerDelta, SquareExponential, RationalQuadratic, TensorProduct,
                                     Additive, Convolution, DotProduct, Normalize, Product)}


def mirror_of(kernel: BaseKernel) -> BaseKernel:
    """``eval(repr(kernel))``: the representation means the kernel."""
    return eval(repr(kernel), dict(NAMESPACE))  # noqa: S307 - our own repr


def values(kernel: BaseKernel) -> list[float]:
    return [h.value for h in kernel.hyperparameters]


def contains(whole: BaseKernel, part: BaseKernel) -> bool:
    """``part``'s hyperparameters appear, in order, inside ``whole``'s (GraphDot: ``part.theta in whole.theta``)."""
    w, p = values(whole), values(part)
    return any(w[i:i + len(p)] == p for i in range(len(w) - len(p) + 1))


def round_trip(kernel: BaseKernel) -> None:
    """GraphDot's ``k.theta = k.theta`` and ``copy.copy``: same values back."""
    again = kernel.with_values(values(kernel))
    assert values(again) == values(kernel) and repr(again) == repr(kernel)
    assert values(copy.copy(kernel)) == values(kernel)


def check_range(kernel: BaseKernel) -> None:
    assert len(kernel.minmax) == 2
    assert kernel.minmax[0] >= 0
    assert kernel.minmax[1] >= kernel.minmax[0]


def pareto_pairs(n: int = 1000):
    random.seed(0)
    return [(random.paretovariate(0.1), random.paretovariate(0.1)) for _ in range(n)]


@pytest.mark.parametrize("kernel", simple_kernels, ids=IDS)
def test_simple_kernel(kernel):
    assert kernel(0, 0) == 1
    with np.errstate(invalid="ignore", over="ignore"):
        assert kernel(0, inf) <= 1
        assert kernel(0, -inf) <= 1
        assert kernel(inf, 0) <= 1
        assert kernel(-inf, 0) <= 1
    for i, j in pareto_pairs():
        assert 0 <= kernel(i, j) <= 1
        assert kernel(i, j) == kernel(j, i)
    assert values(mirror_of(kernel)) == values(kernel)
    assert len(kernel.hyperparameters) > 0
    round_trip(kernel)
    check_range(kernel)


def test_product_quasikernel():
    kernel = Product()
    # default behavior
    assert kernel(0, 0) == 0
    assert kernel(0, 1) == 0
    assert kernel(1, 1) == 1
    # random cases
    for r1, r2 in np.random.default_rng(0).standard_normal((1000, 2)):
        assert kernel(r1, r2) == r1 * r2
    # code generation: x * y, no hyperparameters, no derivatives
    on = TensorProduct(x=kernel)
    assert on.row_source("c", ["x"]) == ("(((x[0]) * (y[0])))", [])
    assert on.row_source("python", ["x"]) == ("(((x[0]) * (y[0])))", [])
    assert kernel.gradient(2.0, 3.0) == []
    # representation generation
    assert isinstance(str(kernel), str) and repr(kernel) == "Product()"
    assert values(kernel) == [] and len(kernel.theta) == 0
    round_trip(kernel)
    # representation meaningness
    assert values(mirror_of(kernel)) == values(kernel) and mirror_of(kernel) == kernel
    # range check
    assert len(kernel.minmax) == 2
    # the product of kernels is another thing, and stays one when copied or pickled
    both = Product(KroneckerDelta(0.5), Constant(0.5))
    assert both(1, 1) == 0.5 and repr(copy.copy(both)) == repr(both) == "(KroneckerDelta(0.5) * Constant(0.5))"
    assert repr(TensorProduct(w=Product(), x=KroneckerDelta(0.5))) == "TensorProduct(w=Product(), x=KroneckerDelta(0.5))"


def test_constant_kernel():
    kernel = Constant(1.0)
    assert kernel(0, 0) == 1
    assert kernel(inf, inf) == 1
    assert kernel(inf, -inf) == 1
    assert kernel(nan, nan) == 1
    assert kernel(None, 0) == 1
    assert kernel(None, None) == 1
    assert kernel(1.0, "a") == 1
    for n in range(1, 10):
        if n != 2:
            with pytest.raises(ValueError):
                Constant(1.0, c_bounds=tuple([1] * n))
    Constant(1.0, c_bounds="fixed")
    assert kernel.minmax[0] == kernel.value
    assert kernel.minmax[1] == kernel.value


def test_kronecker_delta_kernel():
    kernel = KroneckerDelta(0.5)
    assert kernel(0, 0) == 1
    assert kernel("a", "a") == 1.0
    assert kernel("a", "b") == 0.5
    assert kernel(inf, inf) == 1
    assert kernel(-inf, inf) == 0.5
    assert kernel(inf, -inf) == 0.5
    assert kernel(nan, inf) == 0.5
    assert kernel(nan, -inf) == 0.5
    assert kernel(nan, nan) == 0.5
    assert kernel(None, 0) == 0.5
    assert kernel(None, None) == 1
    assert kernel(1.0, "a") == 0.5
    for n in range(1, 10):
        if n != 2:
            with pytest.raises(ValueError):
                KroneckerDelta(1.0, h_bounds=tuple([1] * n))
    KroneckerDelta(1.0, h_bounds="fixed")
    assert kernel.minmax[0] == kernel.value
    assert kernel.minmax[1] == 1


def test_square_exponential_kernel():
    kernel = SquareExponential(1.0)
    assert kernel.hyperparameters[0].name == "length_scale" and kernel.value == pytest.approx(1.0)
    assert kernel(0, 0) == 1
    assert kernel(1, 1) == 1
    assert kernel(0, inf) == 0
    with np.errstate(invalid="ignore"):
        assert kernel(-inf, inf) == 0
        assert kernel(inf, -inf) == 0
    for n in range(1, 10):
        if n != 2:
            with pytest.raises(ValueError):
                SquareExponential(1.0, length_scale_bounds=tuple([1] * n))
    SquareExponential(1.0, length_scale_bounds="fixed")
    assert kernel.minmax[0] == 0
    assert kernel.minmax[1] == 1


@pytest.mark.parametrize("kernel", [
    KroneckerDelta(0.5),
    KroneckerDelta(0.5) + KroneckerDelta(1.0),
    SquareExponential(1.0) + SquareExponential(3.0),
])
def test_normalization(kernel):
    k = Normalize(kernel)
    rng = np.random.default_rng(0)
    for i, j in rng.standard_normal((1000, 2)) * 10:
        kij = k(i, j)
        assert 0 <= kij <= 1 + 1e-15
        dkii, dkjj = k.gradient(i, i), k.gradient(j, j)
        rii, drii = kernel(i, i), kernel.gradient(i, i)
        rjj, drjj = kernel(j, j), kernel.gradient(j, j)
        assert dkii == pytest.approx(list(np.asarray(drii) / rii), abs=1e-6)
        assert dkjj == pytest.approx(list(np.asarray(drjj) / rjj), abs=1e-6)
    assert repr(kernel) in repr(k)
    assert values(kernel) == values(k)
    round_trip(k)
    assert k.minmax[0] >= 0 and k.minmax[1] == 1


@pytest.mark.parametrize("k2", simple_kernels, ids=IDS)
@pytest.mark.parametrize("k1", simple_kernels, ids=IDS)
def test_tensor_product_2(k1, k2):
    k = TensorProduct(x=k1, y=k2)
    mirror = mirror_of(k)
    assert values(mirror) == values(k)
    for i1, j1 in [(0, 0), (0, 1.5), (-1, 1), (-1.0, 0)]:
        for i2, j2 in [(0, 0), (0, 1.5), (-1, 1), (-1.0, 0)]:
            assert k(dict(x=i1, y=i2), dict(x=j1, y=j2)) == pytest.approx(k1(i1, j1) * k2(i2, j2))
            assert k(dict(x=i1, y=i2), dict(x=j1, y=j2)) == pytest.approx(mirror(dict(x=i1, y=i2), dict(x=j1, y=j2)))
    for _ in range(1000):
        i1, j1 = random.paretovariate(0.1), random.paretovariate(0.1)
        i2, j2 = random.paretovariate(0.1), random.paretovariate(0.1)
        assert k(dict(x=i1, y=j1), dict(x=i2, y=j2)) == k1(i1, i2) * k2(j1, j2)
        assert k(dict(x=i1, y=i2), dict(x=j1, y=j2)) == mirror(dict(x=i1, y=i2), dict(x=j1, y=j2))
    assert contains(k, k1) and contains(k, k2)
    round_trip(k)
    assert k1._bare() in repr(k) and k2._bare() in repr(k)
    check_range(k)


@pytest.mark.parametrize("k3", simple_kernels, ids=IDS)
@pytest.mark.parametrize("k2", simple_kernels, ids=IDS)
@pytest.mark.parametrize("k1", simple_kernels, ids=IDS)
@pytest.mark.parametrize("cls", [TensorProduct, Additive])
def test_per_feature_3(cls, k1, k2, k3):
    """GraphDot's test_tensor_product_3 and test_additive_3 (and test_additive_2 through k3 = k2)."""
    k = cls(x=k1, y=k2, z=k3)
    mirror = mirror_of(k)
    assert values(mirror) == values(k)
    random.seed(0)
    for _ in range(1000):
        x1, x2, y1, y2, z1, z2 = (random.paretovariate(0.1) for _ in range(6))
        a, b = dict(x=x1, y=y1, z=z1), dict(x=x2, y=y2, z=z2)
        parts = (k1(x1, x2), k2(y1, y2), k3(z1, z2))
        want = parts[0] * parts[1] * parts[2] if cls is TensorProduct else parts[0] + parts[1] + parts[2]
        assert k(a, b) == pytest.approx(want)
        assert k(a, b) == mirror(a, b)
    assert contains(k, k1) and contains(k, k2) and contains(k, k3)
    round_trip(k)
    for part in (k1, k2, k3):
        assert part._bare() in repr(k)
    check_range(k)


@pytest.mark.parametrize("kernel", simple_kernels, ids=IDS)
def test_convolution(kernel):
    k = Convolution(kernel, mean=False)
    assert k([], []) == 0
    assert k(tuple(), tuple()) == 0
    with np.errstate(invalid="ignore", over="ignore"):
        for i, j in ([0, 0], [0, inf], [0, 1]):
            for n1 in range(10):
                for n2 in range(10):
                    assert k([i] * n1, [j] * n2) == pytest.approx(kernel(i, j) * n1 * n2)
    assert repr(kernel) in repr(k)
    assert values(kernel) == values(k)
    round_trip(k)
    check_range(k)


@pytest.mark.parametrize("kernel", simple_kernels, ids=IDS)
def test_kernel_add_constant(kernel):
    for kadd in [kernel + 1, 1 + kernel]:
        mirror = mirror_of(kadd)
        assert values(mirror) == values(kadd)
        for i, j in pareto_pairs():
            assert kadd(i, j) == kernel(i, j) + 1
            assert kadd(i, j) == kadd(j, i)
            assert kadd(i, j) == mirror(i, j)
            assert kadd(i, j) == mirror(j, i)
        assert len(repr(kadd).split("+")) == 2
        assert repr(kernel) in repr(kadd)
        assert contains(kadd, kernel)
        round_trip(kadd)
        check_range(kadd)


@pytest.mark.parametrize("k2", simple_kernels, ids=IDS)
@pytest.mark.parametrize("k1", simple_kernels, ids=IDS)
@pytest.mark.parametrize("op", ["+", "*"])
def test_kernel_op_kernel(op, k1, k2):
    """GraphDot's test_kernel_add_kernel and test_kernel_mul_kernel."""
    k = k1 + k2 if op == "+" else k1 * k2
    mirror = mirror_of(k)
    assert values(mirror) == values(k)
    for i, j in pareto_pairs():
        assert k(i, j) == (k1(i, j) + k2(i, j) if op == "+" else k1(i, j) * k2(i, j))
        assert k(i, j) == k(j, i)
        assert k(i, j) == mirror(i, j)
        assert k(i, j) == mirror(j, i)
    assert len(repr(k).split(op)) == 2
    assert repr(k1) in repr(k) and repr(k2) in repr(k)
    assert contains(k, k1) and contains(k, k2)
    round_trip(k)
    check_range(k)
    combine = (lambda a, b: a + b) if op == "+" else (lambda a, b: a * b)
    assert k.minmax[0] == combine(k1.minmax[0], k2.minmax[0])
    assert k.minmax[1] == combine(k1.minmax[1], k2.minmax[1])


@pytest.mark.parametrize("kernel", simple_kernels, ids=IDS)
def test_kernel_mul_constant(kernel):
    for kmul in [kernel * 2, 2 * kernel]:
        mirror = mirror_of(kmul)
        assert values(mirror) == values(kmul)
        for i, j in pareto_pairs():
            assert kmul(i, j) == kernel(i, j) * 2
            assert kmul(i, j) == kmul(j, i)
            assert kmul(i, j) == mirror(i, j)
            assert kmul(i, j) == mirror(j, i)
        assert len(repr(kmul).split("*")) == 2
        assert repr(kernel) in repr(kmul)
        assert contains(kmul, kernel)
        round_trip(kmul)
        check_range(kmul)


@pytest.mark.parametrize("kernel", simple_kernels, ids=IDS)
def test_kernel_exp_constant(kernel):
    kexp = kernel ** 2
    mirror = mirror_of(kexp)
    assert values(mirror) == values(kexp)
    for i, j in pareto_pairs():
        assert kexp(i, j) == kernel(i, j) ** 2
        assert kexp(i, j) == kexp(j, i)
        assert kexp(i, j) == mirror(i, j)
        assert kexp(i, j) == mirror(j, i)
    assert len(repr(kexp).split("**")) == 2
    assert repr(kernel) in repr(kexp)
    assert contains(kexp, kernel)
    round_trip(kexp)
    assert kexp.minmax[0] == kernel.minmax[0] ** 2
    assert kexp.minmax[1] == kernel.minmax[1] ** 2


@pytest.mark.parametrize("k2", simple_kernels, ids=IDS)
@pytest.mark.parametrize("k1", simple_kernels, ids=IDS)
def test_kernel_exp_kernel(k1, k2):
    if isinstance(k2, Constant):
        kexp = k1 ** k2
        mirror = mirror_of(kexp)
        assert values(mirror) == values(kexp)
        for i, j in pareto_pairs():
            assert kexp(i, j) == k1(i, j) * k2(i, j)
            assert kexp(i, j) == kexp(j, i)
            assert kexp(i, j) == mirror(i, j)
            assert kexp(i, j) == mirror(j, i)
        assert len(repr(kexp).split("**")) == 2
        assert repr(k1) in repr(kexp) and repr(k2) in repr(kexp)
        assert contains(kexp, k1) and contains(kexp, k2)
        round_trip(kexp)
        assert kexp.minmax[0] == k1.minmax[0] ** k2.minmax[0]
        assert kexp.minmax[1] == k1.minmax[1] ** k2.minmax[1]
    else:
        with pytest.raises(ValueError):
            k1 ** k2


@pytest.mark.parametrize("kernel", simple_kernels + [
    simple_kernels[0] + simple_kernels[1],
    simple_kernels[-1] * simple_kernels[-2],
    simple_kernels[-1] ** 3,
    simple_kernels[0] + np.pi,
    TensorProduct(a=simple_kernels[0], b=simple_kernels[-1]),
    Additive(x=simple_kernels[0], y=simple_kernels[-1]),
])
def test_normalized_property(kernel):
    assert isinstance(kernel.normalized, BaseKernel)
    assert isinstance(kernel.normalized, Normalized)
    assert kernel.normalized.minmax[0] >= 0
    assert kernel.normalized.minmax[1] == 1


def test_dotproduct():
    k = DotProduct()
    assert k([], []) == 0
    assert k(tuple(), tuple()) == 0
    for i, j in ([1, 2], [0, 2], [2, 4]):
        for n in range(10):
            assert k([i] * n, [j] * n) == i * j * n
    mirror_of(k)
    copy.copy(k)
    check_range(k)
    with pytest.raises(InputError, match="differ in length"):
        k([1, 2], [1])
