"""scikit-learn's contract for the graph-kernel estimators (ShortestPathKernel,
MarginalizedGraphKernel): what scikit-learn's splitters, pipelines, searches, clone, pickle and
Gaussian processes do with them, on every backend; and scikit-learn's own estimator checks, where
they apply to graph inputs (the others are listed with why, in NOT_APPLICABLE)."""
from __future__ import annotations

import inspect
import pickle
import warnings

import numpy as np
import pytest

import graphops as go
from graphops.errors import InputError, InputTypeError
from graphops.kernels import KroneckerDelta, MarginalizedGraphKernel, ShortestPathKernel, TensorProduct

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

BACKENDS = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]


@pytest.fixture(scope="module")
def mutag():
    gs = go.datasets.load("MUTAG")
    return gs, np.asarray(gs.graph_labels)


def estimators(backend):
    return [ShortestPathKernel(backend=backend, normalize=True),
            MarginalizedGraphKernel(backend=backend, normalize=True)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("which", [0, 1])
def test_cross_val_score_in_a_pipeline_on_lists_arrays_and_networkx(mutag, backend, which):
    """scikit-learn indexes X and hands the estimator a list (or an object array) of graphs in
    every fold; networkx graphs work the same way, with their features named as
    GraphSet.from_networkx names them."""
    gs, y = mutag
    gs, y = gs[:90], y[:90]
    pipe = make_pipeline(estimators(backend)[which], SVC(kernel="precomputed"))
    whole = cross_val_score(pipe, gs, y, cv=3)
    as_list = cross_val_score(pipe, [gs[i] for i in range(len(gs))], y, cv=3)
    as_array = cross_val_score(pipe, np.asarray([gs[i] for i in range(len(gs))], dtype=object), y, cv=3)
    nx_graphs = [gs[i].to_networkx() for i in range(len(gs))]
    from_nx = cross_val_score(pipe, nx_graphs, y, cv=3)
    np.testing.assert_array_equal(whole, as_list)
    np.testing.assert_array_equal(whole, as_array)
    np.testing.assert_array_equal(whole, from_nx)
    assert whole.mean() > 0.6


@pytest.mark.parametrize("backend", BACKENDS)
def test_grid_search_over_kernel_hyperparameters(mutag, backend):
    """GridSearchCV sets nested kernel hyperparameters (node_kernel__h) through the pipeline."""
    gs, y = mutag
    pipe = make_pipeline(MarginalizedGraphKernel(backend=backend, normalize=True), SVC(kernel="precomputed"))
    search = GridSearchCV(pipe, {"marginalizedgraphkernel__node_kernel__h": [0.3, 0.8],
                                 "marginalizedgraphkernel__q": [0.05, 0.2]}, cv=3)
    search.fit([gs[i] for i in range(60)], y[:60])
    assert set(search.best_params_) == {"marginalizedgraphkernel__node_kernel__h", "marginalizedgraphkernel__q"}
    best = search.best_estimator_[0]
    assert best.node_kernel.hyperparameters[0].value == search.best_params_["marginalizedgraphkernel__node_kernel__h"]
    sp = GridSearchCV(make_pipeline(ShortestPathKernel(backend=backend), SVC(kernel="precomputed")),
                      {"shortestpathkernel__normalize": [True, False]}, cv=3).fit(gs[:60], y[:60])
    assert "shortestpathkernel__normalize" in sp.best_params_


def test_nested_parameters_get_set_and_clone():
    k = MarginalizedGraphKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.5)), normalize=True)
    params = k.get_params()
    assert params["node_kernel__label__h"] == 0.5 and params["edge_kernel__h"] == 0.5
    assert "node_kernel__label__h" not in k.get_params(deep=False)
    k.set_params(node_kernel__label__h=0.25, q=0.1)
    assert k.node_kernel.hyperparameters[0].value == 0.25 and k.q == 0.1
    assert [h.name for h in k.hyperparameters] == ["q", "node_kernel__label__h", "edge_kernel__h"]
    twin = clone(k)
    assert twin.get_params() == k.get_params() and twin is not k
    with pytest.raises(InputError, match="has no hyperparameter 'hh'.*Did you mean 'label__h'|no hyperparameter"):
        k.set_params(node_kernel__hh=0.1)
    with pytest.raises(InputError, match="no parameter 'normalise'.*Did you mean 'normalize'"):
        k.set_params(normalise=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'normalise'"):
        ShortestPathKernel(normalise=True)
    yaml_form = MarginalizedGraphKernel(node_kernel={"kronecker_delta": {"h": 0.5, "on": "label"}})
    assert yaml_form.get_params()["node_kernel__h"] == 0.5  # a YAML mapping is a kernel too


@pytest.mark.parametrize("backend", BACKENDS)
def test_fitted_estimators_pickle_and_clone(mutag, backend):
    gs, _ = mutag
    for k in estimators(backend):
        k.fit(gs[:30])
        back = pickle.loads(pickle.dumps(k))
        np.testing.assert_array_equal(_host(back.transform(gs[30:40])), _host(k.transform(gs[30:40])))
        fresh = clone(k)
        assert not hasattr(fresh, "train_") and fresh.get_params() == k.get_params()


def _host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gaussian_process_fits_the_kernel_hyperparameters(mutag, backend):
    """GaussianProcessRegressor(kernel=MarginalizedGraphKernel(...)).fit(graphs, y) optimizes the
    hyperparameters through eval_gradient: theta moves and the log marginal likelihood improves."""
    from sklearn.gaussian_process import GaussianProcessRegressor

    gs, y = mutag
    kernel = MarginalizedGraphKernel(backend=backend, normalize=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # L-BFGS-B may stop at a bound and say so
        gp = GaussianProcessRegressor(kernel=kernel, normalize_y=True).fit([gs[i] for i in range(30)],
                                                                           y[:30].astype(float))
    assert not np.allclose(gp.kernel_.theta, kernel.theta)
    assert gp.log_marginal_likelihood_value_ > gp.log_marginal_likelihood(kernel.theta)
    assert gp.predict(gs[30:35]).shape == (5,)


# scikit-learn's estimator checks. Those it runs for an estimator whose tags say "not 2-D array
# input" pass (check_estimator); of the rest, these pass too:
API_CHECKS = ("check_estimator_cloneable", "check_estimator_repr", "check_estimators_unfitted",
              "check_get_params_invariance", "check_set_params", "check_parameters_default_constructible",
              "check_no_attributes_set_in_init", "check_do_not_raise_errors_in_init_or_set_params",
              "check_valid_tag_types", "check_estimator_tags_renamed",
              "check_mixin_order")
# and these cannot apply to graph inputs (docs/algorithms/mg_kernel.md lists them too):
NOT_APPLICABLE = {
    "numeric X": "the check fits on NumPy, sparse or pandas arrays; a graph kernel takes graphs, and says so "
                 "(InputTypeError naming what it takes)",
    "sample_weight": "a kernel has no sample weights",
    "predictor": "classifier, regressor and outlier checks: a kernel is a transformer, not a predictor",
    "y": "y is ignored (the kernel is unsupervised), so y's checks do not apply",
    "array API": "array-API checks need an array namespace as input",
    "check_param_validation": "parameters are validated by the algorithm's pydantic model when the kernel is "
                              "computed (one place for Python, YAML and estimators), not by _parameter_constraints",
    "check_get_feature_names_out_error": "a Gram matrix's columns are the training graphs: no feature names",
    "check_nonsquare_error": "not a pairwise (precomputed-matrix) estimator: it computes the matrix",
}


def _why(name, exc):
    if "sample_weight" in name or "sample_weight" in str(exc):
        return "sample_weight"
    if any(w in name for w in ("classifier", "regressor", "outlier", "decision_proba", "class_weight")):
        return "predictor"
    if "array_api" in name:
        return "array API"
    if "supervised_y" in name or "requires_y" in name:
        return "y"
    if name in NOT_APPLICABLE:
        return name
    if isinstance(exc, (InputTypeError, InputError)) and ("takes a graphops.GraphSet" in str(exc)
                                                           or "no graphs" in str(exc)):
        return "numeric X"
    if isinstance(exc, AssertionError) and any(w in str(exc) for w in ("sparse", "NaN", "nan", "positive",
                                                                         "not an array", "empty data")):
        return "numeric X"
    return None


@pytest.mark.parametrize("make", [ShortestPathKernel, MarginalizedGraphKernel])
def test_scikit_learn_estimator_checks(make):
    import sklearn.utils.estimator_checks as checks

    est = make(backend="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = checks.check_estimator(est, on_fail=None)
    assert results and all(r["status"] in ("passed", "skipped") for r in results), results
    unexplained, passed = [], set()
    for name in dir(checks):
        fn = getattr(checks, name)
        if not name.startswith("check_") or name == "check_estimator" or not callable(fn):
            continue
        params = list(inspect.signature(fn).parameters.values())
        if [q.name for q in params[:2]] not in (["name", "estimator_orig"], ["name", "estimator"]) or \
                any(q.default is inspect.Parameter.empty for q in params[2:]):
            continue  # not a check of an estimator alone
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(make.__name__, make(backend="cpu"))
            passed.add(name)
        except Exception as exc:  # noqa: BLE001 - sorted by why below
            if _why(name, exc) is None:
                unexplained.append(f"{name}: {type(exc).__name__}: {str(exc)[:200]}")
    assert not unexplained, "\n".join(unexplained)
    assert set(API_CHECKS) <= passed, sorted(set(API_CHECKS) - passed)
