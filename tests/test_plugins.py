"""Plugin host: entry points, failures, duplicates, env switches, readers and the choose hook."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import graphops as go
from graphops import Algorithm, Params, hookimpl
from graphops.errors import PluginError
from graphops.plugins import make_plugin_manager
from graphops.registry import Registry

SAMPLE = Path(__file__).parent / "sample_plugin"


def _dist(root: Path, name: str, version: str, entry: str, module: str) -> None:
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[graphops]\n{entry} = {module}\n")


@pytest.fixture
def third_party(tmp_path, monkeypatch):
    """Install (on sys.path) a working and a broken third-party plugin, as pip would."""
    _dist(tmp_path, "sample-graphops-plugin", "0.1", "sample", "sample_graphops_plugin")
    _dist(tmp_path, "broken-graphops-plugin", "0.2", "broken", "broken_graphops_plugin")
    monkeypatch.syspath_prepend(str(SAMPLE))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("GRAPHOPS_PLUGINS", raising=False)
    monkeypatch.delenv("GRAPHOPS_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    return Registry(make_plugin_manager())


def test_third_party_plugin_registers_through_entry_point(third_party):
    algo = third_party.algorithm("sample_degree")
    assert algo.plugin == "sample"
    assert third_party.pm.distributions["sample"] == "sample-graphops-plugin 0.1"
    assert "describe" in third_party.algorithms  # in-tree plugins come through the same door
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [30, 10, 10], "dst": [10, 20, 30]}), directed=True)
    out = go.run("sample_degree", g, registry=third_party, scale=2)
    assert list(out["vertex"]) == [10, 20, 30]  # original ids, not internal indices
    assert list(out["degree"]) == [4, 0, 2]


def test_broken_plugin_is_named_and_others_keep_working(third_party):
    err = third_party.failures["broken"]
    assert err.plugin == "broken" and err.distribution == "broken-graphops-plugin 0.2"
    assert str(err).startswith("plugin 'broken' (from broken-graphops-plugin 0.2) failed to import: "
                               "ModuleNotFoundError: No module named 'a_module_that_does_not_exist'")
    with pytest.raises(PluginError, match="plugin 'broken'"):
        third_party.algorithm("broken")
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [0], "dst": [1]}))
    assert int(go.run("describe", g, registry=third_party, backend="cpu")["n_edges"][0]) == 1


def test_plugin_reader_format(third_party, tmp_path):
    path = tmp_path / "g.pairs"
    path.write_text("1-2\n2-3\n")
    g = go.read_graph(path, registry=third_party)
    assert g.n_edges == 2 and "pairs" in third_party.readers


def test_choose_backend_hook_is_consulted(third_party, caplog):
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [0], "dst": [1]}))
    algo = third_party.algorithm("sample_degree")
    outcome = go.execute(algo, {"graph": g}, "auto", {}, third_party)
    assert outcome.backend == "cpu" and outcome.reason == "auto: chosen by a graphops_choose_backend hook"


class _Dup:
    @staticmethod
    @hookimpl
    def graphops_register_algorithms():
        return [Algorithm(name="describe", params=Params, inputs=("graph",), backends={"cpu": "x.y:z"})]


def test_duplicate_algorithm_names_both_plugins(fresh_pm):
    fresh_pm.register(_Dup(), name="dup")
    with pytest.raises(PluginError) as info:
        Registry(fresh_pm)
    assert str(info.value).startswith(
        "algorithm 'describe' is registered twice: by plugin 'describe' (graphops 0.1.0) and by "
        "plugin 'dup' (?)")


def test_bad_hook_return_is_named(fresh_pm):
    class Bad:
        @staticmethod
        @hookimpl
        def graphops_register_algorithms():
            return ["describe"]

    fresh_pm.register(Bad(), name="bad")
    with pytest.raises(PluginError, match="plugin 'bad': graphops_register_algorithms\\(\\) returned 'describe'"):
        Registry(fresh_pm)


def test_misspelled_hook_fails_loudly(fresh_pm):
    import pluggy

    class Typo:
        @staticmethod
        @hookimpl
        def graphops_register_algorithm():
            return []

    fresh_pm.register(Typo(), name="typo")
    with pytest.raises(pluggy.PluginValidationError):
        fresh_pm.check_pending()


def test_env_switches(monkeypatch):
    monkeypatch.setenv("GRAPHOPS_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("GRAPHOPS_PLUGINS", raising=False)
    reg = Registry(make_plugin_manager())
    assert reg.algorithms == {}
    with pytest.raises(ValueError, match=r"Unknown algorithm 'describe'. Installed: \(none\)."):
        reg.algorithm("describe")
    monkeypatch.setenv("GRAPHOPS_PLUGINS", "describe")
    assert list(Registry(make_plugin_manager()).algorithms) == ["describe"]
    monkeypatch.setenv("GRAPHOPS_PLUGINS", "nosuchplugin")
    with pytest.raises(PluginError, match="GRAPHOPS_PLUGINS names 'nosuchplugin', which is neither"):
        make_plugin_manager()


def test_unknown_algorithm_did_you_mean(monkeypatch):
    monkeypatch.setenv("GRAPHOPS_PLUGINS", "describe")
    with pytest.raises(ValueError) as info:
        Registry(make_plugin_manager()).algorithm("describ")
    assert str(info.value) == "Unknown algorithm 'describ'. Installed: describe. Did you mean 'describe'?"


def test_algorithm_declaration_is_checked():
    with pytest.raises(ValueError, match="algorithm name must match"):
        Algorithm(name="Bad-Name", params=Params, inputs=("graph",), backends={"cpu": "a.b:c"})
    with pytest.raises(ValueError, match="backend target must look like 'package.module:function'"):
        Algorithm(name="ok", params=Params, inputs=("graph",), backends={"cpu": "a.b.c"})
    with pytest.raises(TypeError, match="params must be a graphops.Params subclass"):
        Algorithm(name="ok", params=dict, inputs=("graph",), backends={"cpu": "a.b:c"})


def test_backend_signatures_match():
    from graphops.testing import check_signatures

    check_signatures(go.registry.get_registry().algorithm("describe"))


def test_signature_mismatch_is_reported(tmp_path, monkeypatch):
    from graphops.testing import check_signatures

    (tmp_path / "sig_a.py").write_text("def run(csr, params):\n    pass\n")
    (tmp_path / "sig_b.py").write_text("def run(csr, other, params):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    algo = Algorithm(name="sig", params=Params, inputs=("graph",),
                     backends={"cpu": "sig_a:run", "gpu": "sig_b:run"})
    with pytest.raises(AssertionError, match="sig: backend 'gpu' .* differs from 'cpu'"):
        check_signatures(algo)


def test_step_hooks_observe_a_pipeline(fresh_pm, tmp_path):
    seen = []

    class Observer:
        @staticmethod
        @hookimpl
        def graphops_step_start(step, backend):
            seen.append(("start", step.id, backend))

        @staticmethod
        @hookimpl
        def graphops_step_end(step, backend, result, seconds):
            seen.append(("end", step.id, backend, len(result), seconds >= 0))

    fresh_pm.register(Observer(), name="observer")
    (tmp_path / "g.txt").write_text("1 2\n")
    (tmp_path / "p.yaml").write_text("version: 1\ngraphs: {g: {path: g.txt}}\n"
                                     "steps: [{id: s, algorithm: describe, inputs: {graph: g}, backend: cpu}]\n")
    go.run_pipeline(tmp_path / "p.yaml", registry=Registry(fresh_pm))
    assert seen == [("start", "s", "cpu"), ("end", "s", "cpu", 1, True)]
