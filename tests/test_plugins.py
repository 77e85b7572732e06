"""Plugin host: entry points, failures, duplicates, env switches, readers and the choose hook."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import graphops as go
from graphops import Algorithm, Params, hookimpl
from graphops.errors import PluginError
from graphops.host.manager import make_plugin_manager
from graphops.host.registry import Registry, get_registry

SAMPLE = Path(__file__).parent / "sample_plugin"


def _dist(root: Path, name: str, version: str, entry: str, module: str) -> None:
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[graphops]\n{entry} = {module}\n")


BROKEN = {  # entry point -> (distribution, module): each broken in its own way
    "broken": ("broken-graphops-plugin", "broken_graphops_plugin"),
    "typo": ("typo-graphops-plugin", "typo_graphops_plugin"),
    "badsig": ("badsig-graphops-plugin", "badsig_graphops_plugin"),
    "raising": ("raising-graphops-plugin", "raising_graphops_plugin"),
    "exiting": ("exiting-graphops-plugin", "exiting_graphops_plugin"),
    "quitting": ("quitting-graphops-plugin", "quitting_graphops_plugin"),
}


@pytest.fixture
def third_party(tmp_path, monkeypatch):
    """Install (on sys.path) a working plugin, broken ones, one with broken backends and one taking
    graphops' own names, as pip would."""
    from graphops.host.manager import get_plugin_manager

    _dist(tmp_path, "sample-graphops-plugin", "0.1", "sample", "sample_graphops_plugin")
    _dist(tmp_path, "mistarget-graphops-plugin", "0.3", "mistarget", "mistarget_graphops_plugin")
    _dist(tmp_path, "greedy-graphops-plugin", "0.4", "greedy", "greedy_graphops_plugin")
    for entry, (dist, module) in BROKEN.items():
        _dist(tmp_path, dist, "0.2", entry, module)
    monkeypatch.syspath_prepend(str(SAMPLE))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("GRAPHOPS_PLUGINS", raising=False)
    monkeypatch.delenv("GRAPHOPS_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    get_plugin_manager.cache_clear()
    yield Registry(make_plugin_manager())
    get_plugin_manager.cache_clear()


def test_third_party_plugin_registers_through_entry_point(third_party):
    algo = third_party.algorithm("sample_degree")
    assert algo.plugin == "sample"
    assert third_party.pm.distributions["sample"] == "sample-graphops-plugin 0.1"
    assert "describe" in third_party.algorithms  # in-tree plugins come through the same door
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [30, 10, 10], "dst": [10, 20, 30]}), directed=True)
    out = go.run("sample_degree", g, registry=third_party, scale=2)
    assert list(out["vertex"]) == [10, 20, 30]  # original ids, not internal indices
    assert list(out["degree"]) == [4, 0, 2]


def test_broken_plugins_are_named_and_others_keep_working(third_party, caplog):
    fails = third_party.failures
    assert set(BROKEN) <= set(fails)
    for entry, (dist, _) in BROKEN.items():
        assert fails[entry].plugin == entry and fails[entry].distribution == f"{dist} 0.2"
    assert str(fails["broken"]).startswith("plugin 'broken' (from broken-graphops-plugin 0.2) failed to import: "
                                           "ModuleNotFoundError: No module named 'a_module_that_does_not_exist'")
    assert str(fails["typo"]).startswith(
        "plugin 'typo' (from typo-graphops-plugin 0.2) was not loaded: it implements "
        "'graphops_register_algorithm', which is not a graphops hook. Did you mean "
        "'graphops_register_algorithms'? Hooks: ")
    assert "gpu_memory" in str(fails["badsig"]) and "can not be found in the hookspec" in str(fails["badsig"])
    assert "its graphops_register_algorithms() raised RuntimeError: cannot reach the licence server" in str(
        fails["raising"])
    assert str(fails["exiting"]).startswith("plugin 'exiting' (from exiting-graphops-plugin 0.2) failed to import: "
                                            "SystemExit: 3. Other plugins still work")
    assert str(fails["quitting"]).startswith("plugin 'quitting' (from quitting-graphops-plugin 0.2) was left out: "
                                             "its graphops_register_algorithms() raised SystemExit: 4. Other plugins")
    assert "typo_algo" not in third_party.algorithms
    for name in BROKEN:  # none of them is left registered
        assert third_party.pm.get_plugin(name) is None
    with pytest.raises(PluginError, match="plugin 'broken'"):
        third_party.algorithm("broken")
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [0], "dst": [1]}))
    assert int(go.run("describe", g, registry=third_party, backend="cpu")["n_edges"][0]) == 1
    assert list(go.run("sample_degree", g, registry=third_party)["degree"]) == [1, 1]


def test_graphops_plugins_lists_the_failures(third_party, capsys):
    from graphops.cli import main

    assert main(["plugins"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for name in BROKEN:
        assert f"failed plugin: plugin '{name}'" in out
    assert "sample_degree" in out and "Did you mean 'graphops_register_algorithms'?" in out


def test_a_hook_that_raises_when_called_is_skipped(fresh_pm, caplog):
    class Faulty:
        @staticmethod
        @hookimpl
        def graphops_choose_backend(algorithm):
            raise ZeroDivisionError("oops")

    fresh_pm.register(Faulty(), name="faulty")
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [0], "dst": [1]}))
    reg = Registry(fresh_pm)
    outcome = go.execute(reg.algorithm("describe"), {"graph": g}, "auto", {}, reg)
    assert outcome.backend == "cpu"
    assert any("plugin 'faulty': its graphops_choose_backend hook raised ZeroDivisionError: oops; ignored"
               in r.getMessage() for r in caplog.records)


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


def _claiming(name: str) -> object:
    class Claims:
        @staticmethod
        @hookimpl
        def graphops_register_algorithms():
            return [Algorithm(name=name, params=Params, inputs=("graph",), backends={"cpu": "graphops_describe.cpu:run"})]

    return Claims()


def test_two_third_party_plugins_claiming_one_name_get_neither(fresh_pm):
    fresh_pm.register(_claiming("twice"), name="dup")
    fresh_pm.register(_claiming("twice"), name="dup2")
    reg = Registry(fresh_pm)
    with pytest.raises(PluginError) as info:
        reg.algorithm("twice")
    assert str(info.value) == (
        "algorithm 'twice' is registered by plugin 'dup' (?) and plugin 'dup2' (?), so neither is used. Uninstall "
        "one, or choose plugins with GRAPHOPS_PLUGINS=<names>")
    assert "jaccard" in reg.algorithms and "algorithm twice" in reg.failures


def test_a_third_party_plugin_cannot_take_graphops_own_names(third_party, tmp_path, capsys):
    """graphops' own plugins (distribution graphops) keep their names and suffixes; the third-party
    claims are reported, naming both, and left out; the third-party format keeps its own suffix."""
    from graphops.cli import main

    assert third_party.algorithm("describe").plugin == "describe"
    assert third_party.reader("csv").plugin == "graphops.io.builtins"
    assert third_party.reader_for_suffix(".csv").name == "csv"
    assert third_party.reader_for_suffix(".greedy").name == "greedy"
    who = "plugin 'greedy' (greedy-graphops-plugin 0.4)"
    fails = {str(e) for e in third_party.failures.values() if e.plugin == "greedy"}
    assert fails == {
        f"{who}: algorithm 'describe' is not used: it is graphops' own, registered by plugin 'describe' "
        f"(graphops 0.1.0), which keeps it. Rename it in the plugin",
        f"{who}: reader format 'csv' is not used: it is graphops' own, registered by plugin "
        f"'graphops.io.builtins' (graphops (built in)), which keeps it. Rename it in the plugin",
        f"{who}: file suffix '.csv' is not used: it is graphops' own, registered by plugin "
        f"'graphops.io.builtins' (graphops (built in)), which keeps it. Rename it in the plugin"}
    (tmp_path / "x.csv").write_text("1,2\n2,3\n")
    assert go.read_graph(tmp_path / "x.csv", registry=third_party).n_edges == 2
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [0, 1], "dst": [1, 2]}))
    assert int(go.run("describe", g, registry=third_party, backend="cpu")["n_edges"][0]) == 2
    assert main(["plugins"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"failed plugin: {who}: algorithm 'describe' is not used: it is graphops' own" in out


def test_bad_hook_return_is_named_and_the_plugin_left_out(fresh_pm):
    class Bad:
        @staticmethod
        @hookimpl
        def graphops_register_algorithms():
            return ["describe"]

    fresh_pm.register(Bad(), name="bad")
    reg = Registry(fresh_pm)
    assert str(reg.failures["bad"]).startswith(
        "plugin 'bad' (from ?) was left out: its graphops_register_algorithms() returned 'describe'; "
        "expected graphops.Algorithm objects")
    assert "describe" in reg.algorithms and fresh_pm.get_plugin("bad") is None


def test_misspelled_hook_fails_loudly_for_that_plugin(fresh_pm):
    from graphops.host.manager import register_plugin

    class Typo:
        @staticmethod
        @hookimpl
        def graphops_step_ends(step):
            pass

    assert not register_plugin(fresh_pm, Typo(), "typo", "typo-dist 1.0")
    assert "Did you mean 'graphops_step_end'?" in str(fresh_pm.failures["typo"])
    assert fresh_pm.get_plugin("typo") is None and "graphops_step_ends" not in {
        c.name for c in fresh_pm.get_hookcallers(fresh_pm.get_plugin("describe")) or ()}


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


@pytest.mark.parametrize("name", sorted(get_registry().algorithms))
def test_backend_signatures_match(name):
    """Every registered algorithm: its backends follow the one backend contract."""
    from graphops.engine.testing import check_signatures

    check_signatures(get_registry().algorithm(name))


def test_signature_mismatch_is_reported(tmp_path, monkeypatch):
    from graphops.engine.testing import check_signatures

    (tmp_path / "sig_a.py").write_text("def run(csr, params):\n    pass\n")
    (tmp_path / "sig_b.py").write_text("def run(csr, other, params):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    algo = Algorithm(name="sig", params=Params, inputs=("graph",),
                     backends={"cpu": "sig_a:run", "gpu": "sig_b:run"})
    with pytest.raises(AssertionError, match="sig: backend 'gpu' .* takes 3 argument.*params: 2"):
        check_signatures(algo)
    (tmp_path / "sig_c.py").write_text("def run(graph, params):\n    pass\n")
    algo = Algorithm(name="sig", params=Params, inputs=("graph",),
                     backends={"cpu": "sig_a:run", "gpu": "sig_c:run"})
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


def test_plugin_command_runs_and_reports_errors_like_graphops_own(third_party, capsys):
    from graphops.cli import main

    assert main(["sample-hello", "ada", "--shout"]) == 0
    assert capsys.readouterr().out == "HELLO, ADA\n"
    assert main(["sample-hello", "nobody"]) == 1
    assert capsys.readouterr().err == "InputError: nobody is not a name; give a person's name\n"
    assert main(["sample-hello", "bug"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "ZeroDivisionError" in err and "This is a bug" in err
    assert "command run" in third_party.failures
    assert "adds a command 'run', which is graphops' own" in str(third_party.failures["command run"])
    assert main(["plugins"]) == 0
    assert "command: graphops sample-hello — greet someone (sample plugin)" in capsys.readouterr().out


def _two_args(path, device):
    return pd.DataFrame({"src": [0], "dst": [1]})


def _three_args(path, device, options):
    assert options.columns is None and options.header == "auto" and options.roles["src"] is None
    return pd.DataFrame({"src": [0], "dst": [1]})


def test_readers_take_path_device_options_or_are_not_used(fresh_pm, tmp_path):
    """One reader contract, checked when the registry is built: (path, device, options). A reader
    of another signature is not used, and the registry's failures say why; a format that lists no
    text options refuses header=/ids= before reading."""
    from graphops import Reader

    class Formats:
        @staticmethod
        @hookimpl
        def graphops_register_readers():
            return [Reader("old", (".old",), "tests.test_plugins:_two_args"),
                    Reader("new", (".new",), "tests.test_plugins:_three_args")]

    fresh_pm.register(Formats(), name="formats")
    reg = Registry(fresh_pm)
    assert "new" in reg.readers and "old" not in reg.readers
    assert "takes (path, device); a reader takes (path, device, options)" in str(reg.failures["reader old"])
    (tmp_path / "g.new").write_text("x")
    assert go.read_graph(tmp_path / "g.new", registry=reg).n_edges == 1
    with pytest.raises(go.InputError, match="header= apply to text files; format 'new' has typed columns"):
        go.read_graph(tmp_path / "g.new", registry=reg, header=False)


def test_backends_that_break_the_contract_are_not_offered_and_say_why(third_party, capsys):
    """A misspelt function, a module that does not exist, a function of the wrong signature: found
    when the registry is built (from the source: nothing imported), listed by `graphops plugins`,
    the backend not offered; an algorithm with no backend left is not registered."""
    import sys

    from graphops.cli import main

    assert "mistarget_graphops_plugin.kernels" not in sys.modules
    algo = third_party.algorithm("mistarget_degree")
    assert list(algo.backends) == ["cpu"]
    who = "plugin 'mistarget' (mistarget-graphops-plugin 0.3): algorithm 'mistarget_degree'"
    kernels = SAMPLE / "mistarget_graphops_plugin" / "kernels.py"
    fails = third_party.failures
    assert str(fails["backend mistarget_degree.gpu"]) == (
        f"{who}: backend 'gpu' is not offered: mistarget_graphops_plugin.kernels:rnu: module "
        f"'mistarget_graphops_plugin.kernels' ({kernels}) has no top-level function 'rnu'. Did you mean 'run'? "
        f"Fix the target in the plugin's Algorithm(backends=...)")
    assert str(fails["backend mistarget_degree.hybrid"]) == (
        f"{who}: backend 'hybrid' is not offered: mistarget_graphops_plugin.kernals:run: module "
        f"'mistarget_graphops_plugin.kernals' cannot be found. Did you mean 'mistarget_graphops_plugin.kernels'? "
        f"Fix the target in the plugin's Algorithm(backends=...)")
    assert str(fails["backend mistarget_degree.networkx"]) == (
        f"{who}: backend 'networkx' is not offered: mistarget_graphops_plugin.kernels:three_arguments takes 3 "
        f"argument(s) (csr, other, params); the contract is one argument per input slot (graph) and then "
        f"params: 2. Change the function's parameters in the plugin")
    assert fails["backend mistarget_degree.gpu"].distribution == "mistarget-graphops-plugin 0.3"
    with pytest.raises(PluginError) as info:
        third_party.algorithm("mistarget_nothing")
    assert str(info.value) == (
        "plugin 'mistarget' (mistarget-graphops-plugin 0.3): algorithm 'mistarget_nothing' is not registered, as no "
        "backend of it can be used. Backend 'cpu': mistarget_graphops_plugin.kernels:three_arguments takes 3 "
        "argument(s) (csr, other, params); the contract is one argument per input slot (graph) and then params: 2. "
        "Change the function's parameters in the plugin.")
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [0], "dst": [1]}))
    with pytest.raises(go.BackendUnavailableError) as info:
        go.run("mistarget_degree", g, backend="gpu", registry=third_party)
    assert str(info.value) == (
        "mistarget_degree: backend 'gpu' (plugin 'mistarget') was requested, but it is not offered: "
        f"mistarget_graphops_plugin.kernels:rnu: module 'mistarget_graphops_plugin.kernels' ({kernels}) has no "
        "top-level function 'rnu'. Did you mean 'run'? Fix the target in the plugin's Algorithm(backends=...). "
        "Offered: auto, cpu")
    assert list(go.run("mistarget_degree", g, registry=third_party)["degree"]) == [1, 1]
    assert main(["plugins"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "failed plugin: plugin 'mistarget' (mistarget-graphops-plugin 0.3): algorithm 'mistarget_degree': " \
           "backend 'gpu' is not offered" in out
    assert "algorithm 'mistarget_nothing' is not registered" in out


def test_a_pipeline_asking_for_a_backend_left_out_is_told_why(third_party, tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("version: 1\ngraphs: {g: {dataset: karate}}\nsteps:\n"
                    "  - {id: d, algorithm: mistarget_degree, inputs: {graph: g}, backend: gpu}\n")
    with pytest.raises(go.ConfigError) as info:
        go.load_pipeline(path, third_party)
    kernels = SAMPLE / "mistarget_graphops_plugin" / "kernels.py"
    assert str(info.value).endswith(
        "==> At key: backend\n=====> Backend 'gpu' of mistarget_degree is not offered: "
        f"mistarget_graphops_plugin.kernels:rnu: module 'mistarget_graphops_plugin.kernels' ({kernels}) has no "
        "top-level function 'rnu'. Did you mean 'run'? Fix the target in the plugin's Algorithm(backends=...). "
        "Offered: auto, cpu")


def test_readers_generators_and_commands_whose_targets_are_missing_are_not_used(fresh_pm):
    from graphops import Command, Generator, Reader

    class Targets:
        @staticmethod
        @hookimpl
        def graphops_register_generators():
            return [Generator("ring", "graphops.io.generators:Gnm", "tests.test_plugins:_two_arg"),
                    Generator("gnm_too", "graphops.io.generators:Gmn", "graphops.io.generate:gnm")]

        @staticmethod
        @hookimpl
        def graphops_register_commands():
            return [Command(name="hello-x", summary="greets", target="tests.test_plugins:_thre_args")]

        @staticmethod
        @hookimpl
        def graphops_register_readers():
            return [Reader("xx", (".xx",), "tests.test_plugins:_three_args", function="tests.test_plugins:read_xx")]

    fresh_pm.register(Targets(), name="targets")
    reg = Registry(fresh_pm)
    assert not {"ring", "gnm_too"} & set(reg.generators) and "gnm" in reg.generators
    assert "hello-x" not in reg.commands and "xx" not in reg.readers
    here = Path(__file__)
    with pytest.raises(PluginError) as info:
        reg.generator("ring")
    assert str(info.value) == (
        f"plugin 'targets' (?): generator 'ring' is not used: tests.test_plugins:_two_arg: module 'tests.test_plugins' "
        f"({here}) defines no '_two_arg' at its top level. Did you mean '_two_args'? Fix the target in the plugin's "
        f"graphops.Generator(...)")
    assert "graphops.io.generators:Gmn: module 'graphops.io.generators'" in str(reg.failures["generator gnm_too"])
    assert str(reg.failures["command hello-x"]) == (
        f"plugin 'targets' (?): command 'hello-x' is not used: tests.test_plugins:_thre_args: module "
        f"'tests.test_plugins' ({here}) defines no '_thre_args' at its top level. Did you mean '_three_args'? "
        f"Fix the target in the plugin's graphops.Command(...)")
    assert str(reg.failures["reader xx"]).startswith(
        f"plugin 'targets' (?): reader 'xx': function tests.test_plugins:read_xx: module 'tests.test_plugins' "
        f"({here}) defines no 'read_xx' at its top level")
    with pytest.raises(PluginError) as asked:  # asking for it says why it is not there ('Unknown graph format')
        reg.reader("xx")
    assert asked.value is reg.failures["reader xx"]
