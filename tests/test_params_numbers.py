"""Numbers in parameter models: ``True``/``False`` is never taken as 1/0 where a field wants a number
(every algorithm's and generator's Params, and third-party ones, through the Params base), and every
``seed`` is an integer the kernels take (graphops.host.numbers.Seed)."""
from __future__ import annotations

import typing
from typing import Annotated, Any, Literal, Optional

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphops as go
import pandas as pd
from graphops.host.registry import get_registry
from graphops.host.validation import build_params


def _plain(annotation: Any) -> Any:
    return typing.get_args(annotation)[0] if typing.get_origin(annotation) is Annotated else annotation


def _numeric(annotation: Any) -> bool:
    """int or float, alone, optional, or a Literal of numbers (read independently of the rule's own)."""
    ann = _plain(annotation)
    args = typing.get_args(ann)
    if ann in (int, float):
        return True
    if typing.get_origin(ann) is Literal:
        return all(type(a) in (int, float) for a in args)
    return bool(args) and typing.get_origin(ann) is not Literal and type(None) in args and all(
        _plain(a) in (int, float, type(None)) for a in args)


def _models() -> list[tuple[str, type[pydantic.BaseModel]]]:
    registry = get_registry()
    algos = [(f"algorithm {a.name}", a.params) for a in registry.algorithms.values()]
    return algos + [(f"generator {g.name}", g.model) for g in registry.generators.values()]


NUMBER_FIELDS = [(where, model, name) for where, model in _models()
                 for name, field in model.model_fields.items() if _numeric(field.annotation)]
SEED_FIELDS = [(where, model) for where, model in _models() if "seed" in model.model_fields]


def test_the_fields_under_test_are_found():
    wheres = {w for w, _ in SEED_FIELDS}
    assert {"generator rmat", "generator gnm", "generator gnp_set", "generator pattern",
            "generator random_cycles", "generator de_bruijn"} <= wheres
    assert {("algorithm appclass", "top_k"), ("algorithm mg_kernel", "q"), ("algorithm jaccard", "cpu_share"),
            ("generator rmat", "scale"), ("generator gnp_set", "p")} <= {(w, n) for w, _, n in NUMBER_FIELDS}


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(NUMBER_FIELDS), st.booleans())
def test_every_number_field_refuses_true_and_false(case, value):
    where, model, name = case
    with pytest.raises(pydantic.ValidationError) as info:
        model(**{name: value})
    errors = [e for e in info.value.errors() if e["loc"] == (name,)]
    assert errors and errors[0]["type"] == "bool_not_number", where
    assert errors[0]["msg"].endswith(", not a boolean (true/false); write the number itself")
    assert errors[0]["input"] is value


@pytest.mark.parametrize("where, model", SEED_FIELDS, ids=[w for w, _ in SEED_FIELDS])
def test_every_seed_is_an_integer_the_kernels_take(where, model):
    def seed_errors(seed: Any) -> list[dict]:
        try:
            model(seed=seed)
        except pydantic.ValidationError as exc:
            return [e for e in exc.errors() if e["loc"] == ("seed",)]
        return []

    for bad, message in ((-1, "Input should be greater than or equal to 0"),
                         (2**64, "Input should be less than or equal to 9223372036854775807"),
                         (True, "Input should be an integer, not a boolean")):
        errors = seed_errors(bad)
        assert errors and errors[0]["msg"].startswith(message), (where, bad)
    assert seed_errors(0) == [] and seed_errors(2**63 - 1) == []


def test_a_python_call_names_the_parameter():
    g = go.Graph.from_edgelist(__import__("pandas").DataFrame({"src": [0, 1], "dst": [1, 2]}), directed=True)
    with pytest.raises(go.InputError) as info:
        go.run("appclass", g, g, top_k=True)
    assert str(info.value) == ("appclass: invalid parameters\n  top_k: Input should be an integer, not a boolean "
                               "(true/false); write the number itself (got True)")


@pytest.mark.parametrize("algorithm, params, where", [
    ("mg_kernel", {"q_bounds": [0.01, True]}, "q_bounds[1]"),
    ("mg_kernel", {"lmin": True}, "lmin"),
    ("sp_kernel", {"node_kernel": {"gaussian": {"gamma": True}}}, "node_kernel.gaussian.gamma"),
])
def test_bools_are_found_inside_tuples_literals_and_nested_models(algorithm, params, where):
    with pytest.raises(ValueError) as info:
        build_params(get_registry().algorithm(algorithm), params)
    assert f"  {where}: Input should be " in str(info.value) and "not a boolean" in str(info.value)


class _ThirdParty(go.Params):
    count: Optional[int] = None
    weights: tuple[float, ...] = ()
    by_name: dict[str, float] = {}
    flag: bool = False
    either: int | bool = 0
    anything: Any = None


@pytest.mark.parametrize("given_, loc", [
    ({"count": True}, ("count",)), ({"weights": (1.0, False)}, ("weights", 1)),
    ({"by_name": {"a": True}}, ("by_name", "a")),
])
def test_third_party_params_inherit_the_rule(given_, loc):
    with pytest.raises(pydantic.ValidationError) as info:
        _ThirdParty(**given_)
    assert [e["loc"] for e in info.value.errors()] == [loc]


def test_bools_stay_bools_where_a_field_takes_them():
    p = _ThirdParty(flag=True, either=True, anything=False, count=3, weights=(1, 2.5))
    assert (p.flag, p.either, p.anything, p.count, p.weights) == (True, True, False, 3, (1.0, 2.5))


def test_a_pipeline_file_names_the_key(tmp_path):
    (tmp_path / "p.yaml").write_text(
        "version: 1\ngraphs:\n  g: {generate: {kind: rmat, scale: 3, seed: 18446744073709551616}}\n"
        "  h: {generate: {kind: gnm, n: 5, m: 3, seed: true}}\n"
        "steps: [{id: s, algorithm: jaccard, inputs: {graph: h}, params: {cpu_share: false}}]\n")
    with pytest.raises(go.ConfigError) as info:
        go.load_pipeline(tmp_path / "p.yaml")
    text = str(info.value)
    assert ("==> At graphs.g\n==> At key: generate.seed\n=====> Input should be less than or equal to "
            "9223372036854775807 (got 18446744073709551616)") in text
    assert ("==> At graphs.h\n==> At key: generate.seed\n=====> Input should be an integer, not a boolean "
            "(true/false); write the number itself (got True)") in text
    assert ("==> At key: params.cpu_share\n=====> Input should be a number, not a boolean (true/false); write "
            "the number itself (got False)") in text


def _bounded(field: Any) -> bool:
    import annotated_types as at

    kinds = [type(m) for m in field.metadata]
    return any(k in (at.Ge, at.Gt) for k in kinds) and any(k in (at.Le, at.Lt) for k in kinds)


def test_every_number_of_every_params_model_has_a_range():
    """A number beyond what the kernels take (a 30-digit max_iter reached Numba as a typing error)
    is refused by the model: every int and float field is bounded below and above (a Literal of
    numbers lists its values)."""
    open_ended = [f"{where}.{name}" for where, model in _models() for name, field in model.model_fields.items()
                  if _numeric(field.annotation) and typing.get_origin(_plain(field.annotation)) is not Literal
                  and not _bounded(field)]
    assert open_ended == []


def _floats(annotation: Any) -> bool:
    ann = _plain(annotation)
    return ann is float or (type(None) in typing.get_args(ann) and float in map(_plain, typing.get_args(ann)))


def _bools(annotation: Any) -> bool:
    ann = _plain(annotation)
    return ann is bool or (typing.get_origin(ann) is not Literal and set(map(_plain, typing.get_args(ann)))
                           == {bool, type(None)})


FLOAT_FIELDS = [(where, model, name) for where, model in _models()
                for name, field in model.model_fields.items() if _floats(field.annotation)]
BOOL_FIELDS = [(where, model, name) for where, model in _models()
               for name, field in model.model_fields.items() if _bools(field.annotation)]


def _errors(model: type, name: str, value: Any) -> list[dict]:
    with pytest.raises(pydantic.ValidationError) as info:
        model(**{name: value})
    return [e for e in info.value.errors() if e["loc"] == (name,)]


def test_the_float_and_bool_fields_under_test_are_found():
    assert {("algorithm appclass", "memory_limit"), ("algorithm mg_kernel", "q"), ("algorithm mg_kernel", "tol"),
            ("algorithm jaccard", "cpu_share"), ("generator rmat", "a")} <= {(w, n) for w, _, n in FLOAT_FIELDS}
    assert {("algorithm mg_kernel", "normalize"), ("algorithm sp_kernel", "normalize"),
            ("generator rmat", "directed")} <= {(w, n) for w, _, n in BOOL_FIELDS}


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(FLOAT_FIELDS), st.sampled_from([float("nan"), float("inf"), float("-inf")]))
def test_every_float_field_refuses_nan_and_infinity(case, value):
    where, model, name = case
    errors = _errors(model, name, value)
    assert errors and errors[0]["type"] == "finite_number" and errors[0]["msg"] == "Input should be a finite number", \
        where


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(NUMBER_FIELDS), st.one_of(st.integers(0, 10).map(str), st.floats(0, 1).map(str),
                                                 st.sampled_from(["", "two", "1e-3", " 3 "])))
def test_every_number_field_refuses_text(case, value):
    where, model, name = case
    errors = _errors(model, name, value)
    assert errors and errors[0]["type"] == "text_not_number", (where, errors)
    assert errors[0]["msg"].startswith("Input should be ") and ", not text; write the number without quotes" in \
        errors[0]["msg"]


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(BOOL_FIELDS), st.sampled_from(["yes", "no", "true", "on", "1", 1, 0, 1.0, [True], {"a": 1}]))
def test_every_bool_field_takes_only_true_or_false(case, value):
    where, model, name = case
    errors = _errors(model, name, value)
    assert errors and errors[0]["type"] == "bool_not_other", (where, errors)
    assert errors[0]["msg"].startswith("Input should be a boolean (true or false), not ")


@pytest.mark.parametrize("params, line", [
    ({"memory_limit": float("nan")}, "memory_limit: Input should be a finite number (got nan)"),
    ({"top_k": "2"}, "top_k: Input should be an integer, not text; write the number without quotes (got '2')"),
])
def test_a_python_call_names_the_nan_or_the_text(params, line):
    g = go.Graph.from_edgelist(__import__("pandas").DataFrame({"src": [0, 1], "dst": [1, 2]}), directed=True)
    with pytest.raises(go.InputError) as info:
        go.run("appclass", g, g, **params)
    assert str(info.value) == f"appclass: invalid parameters\n  {line}"


@pytest.mark.parametrize("params, line", [
    ({"normalize": "yes"}, "normalize: Input should be a boolean (true or false), not text; write true or false "
                           "(got 'yes')"),
    ({"normalize": 1}, "normalize: Input should be a boolean (true or false), not a number; write true or false "
                       "(got 1)"),
    ({"node_kernel": {"gaussian": {"gamma": float("inf")}}},
     "node_kernel.gaussian.gamma: Input should be a finite number (got inf)"),
    ({"q": "1e-3"}, "q: Input should be a number, not text; write the number without quotes (got '1e-3')"),
])
def test_nested_models_and_kernels_parameters_are_strict_too(params, line):
    algorithm = "mg_kernel" if "q" in params else "sp_kernel"
    with pytest.raises(go.InputError) as info:
        build_params(get_registry().algorithm(algorithm), params)
    assert str(info.value) == f"{algorithm}: invalid parameters\n  {line}"


class _Infinite(go.Params):
    limit: float = pydantic.Field(1.0, allow_inf_nan=True)
    values: list[Annotated[float, pydantic.AllowInfNan(True)]] = []
    flag: Optional[bool] = None
    choice: float | str = 1.0


def test_a_field_may_take_infinity_and_unions_with_text_take_text():
    assert _Infinite(limit=float("inf")).limit == float("inf")
    assert _Infinite(values=[1.0, float("-inf")]).values[1] == float("-inf")
    assert _Infinite(flag=None, choice="auto").choice == "auto" and _Infinite(flag=False).flag is False
    with pytest.raises(pydantic.ValidationError, match="Input should be a boolean"):
        _Infinite(flag="no")
    with pytest.raises(pydantic.ValidationError, match="Input should be a finite number"):
        _Infinite(choice=float("nan"))


def test_yaml_true_false_and_numbers_still_validate_and_yes_is_refused(tmp_path):
    (tmp_path / "p.yaml").write_text(
        "version: 1\ngraphs:\n  g: {generate: {kind: gnp_set, sizes: {4: 2}, p: 0.5, seed: 1}}\n"
        "steps:\n  - {id: ok, algorithm: sp_kernel, inputs: {graphs: g}, params: {normalize: true}}\n"
        "  - {id: bad, algorithm: sp_kernel, inputs: {graphs: g}, params: {normalize: yes}}\n")
    with pytest.raises(go.ConfigError) as info:
        go.load_pipeline(tmp_path / "p.yaml")
    text = str(info.value)
    assert "(1 error)" in text and "==> At steps[1] (id='bad', algorithm='sp_kernel')" in text
    assert text.endswith("==> At key: params.normalize\n=====> Input should be a boolean (true or false), not "
                         "text; write true or false (got 'yes')")


@pytest.mark.parametrize("value, fix", [(2.0, "write 2"), (2.5, "write a whole number")])
def test_a_decimal_where_an_integer_is_wanted_is_refused_in_params_too(value, fix):
    """Pipeline keys refused 2.0 for an integer while params took it as 2 (and top_k=1.0 ran)."""
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [0, 1], "dst": [1, 2]}), directed=True)
    with pytest.raises(go.InputError) as info:
        go.run("appclass", g, g, top_k=value)
    assert f"top_k: Input should be an integer, not a decimal number; {fix}" in str(info.value)
