"""Base kernels: values, derivatives against finite differences, generated code against the
array evaluation, YAML forms, and the range checks for node and edge kernels."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from graphops import InputError
from graphops.kernels.basekernels import Additive, Constant, KroneckerDelta, Normalized, SquareExponential, TensorProduct
from graphops.kernels.spec import compile_kernel, from_spec

RNG = np.random.default_rng(0)
X = {"label": RNG.integers(0, 3, 40).astype(float), "charge": RNG.normal(size=40), "w": RNG.random(40)}
Y = {"label": RNG.integers(0, 3, 40).astype(float), "charge": RNG.normal(size=40), "w": RNG.random(40)}

KERNELS = [
    KroneckerDelta(0.5, on="label"),
    SquareExponential(1.3, on="charge"),
    Constant(0.7),
    TensorProduct(label=KroneckerDelta(0.3), charge=SquareExponential(0.8)),
    Additive(label=KroneckerDelta(0.3), charge=SquareExponential(0.8)).normalized,
    KroneckerDelta(0.5, on="label") * SquareExponential(2.0, on="w") * Constant(0.9),
    (KroneckerDelta(0.2, on="label") + Constant(0.4)).normalized,
    TensorProduct(label=KroneckerDelta(0.5), w=SquareExponential(0.5)).normalized * Constant(0.5),
]


def reference(kernel, x, y):
    """Element by element in plain Python, from the definitions."""
    def k(kernel, a, b):
        if isinstance(kernel, KroneckerDelta):
            return 1.0 if a[kernel.on] == b[kernel.on] else kernel.value
        if isinstance(kernel, SquareExponential):
            return math.exp(-(a[kernel.on] - b[kernel.on]) ** 2 / (2 * kernel.value ** 2))
        if isinstance(kernel, Constant):
            return kernel.value
        if isinstance(kernel, Normalized):
            return k(kernel.kernel, a, b) / math.sqrt(k(kernel.kernel, a, a) * k(kernel.kernel, b, b))
        values = [k(part, a, b) for part in kernel.parts]
        return sum(values) if kernel.symbol == "+" else math.prod(values)

    rows = [({f: v[i] for f, v in x.items()}, {f: v[i] for f, v in y.items()}) for i in range(40)]
    return np.array([k(kernel, a, b) for a, b in rows])


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
def test_values_match_the_definitions(kernel):
    np.testing.assert_allclose(kernel(X, Y), reference(kernel, X, Y), rtol=1e-14)
    assert np.all(kernel(X, X) > 0)


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
def test_derivatives_match_finite_differences(kernel):
    values = [h.value for h in kernel.hyperparameters]
    grads = kernel.gradient(X, Y)
    assert len(grads) == len(values)
    for i, v in enumerate(values):
        step = 1e-6 * v
        up = np.asarray(kernel.with_values([w + step if j == i else w for j, w in enumerate(values)])(X, Y))
        down = np.asarray(kernel.with_values([w - step if j == i else w for j, w in enumerate(values)])(X, Y))
        np.testing.assert_allclose(np.broadcast_to(grads[i], up.shape), (up - down) / (2 * step),
                                   rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
def test_generated_code_equals_the_array_evaluation(kernel):
    fn, names = compile_kernel(kernel, ["label", "charge", "w"])
    gfn, _ = compile_kernel(kernel, names, gradient=True)
    p = np.array([h.value for h in kernel.hyperparameters])
    xs = np.stack([X[n] for n in names], 1)
    ys = np.stack([Y[n] for n in names], 1)
    got = np.array([fn(xs[i], ys[i], p) for i in range(40)])
    np.testing.assert_allclose(got, kernel(X, Y), rtol=1e-14)
    out = np.empty(len(p))
    grads = np.broadcast_arrays(*kernel.gradient(X, Y), np.empty(40))[:-1]
    for i in range(40):
        assert gfn(xs[i], ys[i], p, out) == pytest.approx(got[i], rel=1e-14)
        np.testing.assert_allclose(out, [g[i] for g in grads], rtol=1e-12, atol=1e-15)
    # C source has the same shape (compiled on the GPU by the plugin)
    value, cgrads = kernel.source("c", {n: f"x{n}" for n in names}, {n: f"y{n}" for n in names})
    assert "math." not in value and len(cgrads) == len(p)


def test_new_hyperparameter_values_reuse_the_compiled_function():
    a, _ = compile_kernel(KroneckerDelta(0.5, on="label"))
    b, _ = compile_kernel(KroneckerDelta(0.9, on="label"))
    assert a is b


def test_hyperparameters_bounds_fixed_and_theta():
    k = TensorProduct(label=KroneckerDelta(0.5, h_bounds="fixed"), charge=SquareExponential(2.0))
    hs = k.hyperparameters
    assert [h.name for h in hs] == ["h", "length_scale"]
    assert hs[0].fixed and not hs[1].fixed
    np.testing.assert_allclose(k.theta, [math.log(2.0)])
    assert KroneckerDelta(0.5).hyperparameters[0].bounds == (1e-3, 1.0)
    assert k.features == ("label", "charge")


def test_yaml_forms():
    assert from_spec({"kronecker_delta": {"h": 0.5, "on": "label"}}) == KroneckerDelta(0.5, on="label")
    assert from_spec({"kronecker_delta": 0.5}) == KroneckerDelta(0.5)
    k = from_spec({"tensor_product": {"label": {"kronecker_delta": {"h": 0.5}},
                                      "charge": {"square_exponential": {"length_scale": 1.0}}}})
    assert k == TensorProduct(label=KroneckerDelta(0.5), charge=SquareExponential(1.0))
    k = from_spec({"normalized": {"sum": [{"constant": 0.5}, {"kronecker_delta": {"h": 0.1, "on": "a"}}]}})
    assert k == (Constant(0.5) + KroneckerDelta(0.1, on="a")).normalized


@pytest.mark.parametrize("spec,message", [
    ({"kronecker_delt": {"h": 0.5}}, "Did you mean 'kronecker_delta'"),
    ({"kronecker_delta": {"h": 1.5}}, "h=1.5 is outside [0.0, 1.0]"),
    ({"kronecker_delta": {"h": 0.5, "of": "x"}}, "unknown key(s) 'of'; allowed: h, on, h_bounds"),
    ({"kronecker_delta": {"on": "x"}}, "h is required"),
    ({"square_exponential": {"length_scale": 0}}, "length_scale=0.0 is outside (0.0, inf]"),
    ({"square_exponential": {"length_scale": "big"}}, "length_scale must be a number"),
    ({"tensor_product": {"a": {"tensor_product": {"b": {"constant": 0.5}}}}}, "names its own features"),
    ({"power": {"kernel": {"constant": 0.5}}}, "expected {kernel: ..., exponent: ...}"),
    ({"power": {"kernel": {"constant": 0.5}, "exponent": -1}}, "c=-1.0 is outside"),
    ({"power": {"kernel": {"constant": 0.5}, "exponent": 0}}, "must be > 0"),
    ({"rational_quadratic": {"length_scale": 1.0}}, "alpha is required"),
    ({"constant": 0.5, "sum": []}, "one key"),
    ("kronecker_delta", "a mapping with one key"),
])
def test_yaml_errors_name_the_problem(spec, message):
    with pytest.raises(InputError) as err:
        from_spec(spec, "mg.yaml: step 'k': node_kernel")
    assert message in str(err.value)
    assert str(err.value).startswith("mg.yaml: step 'k': node_kernel")


def test_node_and_edge_kernel_ranges():
    KroneckerDelta(0.5).check("node_kernel")
    KroneckerDelta(0.0).check("edge_kernel")
    with pytest.raises(InputError, match="can be 0; a node kernel must stay in"):
        KroneckerDelta(0.0).check("node_kernel")
    with pytest.raises(InputError, match="can reach 2, above 1.*normalized"):
        (KroneckerDelta(0.5) + Constant(1.0)).check("edge_kernel")
    (KroneckerDelta(0.5, on="a") + Constant(1.0)).normalized.check("node_kernel")
    with pytest.raises(InputError, match="lies outside its bounds"):
        KroneckerDelta(0.5, h_bounds=(0.6, 1.0))


def test_a_missing_feature_is_named():
    with pytest.raises(InputError, match="reads the feature 'charge', which is not there"):
        SquareExponential(1.0, on="charge")({"label": np.zeros(2)}, {"label": np.zeros(2)})
    with pytest.raises(InputError, match="names no feature"):
        KroneckerDelta(0.5)({"label": 1}, {"label": 1})
    with pytest.raises(InputError, match="not among the features"):
        compile_kernel(KroneckerDelta(0.5, on="charge"), ["label"])


def test_dense_marginalized_reference_reproduces_the_published_values(shared_data):
    """The float64 dense solve in GraphDot's convention gives the spec's MUTAG values, so the
    backends can be checked against it (and the base kernels are what the spec means)."""
    import graphops as go
    from tests.reference.mg_kernel import mg_kernel_matrix

    gs = go.read_tu(shared_data / "tu" / "MUTAG")
    kd = KroneckerDelta(0.5, on="label")
    K = mg_kernel_matrix(gs, kd, kd, 0.05, {"label": gs.node_labels}, {"label": gs.edge_labels}, rows=[0, 1, 2])
    expected = [[1618.9180, 844.6664, 824.4690], [844.6664, 497.7169, 490.9621], [824.4690, 490.9621, 484.9265]]
    np.testing.assert_allclose(K, expected, atol=5e-5)
    norm = K / np.sqrt(np.outer(np.diag(K), np.diag(K)))
    np.testing.assert_allclose([norm[0, 1], norm[0, 2], norm[1, 2]], [0.940983, 0.930516, 0.999353], atol=5e-7)


def _bounded(cls: str, bounds):
    """A kernel or start probability with these bounds on its hyperparameter."""
    from graphops.kernels.basekernels import RationalQuadratic
    from graphops.kernels.probability import Assign, Uniform

    return {"KroneckerDelta": lambda: KroneckerDelta(0.5, h_bounds=bounds),
            "SquareExponential": lambda: SquareExponential(1.0, length_scale_bounds=bounds),
            "Constant": lambda: Constant(1.0, c_bounds=bounds),
            "RationalQuadratic": lambda: RationalQuadratic(1.0, 1.0, alpha_bounds=bounds),
            "Uniform": lambda: Uniform(1.0, p_bounds=bounds),
            "Assign": lambda: Assign("label", {1: 1.0}, bounds=bounds)}[cls]()


PARAMS = {"KroneckerDelta": "h_bounds", "SquareExponential": "length_scale_bounds", "Constant": "c_bounds",
          "RationalQuadratic": "alpha_bounds", "Uniform": "p_bounds", "Assign": "bounds"}


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(PARAMS)), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_inverted_bounds_are_refused_with_the_fix(cls, a, b):
    """(low, high) with low > high is refused naming the parameter, the value and the order to give."""
    assume(a != b)
    low, high = max(a, b), min(a, b)
    param = PARAMS[cls]
    with pytest.raises(InputError) as err:
        _bounded(cls, (low, high))
    assert str(err.value) == (f"{cls}: {param}={(low, high)!r} has low {low!r} above high {high!r}; give them in "
                              f"order, {param}=({high!r}, {low!r}), or {param}='fixed'")


def test_inverted_bounds_in_yaml_name_the_path():
    with pytest.raises(InputError) as err:
        from_spec({"tensor_product": {"label": {"kronecker_delta": {"h": 0.5, "h_bounds": [0.9, 0.1]}}}}, "edge_kernel")
    assert str(err.value) == ("edge_kernel.tensor_product.label.kronecker_delta: KroneckerDelta: h_bounds=[0.9, 0.1] "
                              "has low 0.9 above high 0.1; give them in order, h_bounds=(0.1, 0.9), or h_bounds='fixed'")
