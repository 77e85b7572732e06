"""The functions plugins publish, as ``graphops.functions.<name>``.

An algorithm may publish helpers (``Algorithm(functions={"is_euler_circuit": "pkg.mod:fn"})``) and
a reader a convenience function (``Reader(function=...)``, published as ``read_<format>``). They are
found here, and only here, so that ``import graphops`` and ``hasattr(graphops, name)`` never load a
plugin: reading an attribute of ``graphops.functions`` is what loads them (the process's registry).

    import graphops as go
    go.functions.is_euler_circuit(g, tour)
    data = go.functions.read_appclass("data.Vertex.csv", "data.Edges.csv")
"""
from __future__ import annotations

from typing import Any

__all__: list[str] = []  # the names are the installed plugins': dir(graphops.functions) lists them


def _published() -> dict[str, str]:
    """Name -> ``"module:function"`` target of every function the installed plugins publish."""
    from graphops.host.registry import get_registry

    reg = get_registry()
    out = {f"read_{r.name}": r.function for r in reg.readers.values() if r.function is not None}
    for algo in reg.algorithms.values():
        out.update(algo.functions)
    return out


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    from graphops.errors import choices, did_you_mean
    from graphops.host.algorithm import load_target

    published = _published()
    if name in published:
        return load_target(published[name])
    raise AttributeError(f"graphops.functions has no {name!r}: the installed plugins publish "
                         f"{choices(published)}.{did_you_mean(name, published)}")


def __dir__() -> list[str]:
    return sorted(_published())
