"""The building blocks of every pipeline-file model: unknown keys refused, numbers as YAML writes
them, paths that a file system takes, names as the file gives them (``graphops.pipeline.schema``
and ``graphops.pipeline.graph_sources`` build on them)."""
from __future__ import annotations

import typing
from typing import Annotated, Any

import pydantic
from pydantic import AfterValidator, BaseModel, ConfigDict, StringConstraints, field_validator
from pydantic_core import PydanticCustomError

from graphops.host.numbers import lax_locations
from graphops.host.validation import NAME_PATTERN
from graphops.io.outputs import name_problem

__all__ = ["Name", "PathText", "path_problem"]

Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]


def path_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a path a file gives (empty, or holding what no file system takes), or ``None``."""
    if not isinstance(value, str):
        return "a path is text"
    if not value:
        return "An empty path names no file or folder; give one, or leave the key out"
    problem = name_problem(value)
    return problem and f"This path holds {problem}; remove it"


def _usable_path(value: str) -> str:
    problem = path_problem(value)
    if problem:
        raise ValueError(problem)
    return value


PathText = Annotated[str, AfterValidator(_usable_path)]
"""A path given in the file: text, not empty, nothing in it that no file system takes (:func:`path_problem`)."""


def _holds_model(annotation: Any) -> bool:
    """Whether a model sits in ``annotation`` (``list[Step]``, ``BenchSettings | None``): it checks its own keys."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return any(_holds_model(a) for a in typing.get_args(annotation))


class _Model(BaseModel):
    """Every model of the file: unknown keys refused, and numbers as YAML writes them (module doc)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("*", mode="before")
    @classmethod
    def _strict_numbers(cls, value: Any, info: pydantic.ValidationInfo) -> Any:
        """A bool or text where a key wants a number, or anything but true/false where it wants a bool
        (:func:`graphops.host.numbers.lax_locations`), or a decimal where it wants an integer: refused."""
        annotation = cls.model_fields[info.field_name].annotation
        if _holds_model(annotation):
            return value  # a model below checks its own keys
        for _, kind, message, _ in lax_locations(cls, {info.field_name: value}):
            raise PydanticCustomError(kind, message)
        return value


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value
