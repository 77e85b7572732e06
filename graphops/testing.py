"""Helpers for plugin authors' tests: the same gates graphops applies to its own plugins."""
from __future__ import annotations

import ast
import importlib.util
from .algorithm import Algorithm

__all__ = ["check_signatures", "backend_signature"]


def backend_signature(target: str) -> str:
    """The parameters of a backend function, read from its source without importing it.

    Return annotations may differ (NumPy on the CPU, CuPy on the GPU); parameters may not.

    Reading the source keeps this check possible where the GPU backend's imports would fail.
    """
    module, _, name = target.partition(":")
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise AssertionError(f"backend module {module!r} cannot be found")
    with open(spec.origin, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return ast.unparse(node.args)
    raise AssertionError(f"backend function {target!r} is not defined at the top of its module")


def check_signatures(algorithm: Algorithm) -> None:
    """Assert that every own (non-peer) backend of ``algorithm`` has the same signature."""
    own = {name: algorithm.backends[name] for name in algorithm.own_backends()}
    sigs = {name: backend_signature(b.target) for name, b in own.items()}
    first = next(iter(sigs))
    for name, sig in sigs.items():
        if sig != sigs[first]:
            raise AssertionError(f"{algorithm.name}: backend {name!r} has signature ({sig}), which "
                                 f"differs from {first!r} ({sigs[first]})")
