"""Every hook is documented where it is declared, and graphops calls every hook."""
from __future__ import annotations

import inspect

import graphops
from graphops.host import hookspecs

SPECS = [f for name, f in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("graphops_")]


def test_there_are_hooks():
    assert {f.__name__ for f in SPECS} == {
        "graphops_register_algorithms", "graphops_register_readers", "graphops_register_commands",
        "graphops_register_generators",
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


def test_each_hook_is_called_by_graphops(tmp_path):
    """Exercise graphops (registry, an auto dispatch, a pipeline run) with a plugin recording every
    hook: a hook whose call site is deleted fails here."""
    import graphops as go
    from graphops.host.manager import make_plugin_manager
    from graphops.host.registry import Registry

    seen = set()

    class Recorder:
        pass

    for spec in SPECS:
        def impl(_name=spec.__name__):
            seen.add(_name)
            return [] if _name.startswith("graphops_register") else None
        setattr(Recorder, spec.__name__, staticmethod(graphops.hookimpl(specname=spec.__name__)(impl)))
    pm = make_plugin_manager(autoload=False, plugins=["describe"])
    pm.register(Recorder(), name="recorder")
    reg = Registry(pm)
    (tmp_path / "p.yaml").write_text("version: 1\ngraphs: {g: {dataset: karate}}\n"
                                     "steps: [{id: s, algorithm: describe, inputs: {graph: g}, backend: auto}]\n")
    go.run_pipeline(tmp_path / "p.yaml", registry=reg)
    assert seen == {f.__name__ for f in SPECS}
