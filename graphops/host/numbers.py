"""Numbers in parameter models: ``True``/``False`` refused where a number is wanted, and :data:`Seed`.

pydantic's lax mode reads ``True`` as ``1`` for an ``int`` field and ``1.0`` for a ``float`` one,
so ``top_k: true`` in a pipeline file meant ``top_k=1`` without a word. :func:`refuse_bools` runs
before every :class:`~graphops.host.algorithm.Params` model (plugins' and generators' alike: they
inherit it) and refuses a bool wherever the field's annotation wants a number: ``int``, ``float``,
a ``Literal`` of numbers, inside ``Optional``/unions, tuples, lists, dict values and nested models.
"""
from __future__ import annotations

import types
import typing
from typing import Annotated, Any

import pydantic
from pydantic import Field
from pydantic_core import PydanticCustomError

__all__ = ["Seed", "SEED_MAX", "refuse_bools", "wants_number", "bool_locations"]

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


def _is_bool(value: Any) -> bool:
    kind = type(value)
    return isinstance(value, bool) or (kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_"))


def _inner(annotation: Any, value: Any, loc: tuple) -> list[tuple[tuple, str, Any]]:
    """(location, what is wanted, value) of every bool in ``value`` where ``annotation`` wants a number."""
    ann = _bare(annotation)
    if _is_bool(value):
        wanted = wants_number(ann)
        return [] if wanted is None else [(loc, wanted, value)]
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if origin in _UNIONS:
        found = [_inner(a, value, loc) for a in args if _shaped_like(a, value)]
        return found[0] if found and all(found) else []
    if isinstance(ann, type) and issubclass(ann, pydantic.BaseModel) and isinstance(value, dict):
        return bool_locations(ann, value, loc)
    if origin in _SEQUENCES and isinstance(value, (list, tuple)) and args:
        each = args if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis) else (args[0],) * len(value)
        return [p for i, (a, v) in enumerate(zip(each, value)) for p in _inner(a, v, (*loc, i))]
    if origin is dict and isinstance(value, dict) and len(args) == 2:
        return [p for k, v in value.items() for p in (*_inner(args[0], k, (*loc, k)), *_inner(args[1], v, (*loc, k)))]
    return []


def _shaped_like(annotation: Any, value: Any) -> bool:
    """Whether a union member could take ``value``'s shape (a container or a model)."""
    ann = _bare(annotation)
    origin = typing.get_origin(ann)
    if isinstance(value, dict):
        return origin is dict or (isinstance(ann, type) and issubclass(ann, pydantic.BaseModel))
    return origin in _SEQUENCES if isinstance(value, (list, tuple)) else False


def bool_locations(model: type[pydantic.BaseModel], data: dict, loc: tuple = ()) -> list[tuple[tuple, str, Any]]:
    """(location, what is wanted, value) of every bool in ``data`` where ``model``'s fields want a number."""
    out = []
    for name, field in model.model_fields.items():
        key = name if name in data else field.alias
        if key in data:
            out += _inner(field.annotation, data[key], (*loc, key))
    return out


def refuse_bools(model: type[pydantic.BaseModel], data: Any) -> Any:
    """``data`` unchanged, or a :class:`pydantic.ValidationError` naming each bool given for a number."""
    found = bool_locations(model, data) if isinstance(data, dict) else []
    if not found:
        return data
    errors = [{"type": PydanticCustomError("bool_not_number", f"Input should be {wanted}, not a boolean "
                                                              f"(true/false); write the number itself"),
               "loc": loc, "input": value} for loc, wanted, value in found]
    raise pydantic.ValidationError.from_exception_data(model.__name__, errors)
