"""The backend contract, checked from the source when the registry is built (nothing imported),
and what a reader returns, checked on every read (:func:`check_reader_result`).

A backend is called as ``fn(*args, params)`` — one argument per input slot, then the Params (a
cluster backend the client first) — and its ``prepare`` as ``prepare(input)`` (``prepare(input,
client)`` for a cluster backend); see :class:`graphops.host.algorithm.Backend`. A backend whose
target cannot be found, or whose function cannot be called that way, would fail at run time with
a bare ``TypeError``/``AttributeError``: the registry leaves it out and says why instead.
:func:`graphops.engine.testing.check_signatures` runs the same check for plugin authors' tests.
"""
from __future__ import annotations

import ast
from typing import Any

from graphops.errors import PluginError
from graphops.host.targets import Sources, TargetError, sentence

__all__ = ["backend_problem", "backend_problems", "call_problem", "check_reader_result"]


def call_problem(args: ast.arguments, given: int) -> str | None:
    """Why a function of parameters ``args`` cannot be called with ``given`` positional
    arguments, or ``None`` when it can (exactly that many parameters, or ``*args`` and no more
    required ones; no keyword-only argument without a default)."""
    positional = len(args.posonlyargs) + len(args.args)
    required = positional - len(args.defaults)
    keyword_only = [a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None]
    if keyword_only:
        return f"needs the keyword-only argument(s) {', '.join(keyword_only)}"
    fits = required <= given if args.vararg is not None else positional == given
    return None if fits else f"takes {positional} argument(s) ({ast.unparse(args)})"


def backend_problem(algo: Any, spec: Any, sources: Sources | None = None) -> str | None:
    """What keeps backend ``spec`` of ``algo`` from being called by the contract: a target that
    cannot be found, or a function of another signature (``None``: it follows the contract)."""
    sources = sources or Sources()
    slots = ", ".join(algo.slot_names)
    want = len(algo.inputs) + 1 + (1 if spec.cluster else 0)
    client = "the client, then " if spec.cluster else ""
    checks = [(spec.target, want,
               f"the contract is {client}one argument per input slot ({slots}) and then params: {want}")]
    if spec.prepare is not None:
        checks.append((spec.prepare, 1 + spec.cluster, "prepare takes the input" +
                       (" and the client" if spec.cluster else "")))
    for target, given, contract in checks:
        try:
            args = sources.arguments(target)
        except TargetError as exc:
            return f"{target}: {sentence(exc)} Fix the target in the plugin's Algorithm(backends=...)"
        problem = None if args is None else call_problem(args, given)
        if problem is not None:
            return f"{target} {problem}; {contract}. Change the function's parameters in the plugin"
    return None


def backend_problems(algo: Any, sources: Sources | None = None) -> dict[str, str]:
    """Backend name -> what breaks the contract, for every backend of ``algo`` that does."""
    sources = sources or Sources()
    found = {name: backend_problem(algo, spec, sources) for name, spec in algo.backends.items()}
    return {name: why for name, why in found.items() if why is not None}


def check_reader_result(reader: Any, frame: Any, path: Any, what: str = "target") -> Any:
    """``frame`` as a reader (its ``what``: ``"target"`` or ``"nodes"``) returned it for ``path``,
    once it is a frame (pandas or cuDF: ``columns`` and ``iloc``, and a length).

    :raises PluginError: naming the reader, its plugin and distribution, the function, what it
        returned and the file: anything else is the plugin's bug, which graphops would otherwise
        meet later as a bare ``TypeError`` (``object of type 'int' has no len()``)
    """
    if hasattr(frame, "columns") and hasattr(frame, "iloc") and hasattr(frame, "__len__"):
        return frame
    shown = repr(frame)
    shown = shown if len(shown) <= 80 else f"{shown[:60]}..."
    dist = f", {reader.distribution}" if getattr(reader, "distribution", "") else ""
    raise PluginError(f"reader {reader.name!r} (plugin {reader.plugin or '?'!r}{dist}): {getattr(reader, what)} "
                      f"returned {shown} ({type(frame).__name__}) for {str(path)!r}; a reader returns an edge "
                      f"frame (a pandas DataFrame, or a cuDF one on a GPU). Fix the reader in the plugin",
                      plugin=reader.plugin or None, distribution=getattr(reader, "distribution", None) or None)
