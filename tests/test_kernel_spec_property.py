"""Property tests of the YAML forms of base kernels and start probabilities: whatever nested
mapping a user writes, reading it gives a kernel (which then evaluates, writes its code and
reports its range) or an InputError naming the problem, never another exception."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings, strategies as st

from graphops.errors import InputError
from graphops.kernels import BaseKernel, probability
from graphops.kernels.spec import from_spec

KERNEL_NAMES = ["kronecker_delta", "square_exponential", "rational_quadratic", "constant", "tensor_product",
                "additive", "product", "sum", "normalized", "power", "convolution", "dot_product", "kronecker"]
KEYS = ["h", "on", "length_scale", "alpha", "c", "kernel", "exponent", "mean", "h_bounds", "c_bounds", "x", "label"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from(["label", "x", "fixed", ""]))


def specs(names):
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.dictionaries(st.sampled_from(names), inner, max_size=2),
            st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
            st.lists(inner, max_size=3),
        ),
        max_leaves=12,
    )


number = st.one_of(st.floats(0.01, 3.0), scalars)  # mostly in range, sometimes not
feature = st.sampled_from(["label", "x", "rings"])
elementary = st.one_of(
    st.builds(lambda h, on: {"kronecker_delta": {"h": h, "on": on}}, number, feature),
    st.builds(lambda ell, on: {"square_exponential": {"length_scale": ell, "on": on}}, number, feature),
    st.builds(lambda ell, a, on: {"rational_quadratic": {"length_scale": ell, "alpha": a, "on": on}}, number, number,
              feature),
    st.builds(lambda c: {"constant": {"c": c}}, number),
    st.builds(lambda on: {"dot_product": {"on": on}}, feature),
)


def _composites(inner):
    return st.one_of(
        st.builds(lambda ks: {"product": ks}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda ks: {"sum": ks}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda k: {"normalized": k}, inner),
        st.builds(lambda k, e: {"power": {"kernel": k, "exponent": e}}, inner, number),
        st.builds(lambda k, m: {"convolution": {"kernel": k, "mean": m}}, inner, st.booleans()),
        st.builds(lambda d: {"tensor_product": d}, st.dictionaries(feature, inner, min_size=1, max_size=2)),
        st.builds(lambda d: {"additive": d}, st.dictionaries(feature, inner, min_size=1, max_size=2)),
    )


kernel_specs = st.one_of(st.recursive(elementary, _composites, max_leaves=6), specs(KERNEL_NAMES))


@settings(max_examples=400, deadline=None)
@given(kernel_specs)
def test_any_kernel_spec_reads_or_says_why(spec):
    try:
        kernel = from_spec(spec)
    except InputError as exc:
        assert str(exc)
        return
    assert isinstance(kernel, BaseKernel)
    lo, hi = kernel.minmax
    assert not math.isnan(lo) and not math.isnan(hi)
    if kernel.unnamed():  # a kernel that names no feature is named by the algorithm's check
        return
    kernel.row_source("python", kernel.features, {f: 4 for f in kernel.sequence_features})
    kernel.row_source("c", kernel.features, {f: 4 for f in kernel.sequence_features})
    record = {f: ([1.0, 2.0] if f in kernel.sequence_features else 1.0) for f in kernel.features}
    value = kernel(record, record)
    assert np.ndim(value) == 0 and len(kernel.gradient(record, record)) == len(kernel.hyperparameters)


@settings(max_examples=300, deadline=None)
@given(specs(["uniform", "constant", "feature", "assign", "product", "sum", "values", "on", "p", "default"]))
def test_any_start_probability_spec_reads_or_says_why(spec):
    try:
        p = probability.from_spec(spec)
    except InputError as exc:
        assert str(exc)
        return
    nodes = {"label": np.array([0, 1, 2]), "x": np.array([1.0, 2.0, 3.0])}
    if isinstance(p, probability.StartProbability):
        try:
            values, grads = probability.start_values(p, nodes, 3, gradient=True)
        except InputError:
            return  # e.g. a feature the nodes lack, named
        assert values.shape == (3,) and grads.shape == (3, len(p.hyperparameters))
