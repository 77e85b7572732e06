"""Every hook is documented where it is declared, and every hook has a caller in graphops."""
from __future__ import annotations

import inspect
from pathlib import Path

import graphops
from graphops import hookspecs

SPECS = [f for name, f in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("graphops_")]


def test_there_are_hooks():
    assert {f.__name__ for f in SPECS} == {
        "graphops_register_algorithms", "graphops_register_readers", "graphops_register_commands",
        "graphops_choose_backend",
        "graphops_step_start", "graphops_step_end"}


def test_each_hook_is_documented():
    for spec in SPECS:
        doc = inspect.getdoc(spec) or ""
        assert doc.splitlines()[0].endswith("."), spec.__name__
        assert ":returns:" in doc and "Example::" in doc and "@hookimpl" in doc, spec.__name__
        for param in inspect.signature(spec).parameters:
            assert f":param {param}:" in doc, (spec.__name__, param)
        firstresult = getattr(spec, "graphops_spec", {}).get("firstresult", False)
        assert ("Stops at first non-None result." in doc) == firstresult, spec.__name__


def test_each_hook_has_a_caller():
    source = "\n".join(p.read_text() for p in Path(graphops.__file__).parent.rglob("*.py")
                       if p.name != "hookspecs.py")
    for spec in SPECS:
        assert spec.__name__ in source, spec.__name__
