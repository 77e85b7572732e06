"""Numbers and booleans in parameter models: pydantic's lax conversions refused, and :data:`Seed`.

pydantic's lax mode reads ``True`` as ``1`` for an ``int`` field and ``1.0`` for a ``float`` one,
``"2"`` as ``2``, and ``"yes"``, ``"on"`` or ``1`` as ``True`` for a ``bool`` one, so ``top_k: true``
in a pipeline file meant ``top_k=1`` and ``normalize="no"`` meant ``False`` without a word.
:func:`strict_values` runs before every :class:`~graphops.host.algorithm.Params` model (plugins' and
generators' alike: they inherit it) and refuses

* a bool where the field's annotation wants a number: ``int``, ``float``, a ``Literal`` of numbers;
* text where it wants a number and takes no text (a union with ``str`` takes it);
* anything but ``True``/``False`` (NumPy's bools too) where it wants a ``bool`` (or ``None`` too,
  for ``Optional[bool]``);
* ``nan`` and ``±inf`` where it wants a number, unless the field says ``Field(allow_inf_nan=True)``
  or its model's config ``allow_inf_nan=True`` (this reaches nested plain models too, which do not
  inherit :class:`~graphops.host.algorithm.Params`' ``allow_inf_nan=False``),

inside ``Optional``/unions, tuples, lists, dict values and nested models as well. Another layer
calls :func:`strict_values` from a ``model_validator(mode="before")`` of its own models for the
same rule. YAML gives real numbers and booleans (a pipeline file's ``true``/``false``, ``3``, ``0.5``).
"""
from __future__ import annotations

import math
import types
import typing
from typing import Annotated, Any

import pydantic
from pydantic import Field
from pydantic_core import PydanticCustomError

__all__ = ["Seed", "SEED_MAX", "strict_values", "lax_locations", "wants_number", "wants_bool", "takes_text"]

SEED_MAX = 2**63 - 1  # the seeds reach Numba kernels as int64 (NumPy's default_rng takes any int >= 0)

Seed = Annotated[int, Field(ge=0, le=SEED_MAX, description="a random seed: an integer in 0..2**63-1")]
"""The type of every ``seed`` parameter: an integer the kernels can take (0 to 2**63 - 1)."""

_UNIONS = (typing.Union, types.UnionType)
_SEQUENCES = (list, tuple, set, frozenset)


def _bare(annotation: Any) -> Any:
    while typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def wants_number(annotation: Any) -> str | None:
    """``"an integer"`` or ``"a number"`` when ``annotation`` takes numbers but not bools, else None."""
    ann = _bare(annotation)
    if ann is int:
        return "an integer"
    if ann is float:
        return "a number"
    args = typing.get_args(ann)
    if typing.get_origin(ann) is typing.Literal:
        if any(isinstance(a, bool) for a in args):
            return None
        numbers = [repr(a) for a in args if isinstance(a, (int, float))]
        return f"one of {', '.join(numbers)}" if numbers else None
    if typing.get_origin(ann) in _UNIONS and not any(_bare(a) in (bool, Any, object) for a in args):
        found = [w for w in map(wants_number, args) if w is not None]
        return found[0] if found else None
    return None


def _takes_float(annotation: Any) -> bool:
    """Whether ``annotation`` is ``float`` or a union holding it (``int | float`` takes 2.5)."""
    ann = _bare(annotation)
    return ann is float or (typing.get_origin(ann) in _UNIONS and any(map(_takes_float, typing.get_args(ann))))


def wants_bool(annotation: Any) -> bool:
    """Whether ``annotation`` is ``bool`` (or ``Optional[bool]``): True/False and nothing else."""
    ann = _bare(annotation)
    if ann is bool:
        return True
    args = typing.get_args(ann)
    return typing.get_origin(ann) in _UNIONS and bool(args) and all(
        _bare(a) in (bool, type(None)) for a in args) and any(_bare(a) is bool for a in args)


def takes_text(annotation: Any) -> bool:
    """Whether ``annotation`` may take a string as it is: ``str``, a ``Literal`` holding text, a
    union with one of them, and (to be safe) any class but numbers, bools, containers and models."""
    ann = _bare(annotation)
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if origin is typing.Literal:
        return any(isinstance(a, str) for a in args)
    if origin in _UNIONS:
        return any(takes_text(a) for a in args)
    if ann in (int, float, bool, type(None)) or origin in (*_SEQUENCES, dict):
        return False
    return not (isinstance(ann, type) and issubclass(ann, pydantic.BaseModel))


def _is_bool(value: Any) -> bool:
    kind = type(value)
    return isinstance(value, bool) or (kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_"))


def _not_finite(value: Any) -> bool:
    kind = type(value)
    is_float = isinstance(value, float) or (kind.__module__ == "numpy" and kind.__name__.startswith("float"))
    return is_float and not math.isfinite(float(value))


def _leaf(ann: Any, value: Any, loc: tuple, finite: bool) -> list[tuple[tuple, str, str, Any]]:
    """The problem of one value (not a container) where ``ann`` is wanted, as a list of none or one."""
    if finite and _not_finite(value) and wants_number(ann) is not None:
        return [(loc, "finite_number", "Input should be a finite number", value)]
    if _is_bool(value):
        wanted = wants_number(ann)
        return [] if wanted is None else [(loc, "bool_not_number", f"Input should be {wanted}, not a boolean "
                                                                   f"(true/false); write the number itself", value)]
    if wants_bool(ann) and value is not None:
        what = "text" if isinstance(value, str) else "a number" if isinstance(value, (int, float)) else \
            f"a {type(value).__name__}"
        return [(loc, "bool_not_other", f"Input should be a boolean (true or false), not {what}; write true or "
                                        f"false", value)]
    if isinstance(value, str) and not takes_text(ann):
        wanted = wants_number(ann)
        return [] if wanted is None else [(loc, "text_not_number", f"Input should be {wanted}, not text; write the "
                                                                   f"number without quotes", value)]
    if isinstance(value, float) and wants_number(ann) == "an integer" and not _takes_float(ann):  # 2.0 read as 2
        if value.is_integer() and abs(value) >= 2.0 ** 53:  # past exact doubles: its digits are not what was meant
            fix = "write the whole number itself, digit by digit (a number this large is no longer exact as a decimal)"
        else:
            fix = f"write {int(value)}" if value.is_integer() else "write a whole number"
        return [(loc, "float_not_integer", f"Input should be an integer, not a decimal number; {fix}", value)]
    return []


def _inner(annotation: Any, value: Any, loc: tuple, finite: bool) -> list[tuple[tuple, str, str, Any]]:
    """(location, error type, message, value) of every value in ``value`` that pydantic would convert
    laxly where ``annotation`` wants a number or a bool, and (``finite``) every nan or ±inf where it
    wants a number (module doc)."""
    said = _allows_inf_nan(typing.get_args(annotation)[1:] if typing.get_origin(annotation) is Annotated else ())
    finite = finite if said is None else not said
    ann = _bare(annotation)
    if not isinstance(value, (dict, list, tuple)) or wants_bool(ann):
        return _leaf(ann, value, loc, finite)
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if origin in _UNIONS:
        found = [_inner(a, value, loc, finite) for a in args if _shaped_like(a, value)]
        return found[0] if found and all(found) else []
    if isinstance(ann, type) and issubclass(ann, pydantic.BaseModel) and isinstance(value, dict):
        return lax_locations(ann, value, loc)
    if origin in _SEQUENCES and isinstance(value, (list, tuple)) and args:
        each = args if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis) else (args[0],) * len(value)
        return [p for i, (a, v) in enumerate(zip(each, value)) for p in _inner(a, v, (*loc, i), finite)]
    if origin is dict and isinstance(value, dict) and len(args) == 2:
        return [p for k, v in value.items()
                for p in (*_inner(args[0], k, (*loc, k), finite), *_inner(args[1], v, (*loc, k), finite))]
    return []


def _allows_inf_nan(metadata: Any) -> bool | None:
    """What the last ``allow_inf_nan`` among a field's metadata says (``None``: none says)."""
    said = [m.allow_inf_nan for m in metadata if isinstance(getattr(m, "allow_inf_nan", None), bool)]
    return said[-1] if said else None


def _finite_only(model: type[pydantic.BaseModel], field: Any) -> bool:
    """Whether ``field`` of ``model`` refuses nan and ±inf: unless the field (``Field(allow_inf_nan=True)``,
    ``Annotated[float, AllowInfNan(True)]``) or the model's own config says ``allow_inf_nan=True`` (a
    nested plain model inherits the refusal)."""
    said = _allows_inf_nan(field.metadata)
    return not said if said is not None else model.model_config.get("allow_inf_nan") is not True


def _shaped_like(annotation: Any, value: Any) -> bool:
    """Whether a union member could take ``value``'s shape (a container or a model)."""
    ann = _bare(annotation)
    origin = typing.get_origin(ann)
    if isinstance(value, dict):
        return origin is dict or (isinstance(ann, type) and issubclass(ann, pydantic.BaseModel))
    return origin in _SEQUENCES if isinstance(value, (list, tuple)) else False


def lax_locations(model: type[pydantic.BaseModel], data: dict, loc: tuple = ()) -> list[tuple[tuple, str, str, Any]]:
    """(location, error type, message, value) of every value in ``data`` that ``model``'s fields would
    convert laxly: a bool or text for a number, anything but a bool for a bool."""
    out = []
    for name, field in model.model_fields.items():
        key = name if name in data else field.alias
        if key in data:
            out += _inner(field.annotation, data[key], (*loc, key), _finite_only(model, field))
    return out


def strict_values(model: type[pydantic.BaseModel], data: Any) -> Any:
    """``data`` unchanged, or a :class:`pydantic.ValidationError` naming each value pydantic would
    convert laxly (module doc): for a ``model_validator(mode="before")`` of any pydantic model.

    Errors (type, message): ``finite_number`` "Input should be a finite number" (pydantic's own);
    ``bool_not_number`` "Input should be an integer, not a boolean
    (true/false); write the number itself"; ``text_not_number`` "Input should be a number, not
    text; write the number without quotes"; ``bool_not_other`` "Input should be a boolean (true or
    false), not text; write true or false".
    """
    found = lax_locations(model, data) if isinstance(data, dict) else []
    if not found:
        return data
    errors = [{"type": PydanticCustomError(kind, message), "loc": loc, "input": value}
              for loc, kind, message, value in found]
    raise pydantic.ValidationError.from_exception_data(model.__name__, errors)
