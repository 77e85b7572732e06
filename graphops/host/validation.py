"""Turning pydantic validation errors into graphops' messages (shared by Python calls and YAML)."""
from __future__ import annotations

import re
import typing
from typing import Any, Mapping

import pydantic

from graphops.errors import InputError, choices, did_you_mean

NAME_PATTERN = r"^[a-z][a-z0-9_-]*$"

__all__ = ["explain", "format_loc", "params_error", "build_params", "shown", "validated"]


def format_loc(loc: tuple) -> str:
    """``("params", "x", 0)`` -> ``params.x[0]``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _is_model(ann: Any) -> bool:
    return isinstance(ann, type) and issubclass(ann, pydantic.BaseModel)


def _step_into(ann: Any, part: Any) -> Any:
    """The annotation one level below ``ann`` at key/index ``part`` (None when unknown); in a tagged
    union, ``part`` may be the tag pydantic puts in the location: the member it names."""
    if typing.get_origin(ann) is typing.Annotated:
        ann = typing.get_args(ann)[0]
    tagged = {getattr(m, "tag", None): typing.get_args(a)[0] for a in typing.get_args(ann)
              if typing.get_origin(a) is typing.Annotated
              for m in typing.get_args(a)[1:] if type(m).__name__ == "Tag"}
    if part in tagged:
        return tagged[part]
    if _is_model(ann):
        field = ann.model_fields.get(part) if isinstance(part, str) else None
        return field.annotation if field is not None else None
    args = typing.get_args(ann)
    if typing.get_origin(ann) in (list, dict) and args:
        return args[-1]
    models = [a for a in args if _is_model(a)]
    return _step_into(models[0], part) if models else None


def _fields(model: Any, loc: tuple) -> list[str]:
    """Field names allowed at ``loc`` (the parent of the bad key), when it is a model."""
    ann = model
    for part in loc[:-1]:
        ann = _step_into(ann, part)
    if not _is_model(ann):
        ann = next((a for a in typing.get_args(ann) if _is_model(a)), None)
    return list(ann.model_fields) if ann is not None else []


def explain(err: dict[str, Any], model: type[pydantic.BaseModel] | None = None) -> str:
    """One readable sentence for one pydantic error dict: what is wrong, the value, the choices."""
    kind, loc = err["type"], err["loc"]
    key = loc[-1] if loc else None
    if kind == "extra_forbidden":
        allowed = _fields(model, loc)
        return f"Unknown key {key!r}. Allowed keys: {choices(allowed)}.{did_you_mean(key, allowed)}"
    if kind == "missing":
        return f"Missing required key {key!r}"
    message = err["msg"]
    if kind == "literal_error":
        expected = re.findall(r"'([^']*)'", str(err.get("ctx", {}).get("expected", "")))
        return f"{message} (got {shown(err['input'])}).{did_you_mean(err['input'], expected)}"
    if kind == "string_pattern_mismatch" and err.get("ctx", {}).get("pattern") == NAME_PATTERN:
        return (f"Invalid name {err['input']!r}: names start with a lowercase letter and use only "
                f"a-z, 0-9, '_' and '-'")
    if kind == "too_short":
        return f"Needs at least {err['ctx']['min_length']} entry (got none)"
    if kind == "union_tag_invalid":  # a generator's kind: 'rmatt'
        expected = re.findall(r"'([^']*)'", str(err.get("ctx", {}).get("expected_tags", "")))
        tag = err.get("ctx", {}).get("tag")
        return f"Unknown kind {tag!r}. Allowed: {choices(expected)}.{did_you_mean(tag, expected)}"
    if kind.startswith("value_error"):
        message = message.removeprefix("Value error, ")
    whole_file = not loc and model is not None and "steps" in getattr(model, "model_fields", {})
    if f"got {err['input']!r}" in message or whole_file:
        return message  # (a rule of the whole file's: the file itself is not a value to show)
    return f"{message} (got {shown(err['input'])})"


def shown(value: Any, limit: int = 200) -> str:
    """``repr(value)``, cut in the middle when long (an expanded YAML alias can be megabytes)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit // 2]} ... {text[-limit // 4:]} ({len(text):,} characters)"


def params_error(algorithm: str, exc: pydantic.ValidationError, model: type) -> ValueError:
    """A ``ValueError`` listing every bad parameter of a Python call."""
    lines = [f"  {format_loc(e['loc']) or '(params)'}: {explain(e, model)}" for e in exc.errors()]
    return InputError(f"{algorithm}: invalid parameters\n" + "\n".join(lines))


def validated(what: str, model: type[pydantic.BaseModel], values: Mapping[str, Any]) -> Any:
    """``model(**values)``, its errors one readable ``InputError`` naming ``what`` was called and each
    bad value (:func:`params_error`): a Python call checked as the file key it stands for is."""
    try:
        return model(**values)
    except pydantic.ValidationError as exc:
        raise params_error(what, exc, model) from None


def build_params(algorithm: Any, params: dict[str, Any]) -> Any:
    """``algorithm.params(**params)`` with errors rewritten as a readable ``ValueError``."""
    return validated(algorithm.name, algorithm.params, params)
