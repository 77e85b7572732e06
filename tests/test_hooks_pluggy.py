"""Hooks are called through pluggy itself: plugins' wrappers run around the step, firstresult
stops at the first answer, and a raising implementation is that plugin's failure alone (a warning
naming it; the others still run)."""
from __future__ import annotations

import pandas as pd
import pytest

import graphops as go
from graphops.host.manager import make_plugin_manager
from graphops.host.registry import Registry
from graphops.plugin import hookimpl

PIPELINE = ("version: 1\ngraphs: {g: {path: g.txt}}\n"
            "steps: [{id: s, algorithm: describe, inputs: {graph: g}, backend: cpu}]\n")


@pytest.fixture
def pm():
    return make_plugin_manager(autoload=False, plugins=["describe"])


def _run(tmp_path, pm) -> None:
    (tmp_path / "g.txt").write_text("1 2\n2 3\n")
    (tmp_path / "p.yaml").write_text(PIPELINE)
    go.run_pipeline(tmp_path / "p.yaml", registry=Registry(pm), out=tmp_path / "out")


def test_a_wrapper_runs_around_the_step_observers(tmp_path, pm):
    seen = []

    class Observer:
        @staticmethod
        @hookimpl
        def graphops_step_start(step):
            seen.append(("observer", step.id))

    class Timer:
        @staticmethod
        @hookimpl(wrapper=True)
        def graphops_step_start(step, backend):
            seen.append(("before", step.id, backend))
            result = yield
            seen.append(("after", step.id))
            return result

    class OldStyle:
        @staticmethod
        @hookimpl(hookwrapper=True)
        def graphops_step_end(step, seconds):
            seen.append(("old before", step.id))
            outcome = yield
            outcome.get_result()
            seen.append(("old after", seconds >= 0))

    for name, plugin in (("observer", Observer()), ("timer", Timer()), ("oldstyle", OldStyle())):
        pm.register(plugin, name=name)
    _run(tmp_path, pm)
    assert seen == [("before", "s", "cpu"), ("observer", "s"), ("after", "s"), ("old before", "s"),
                    ("old after", True)]


def test_a_raising_observer_is_reported_with_its_plugins_name(tmp_path, pm, caplog):
    seen = []

    class Faulty:
        @staticmethod
        @hookimpl
        def graphops_step_end(step):
            raise RuntimeError("broken observer")

    class Fine:
        @staticmethod
        @hookimpl
        def graphops_step_end(step):
            seen.append(step.id)

    class Wrapper:
        @staticmethod
        @hookimpl(wrapper=True)
        def graphops_step_end():
            seen.append("wrapper saw no error")
            return (yield)

    pm.register(Fine(), name="fine")
    pm.register(Faulty(), name="faulty")
    pm.register(Wrapper(), name="wrapper")
    _run(tmp_path, pm)
    assert seen == ["wrapper saw no error", "s"]
    assert any("plugin 'faulty': its graphops_step_end hook raised RuntimeError: broken observer; ignored"
               in r.getMessage() for r in caplog.records)


def test_choose_backend_is_pluggys_firstresult(pm, caplog):
    asked = []

    class First:
        @staticmethod
        @hookimpl(tryfirst=True)
        def graphops_choose_backend(offered):
            asked.append("first")
            return None  # defers

    class Second:
        @staticmethod
        @hookimpl
        def graphops_choose_backend(offered):
            asked.append("second")
            return "cpu"

    class Never:
        @staticmethod
        @hookimpl(trylast=True)
        def graphops_choose_backend():
            asked.append("never")
            return "cpu"

    for name, plugin in (("first", First()), ("second", Second()), ("never", Never())):
        pm.register(plugin, name=name)
    reg = Registry(pm)
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [0], "dst": [1]}))
    out = go.execute(reg.algorithm("describe"), {"graph": g}, "auto", {}, reg)
    assert out.reason == "auto: chosen by a graphops_choose_backend hook"
    assert asked == ["first", "second"]


def test_a_register_hook_wrapper_does_not_break_collection(pm):
    """A plugin wrapping graphops_register_algorithms sees the call; every algorithm still knows
    its own plugin."""
    seen = []

    class Wrapper:
        @staticmethod
        @hookimpl(wrapper=True)
        def graphops_register_algorithms():
            seen.append("around")
            return (yield)

    pm.register(Wrapper(), name="wrapper")
    reg = Registry(pm)
    assert reg.algorithm("describe").plugin == "describe" and seen


def _claims(kind: str, name: str):
    from graphops.plugin import Algorithm, Params, Reader

    class Claims:
        @staticmethod
        @hookimpl
        def graphops_register_algorithms():
            return [Algorithm(name=name, params=Params, inputs=("graph",),
                              backends={"cpu": "graphops_describe.cpu:run"})] if kind == "algorithm" else []

        @staticmethod
        @hookimpl
        def graphops_register_readers():
            return [Reader(name=name, suffixes=(".zz",), target="graphops.io.textio:read_text")] \
                if kind == "reader" else []

    return Claims()


def test_a_name_left_out_of_one_kind_does_not_answer_for_another(pm):
    """Two plugins claiming the algorithm 'pairs2' leave it out, under (algorithm, pairs2): asking
    for a reader of that name is still 'Unknown graph format', and the other way round."""
    from graphops.errors import InputError, PluginError

    pm.register(_claims("algorithm", "pairs2"), name="a1")
    pm.register(_claims("algorithm", "pairs2"), name="a2")
    pm.register(_claims("reader", "twin"), name="r1")
    pm.register(_claims("reader", "twin"), name="r2")
    reg = Registry(pm)
    with pytest.raises(PluginError, match="algorithm 'pairs2' is registered by"):
        reg.algorithm("pairs2")
    with pytest.raises(InputError, match="Unknown graph format 'pairs2'"):
        reg.reader("pairs2")
    with pytest.raises(PluginError, match="reader format 'twin' is registered by"):
        reg.reader("twin")
    with pytest.raises(InputError, match="Unknown algorithm 'twin'"):
        reg.algorithm("twin")
    assert {"algorithm pairs2", "reader twin"} <= set(reg.failures)


def test_a_pipeline_reads_its_data_sets_through_its_own_registry(tmp_path, monkeypatch):
    """A data set named in a pipeline loaded with a registry is read by that registry's readers."""
    from graphops.io import datasets

    seen = []
    real = datasets.load

    def spy(name, device="cpu", registry=None, **options):
        seen.append(registry)
        return real(name, device=device, registry=registry, **options)

    monkeypatch.setattr(datasets, "load", spy)
    reg = Registry(make_plugin_manager(autoload=False, plugins=["describe"]))
    (tmp_path / "p.yaml").write_text("version: 1\ngraphs: {k: {dataset: karate}}\n"
                                     "steps: [{id: s, algorithm: describe, inputs: {graph: k}, backend: cpu}]\n")
    go.run_pipeline(tmp_path / "p.yaml", registry=reg, out=tmp_path / "o")
    assert seen == [reg]


def test_graphops_itself_loads_no_plugin():
    """import graphops and hasattr(graphops, ...) load no plugin; what plugins publish is
    graphops.functions.<name>, which does."""
    import subprocess
    import sys

    code = ("import sys, graphops as go\n"
            "assert not hasattr(go, 'is_euler_circuit') and not hasattr(go, 'read_appclass')\n"
            "assert not hasattr(go, 'jaccard') and not any(m.startswith('graphops_') for m in sys.modules), "
            "sorted(m for m in sys.modules if m.startswith('graphops_'))\n"
            "try:\n    go.is_euler_circuit\nexcept AttributeError as e:\n    assert 'graphops.functions.<name>' in str(e)\n"
            "assert callable(go.functions.is_euler_circuit) and callable(go.functions.read_appclass)\n"
            "assert 'is_euler_circuit' in dir(go.functions)\n"
            "try:\n    go.functions.is_euler_circut\nexcept AttributeError as e:\n"
            "    assert \"Did you mean 'is_euler_circuit'\" in str(e), str(e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_steps_params_are_built_and_checked_once(tmp_path, monkeypatch):
    """The meaning pass builds a step's Params and checks them against the graphs' declarations;
    the run hands that instance to dispatch, which neither builds nor checks them again."""
    from graphops_jaccard.params import JaccardParams

    built, declared = [], []
    real_init, real_check = JaccardParams.__init__, JaccardParams.check_declared

    def init(self, **data):
        built.append(data)
        real_init(self, **data)

    def check(self, *args, **kwargs):
        declared.append(args or kwargs)
        return real_check(self, *args, **kwargs)

    monkeypatch.setattr(JaccardParams, "__init__", init)
    monkeypatch.setattr(JaccardParams, "check_declared", check)
    (tmp_path / "g.txt").write_text("1 2\n2 3\n3 1\n")
    (tmp_path / "p.yaml").write_text("version: 1\ngraphs: {g: {path: g.txt}}\nsteps: [{id: s, algorithm: jaccard, "
                                     "inputs: {graph: g}, backend: cpu, params: {use_weight: false}}]\n")
    reg = Registry(make_plugin_manager(autoload=False, plugins=["jaccard"]))
    loaded = go.load_pipeline(tmp_path / "p.yaml", reg)
    assert len(declared) == 1 and isinstance(loaded.params["s"], JaccardParams)
    go.run_pipeline(loaded, out=tmp_path / "o")
    assert len(declared) == 1 and len(built) <= 1  # model_validate builds without __init__; nothing built again


@pytest.mark.parametrize("fault", ["before", "after", "exit", "never yields"])
def test_a_failing_wrapper_is_that_plugins_failure_alone(tmp_path, pm, caplog, fault):
    """A wrapper=True implementation that raises (SystemExit too) before or after its yield, or
    never yields, is a warning naming the plugin; the step and the other observers still run."""
    import sys

    seen = []

    class Observer:
        @staticmethod
        @hookimpl
        def graphops_step_start(step):
            seen.append(step.id)

    class Broken:
        @staticmethod
        @hookimpl(wrapper=True)
        def graphops_step_start():
            if fault == "before":
                raise RuntimeError("broken before")
            if fault == "exit":
                sys.exit(5)
            if fault == "never yields":
                return None
            result = yield
            if fault == "after":
                raise RuntimeError("broken after")
            return result

    pm.register(Observer(), name="observer")
    pm.register(Broken(), name="broken")
    _run(tmp_path, pm)
    assert seen == ["s"]
    assert any(r.getMessage().startswith("plugin 'broken': its graphops_step_start hook raised") for r in caplog.records)


def test_a_misspelt_hook_is_refused_however_the_plugin_is_registered(pm):
    import pluggy

    class Typo:
        @staticmethod
        @hookimpl
        def graphops_step_begin(step):
            pass

    with pytest.raises(pluggy.PluginValidationError, match="'graphops_step_begin', which is not a graphops hook"):
        pm.register(Typo(), name="typo")
    assert pm.get_plugin("typo") is None


def test_graphops_functions_is_importable_by_name():
    from graphops.functions import is_euler_circuit

    import graphops.functions as published

    assert callable(is_euler_circuit) and published.is_euler_circuit is is_euler_circuit


def test_a_plugin_registered_after_the_registry_was_built_is_seen():
    """A registry follows its plugin manager: a plugin registered later (or unregistered) is in
    (or out of) the registry already held, as a late pluggy plugin sees historic calls."""
    from graphops.host.manager import make_plugin_manager
    from graphops.host.registry import Registry
    from graphops.plugin import Algorithm, Params, hookimpl

    class Late:
        @hookimpl
        def graphops_register_algorithms(self):
            return [Algorithm(name="late_count", params=Params, inputs=("graph",), outputs=("n",),
                              backends={"cpu": "tests.test_hooks_pluggy:_late_count"})]

    pm = make_plugin_manager(autoload=False, plugins=["describe"])
    registry = Registry(pm)
    assert "late_count" not in registry.algorithms
    pm.register(Late(), name="late")
    assert "late_count" in registry.algorithms and registry.algorithms["late_count"].plugin == "late"
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [0, 1], "dst": [1, 2]}))
    assert go.run("late_count", g, registry=registry)["n"].tolist() == [3]
    pm.unregister(name="late")
    assert "late_count" not in registry.algorithms and "describe" in registry.algorithms


def _late_count(csr, params):
    import numpy as np

    return {"n": np.asarray([csr.n_vertices], dtype=np.int64)}


def test_a_registry_built_before_graphops_own_plugin_keeps_its_names():
    """graphops' own plugin registered after a registry was built, beside a third-party plugin
    claiming one of its generator names: the registry keeps graphops' generator, as a fresh one does."""
    import graphops.io.builtins as own
    from graphops.host.manager import GraphopsPluginManager, register_plugin
    from graphops.plugin import Generator

    class Claim:
        @hookimpl
        def graphops_register_generators(self):
            return [Generator("rmat", "graphops.io.generate:RMat", "graphops.io.generate:rmat", summary="a claim")]

    pm = GraphopsPluginManager()
    registry = Registry(pm)
    assert register_plugin(pm, Claim(), "claim", "claim-dist 1.0")
    assert register_plugin(pm, own, "builtins", "graphops 0.2", own=True)
    fresh = Registry(pm)
    assert registry.generators["rmat"].plugin == fresh.generators["rmat"].plugin == "builtins"
