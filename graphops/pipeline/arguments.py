"""The arguments of ``load_pipeline`` and ``run_pipeline``, checked before anything is read or run.

A wrong type is an :class:`~graphops.errors.InputTypeError` (a ``TypeError``), a wrong value an
:class:`~graphops.errors.InputError` (a ``ValueError``); each message names the function and the
parameter, shows the value, says what is taken, and how to fix it.
"""
from __future__ import annotations

import numbers
import os
from typing import Any

from graphops.errors import InputError, InputTypeError
from graphops.io.outputs import name_problem

__all__ = ["check_path", "check_registry", "check_run_arguments"]


def _got(value: Any) -> str:
    text = repr(value)
    return f"{text if len(text) <= 80 else text[:60] + '...'} ({type(value).__name__})"


def check_path(function: str, name: str, value: Any, what: str, example: str, optional: bool = True,
               other: str = "") -> None:
    """``value`` is a path (``str`` or ``os.PathLike``; ``None`` when ``optional``), not empty, holding nothing
    no file system takes; ``other``: what else the parameter takes, for the message (``a LoadedPipeline``)."""
    if value is None and optional:
        return
    text = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    if not isinstance(text, str):
        others = " or ".join([p for p in (other, "None" if optional else "") if p])
        raise InputTypeError(f"{function}: {name} must be the path of {what} (a str or os.PathLike, e.g. "
                             f"{example!r}){' or ' + others if others else ''}; got {_got(value)}")
    if not text:
        raise InputError(f"{function}: {name}='' is an empty path, which names nothing; give the path of {what} "
                         f"(e.g. {example!r})" + (", or leave it out" if optional else ""))
    problem = name_problem(text)
    if problem:
        raise InputError(f"{function}: {name}={text!r} holds {problem}; give a path without it")


def check_registry(function: str, registry: Any) -> None:
    """``registry`` is a :class:`~graphops.host.registry.Registry` or ``None`` (the installed plugins)."""
    from graphops.host.registry import Registry

    if registry is not None and not isinstance(registry, Registry):
        raise InputTypeError(f"{function}: registry must be a graphops Registry (graphops.host.registry.Registry), "
                             f"or None for the installed plugins; got {_got(registry)}")


def _check_text(function: str, name: str, value: Any, what: str, fix: str) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise InputTypeError(f"{function}: {name} must be {what}, or None {fix}; got {_got(value)}")
    if not value.strip():
        raise InputError(f"{function}: {name}={value!r} names nothing; give {what}, or None {fix}")


def check_run_arguments(backend: Any, out: Any, registry: Any, keep_going: Any, cluster: Any,
                        cluster_timeout: Any) -> None:
    """The arguments of ``run_pipeline`` after the pipeline (its docstring says what each takes); the range of
    ``cluster_timeout`` is the file key's (``graphops.pipeline.run.cluster_settings``)."""
    f = "run_pipeline"
    _check_text(f, "backend", backend, "a backend's name (cpu, gpu, auto, ...)", "to keep each step's own")
    check_path(f, "out", out, "a folder", "results")
    check_registry(f, registry)
    if not isinstance(keep_going, bool):
        raise InputTypeError(f"{f}: keep_going must be True or False; got {_got(keep_going)}")
    _check_text(f, "cluster", cluster, "a Dask scheduler's address (e.g. 'tcp://host:8786')",
                "for the file's cluster: section")
    if cluster_timeout is not None and (isinstance(cluster_timeout, bool)
                                        or not isinstance(cluster_timeout, numbers.Real)):
        raise InputTypeError(f"{f}: cluster_timeout must be a number of seconds (above 0, at most 3600), or None "
                             f"for 10; got {_got(cluster_timeout)}")
