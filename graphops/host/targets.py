"""``"module:function"`` targets resolved from their source, without importing them.

Plugins name their backends, readers, generators and commands as strings so that registering
imports no CuPy, cuDF or Numba kernels. The registry still checks every target when it is built:
the module must be found (its package is imported to find it, as Python's own import does) and
must define the name at its top level; a function's parameters are read from the source.

:class:`Sources` reads each module once. Finding a top-level ``def``/``class`` by a pattern over
the text, and parsing only that function, keeps this to a few milliseconds for all plugins; the
whole module is parsed only when the quick look finds nothing (or the function does not parse on
its own), so an error is always the parser's word, never the pattern's.
"""
from __future__ import annotations

import ast
import importlib.util
import pkgutil
import re
from typing import Any

from graphops.errors import did_you_mean

__all__ = ["Sources", "TargetError", "target_arguments", "sentence"]

_DEF = re.compile(r"^def[ \t]+(\w+)[ \t]*[(\[]", re.M)
_CLASS = re.compile(r"^class[ \t]+(\w+)\b", re.M)
_TOP = re.compile(r"^[^\s)\]}#]", re.M)  # a line starting a new top-level statement


class TargetError(ValueError):
    """A target that cannot be resolved: the message says what is missing and what is close."""


def sentence(exc: Exception) -> str:
    """An error's text as a sentence (the "?" of a closing "did you mean" kept)."""
    text = str(exc)
    return text if text.endswith(("?", ".")) else text + "."


class _Module:
    """One module's source: quick lookups by pattern, the parse tree on demand."""

    def __init__(self, name: str, path: str, text: str | None):
        self.name, self.path, self.text = name, path, text
        self._tree: ast.Module | None = None

    @property
    def tree(self) -> ast.Module:
        if self._tree is None:
            self._tree = ast.parse(self.text or "", filename=self.path)
        return self._tree

    def function(self, name: str) -> ast.FunctionDef | None:
        """The last top-level ``def name`` (the one Python keeps), or None."""
        quick = [m for m in _DEF.finditer(self.text or "") if m.group(1) == name]
        if quick and not _in_string(self.text, quick[-1].start()):
            found = _parse_one(self.text, quick[-1].start(), name)
            if found is not None:
                return found
        defs = [n for n in self.tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
        return defs[-1] if defs else None

    def defines(self, name: str) -> bool:
        """Whether ``name`` is bound at the top level (a function, class, assignment or import)."""
        if any(m.group(1) == name and not _in_string(self.text, m.start())
               for p in (_DEF, _CLASS) for m in p.finditer(self.text or "")):
            return True
        names = _bound(self.tree.body)
        return name in names or "__getattr__" in names

    def functions(self) -> list[str]:
        return [n.name for n in self.tree.body if isinstance(n, ast.FunctionDef)]


def _in_string(text: str, at: int) -> bool:
    """Whether ``at`` may lie inside a triple-quoted string (then only the parser can tell)."""
    before = text[:at]
    return before.count('"""') % 2 == 1 or before.count("'''") % 2 == 1


def _parse_one(text: str, start: int, name: str) -> ast.FunctionDef | None:
    """The function starting at ``start``, parsed alone (None when it does not parse alone)."""
    line_end = text.find("\n", start)
    following = _TOP.search(text, line_end + 1) if line_end >= 0 else None
    chunk = text[start:following.start() if following else len(text)]
    try:
        body = ast.parse(chunk).body
    except SyntaxError:
        return None
    return body[0] if len(body) == 1 and isinstance(body[0], ast.FunctionDef) and body[0].name == name else None


def _bound(body: list[ast.stmt]) -> set[str]:
    """Names bound by top-level statements (inside ``if``/``try`` blocks too)."""
    out: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            out |= _bound([*node.body, *getattr(node, "orelse", ()), *getattr(node, "finalbody", ()),
                           *(s for h in getattr(node, "handlers", ()) for s in h.body)])
    return out


def _siblings(module: str) -> list[str]:
    """The modules beside ``module`` in its package (for "did you mean"), or none."""
    parent, _, _ = module.rpartition(".")
    try:
        spec = importlib.util.find_spec(parent) if parent else None
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - a parent that fails to import (SystemExit too) has no siblings
        return []
    paths = getattr(spec, "submodule_search_locations", None) or []
    return [f"{parent}.{m.name}" for m in pkgutil.iter_modules(paths)]


class Sources:
    """Module sources read once: one per registry (never process-wide, so an edited plugin is
    seen by the next registry)."""

    def __init__(self) -> None:
        self._modules: dict[str, _Module | None] = {}

    def module(self, name: str) -> _Module | None:
        """The module's source; ``None`` when it exists but is no ``.py`` file (nothing to read).

        :raises TargetError: when it cannot be found
        """
        if name not in self._modules:
            self._modules[name] = self._find(name)
        return self._modules[name]

    @staticmethod
    def _find(name: str) -> _Module | None:
        try:
            spec = importlib.util.find_spec(name)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - a parent package missing or failing to import (SystemExit too)
            raise TargetError(f"module {name!r} cannot be found ({type(exc).__name__}: {exc})"
                              f"{did_you_mean(name, _siblings(name))}") from None
        if spec is None:
            raise TargetError(f"module {name!r} cannot be found.{did_you_mean(name, _siblings(name))}".rstrip("."))
        if spec.origin is None or not spec.origin.endswith(".py"):
            return None
        with open(spec.origin, encoding="utf-8") as fh:
            return _Module(name, spec.origin, fh.read())

    def arguments(self, target: str) -> ast.arguments | None:
        """The parameters of the top-level function ``target`` (``None``: compiled, not checkable).

        :raises TargetError: naming what is missing, with the closest top-level function
        """
        module, _, name = target.partition(":")
        found = self.module(module)
        if found is None:
            return None
        node = found.function(name)
        if node is None:
            raise TargetError(f"module {module!r} ({found.path}) has no top-level function {name!r}."
                              f"{did_you_mean(name, found.functions())}".rstrip("."))
        return node.args

    def check_defined(self, target: str) -> None:
        """That ``target`` names something its module defines at the top level (a function, a
        class, any name).

        :raises TargetError: naming what is missing, with the closest top-level name
        """
        module, _, name = target.partition(":")
        found = self.module(module)
        if found is not None and not found.defines(name):
            raise TargetError(f"module {module!r} ({found.path}) defines no {name!r} at its top level."
                              f"{did_you_mean(name, sorted(_bound(found.tree.body)))}".rstrip("."))


def target_arguments(target: str, sources: Any = None) -> ast.arguments:
    """The parameters of the top-level function ``"module:function"``, read from its source
    without importing the module (its package is imported to find it).

    :raises ValueError: when the module or the function cannot be found, or the module is no
        Python source
    """
    try:
        args = (sources or Sources()).arguments(target)
    except TargetError as exc:
        raise ValueError(f"{target}: {exc}") from None
    if args is None:
        raise ValueError(f"{target}: module {target.partition(':')[0]!r} is compiled; its source cannot be read")
    return args
