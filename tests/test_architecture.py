"""The house rules, checked on the source: layers import only downwards, nothing imports in a
circle, and plugins (graphops' own and the example) import only the plugin API."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Each layer may import the layers before it (and itself); graphops.errors and graphops.version
# sit under all of them. graphops/__init__.py, __main__.py and plugin.py are the top: they may
# import any layer, and no layer imports them.
LAYERS = ("base", "model", "host", "io", "engine", "kernels", "pipeline", "cli")
FLOOR = ("graphops.errors", "graphops.version")
PLUGIN_API = ("graphops", "graphops.plugin")


def imported(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """``(line, module)`` for every import in ``source`` (module level and inside functions),
    relative imports resolved against ``module``."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            out.append((node.lineno, target))
            out += [(node.lineno, f"{target}.{a.name}") for a in node.names]  # from graphops import plugin
    return out


TARGET = re.compile(r"^(graphops[\w.]*\w)(?::[\w.]+)?$")  # "module:function" or a module, as registered


def named_targets(source: str) -> list[tuple[int, str]]:
    """``(line, module)`` for every string in ``source`` that names a graphops module (a registered
    ``"module:function"`` target, or a module a target is made from): an import made by string."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = TARGET.match(node.value)
            if match and "." in match.group(1):
                out.append((node.lineno, match.group(1)))
    return out


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "graphops" and parts[1] in LAYERS else None


def _real(name: str, known: set[str]) -> str:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name


def layer_violations(source: str, module: str, known: set[str], is_package: bool = False) -> list[str]:
    """Imports of ``module`` (in a layer) that point at a later layer or at the top."""
    mine = LAYERS.index(layer_of(module))
    bad = []
    for line, name in [*imported(source, module, is_package), *named_targets(source)]:
        target = _real(name, known) if name.startswith("graphops") else ""
        if not target or target in FLOOR or target == module:
            continue
        theirs = layer_of(target)
        if theirs is None or LAYERS.index(theirs) > mine:
            bad.append(f"{module}:{line} imports {target}")
    return bad


def plugin_violations(source: str, module: str) -> list[str]:
    """Imports of graphops modules other than the plugin API from a plugin's module."""
    bad = []
    for line, name in [*imported(source, module), *named_targets(source)]:
        head = name.split(".")
        if head[0] == "graphops" and ".".join(head[:2]) not in PLUGIN_API and name not in PLUGIN_API:
            if not (len(head) == 2 and head[1][:1].isupper()):  # from graphops import Graph: a public name
                bad.append(f"{module}:{line} imports {name}")
    return bad


def _core_modules() -> dict[str, Path]:
    out = {}
    for path in (ROOT / "graphops").rglob("*.py"):
        rel = path.relative_to(ROOT).with_suffix("")
        name = ".".join(rel.parts)
        out[name.removesuffix(".__init__")] = path
    return out


def _plugin_modules() -> dict[str, Path]:
    out = {}
    for root in (ROOT / "plugins", ROOT / "examples"):
        for path in root.rglob("*.py"):
            if "build" in path.parts or "tests" in path.parts:
                continue
            rel = path.relative_to(root).with_suffix("")
            parts = [p for p in rel.parts if not p.startswith("graphops-")]
            out[".".join(parts).removesuffix(".__init__")] = path
    return out


def test_layers_import_only_downwards():
    modules = _core_modules()
    known = set(modules)
    bad = [v for name, path in sorted(modules.items()) if layer_of(name)
           for v in layer_violations(path.read_text(), name, known, path.name == "__init__.py")]
    assert bad == []
    assert {layer_of(m) for m in modules} - {None} == set(LAYERS)


def test_top_level_entries_are_few():
    entries = {p.name for p in (ROOT / "graphops").iterdir() if p.suffix == ".py" or
               (p.is_dir() and (p / "__init__.py").exists())}
    assert entries == {"__init__.py", "__main__.py", *LAYERS, "errors.py", "plugin.py", "version.py"}


def test_no_import_circles():
    modules = {**_core_modules(), **_plugin_modules()}
    known = set(modules)
    graph = {m: set() for m in modules}
    for name, path in modules.items():
        for _, target in imported(path.read_text(), name, path.name == "__init__.py"):
            real = _real(target, known)
            if real and real != name and not name.startswith(real + "."):
                graph[name].add(real)
    assert _cycles(graph) == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_plugins_import_only_the_plugin_api():
    bad = [v for name, path in sorted(_plugin_modules().items()) for v in plugin_violations(path.read_text(), name)]
    assert bad == []


def test_every_plugin_api_name_resolves():
    import graphops.plugin as api

    for name in api.__all__:
        try:
            assert getattr(api, name) is not None, name
        except ModuleNotFoundError as exc:  # the CUDA loaders import CuPy: GPU backends use them
            assert exc.name in ("cupy", "cudf"), name
    with pytest.raises(AttributeError, match="graphops.plugin has no 'IdMaps': a plugin may import"):
        api.IdMaps  # noqa: B018


@pytest.mark.parametrize("module, source, rule", [
    ("graphops.model.graph", "from graphops.engine.dispatch import run\n", "layers"),
    ("graphops.base.device", "def f():\n    from graphops.host import registry\n", "layers"),
    ("graphops.io.files", "from graphops import plugin\n", "layers"),
    ("graphops.host.registry", "from ..pipeline import schema\n", "layers"),
    ("graphops_jaccard.cpu", "from graphops.model.csr import CSR\n", "plugins"),
    ("graphops_jaccard.cpu", "def f():\n    import graphops.base.work\n", "plugins"),
    ("graphops.host.registry", 'TEXT = "graphops.io.textio:read_text"\n', "layers"),  # a target names a module
    ("graphops.base.device", 'spec = {"target": "graphops.engine.gram"}\n', "layers"),
    ("graphops_jaccard", 'Backend(target="graphops.engine.gram:gram_rows")\n', "plugins"),
])
def test_the_checks_catch_a_wrong_import(module, source, rule):
    known = set(_core_modules())
    if rule == "layers":
        assert layer_violations(source, module, known)
    else:
        assert plugin_violations(source, module)
    fine = "from graphops.errors import InputError\nfrom graphops.base.device import Device\n"
    assert not layer_violations(fine, "graphops.model.graph", known)
    assert not plugin_violations("from graphops.plugin import CSR\nimport graphops\nfrom graphops import Graph\n",
                                 "graphops_jaccard.cpu")


# Plugins of one shape: what a plugin registers lives in the module of its role, so a reader finds
# the CPU backend in cpu.py and a plugin's commands in cli.py in every plugin. Other modules of a
# plugin are helpers named for what they hold (sp_kernel's paths, mg_kernel's tiles, euler's
# merge), imported by these.
ROLES = {
    "backend cpu": "cpu", "backend gpu": "gpu", "backend hybrid": "hybrid", "peer backend": "peer",
    "params": "params", "split": "dist", "command": "cli", "reader": "io", "writer": "io",
    "generator": "io", "estimator": "estimator", "plot": "common",
}


def _roles(registry):
    """(plugin package, role, target) for everything an in-tree plugin registered."""
    for a in registry.algorithms.values():
        pkg = a.params.__module__.split(".")[0]
        yield pkg, "params", f"{a.params.__module__}:{a.params.__name__}"
        for name, b in a.backends.items():
            yield pkg, "peer backend" if b.peer else f"backend {name}", b.target
        for role, target in (("split", a.split), ("estimator", a.estimator_class), ("plot", a.plot)):
            if target and target.startswith(pkg + "."):
                yield pkg, role, target
        for target in a.writers.values():
            yield pkg, "writer", target
    for kind, items in (("reader", registry.readers), ("generator", registry.generators),
                        ("command", registry.commands)):
        for item in items.values():
            if not item.target.startswith("graphops."):
                yield item.target.split(".")[0], kind, item.target


def test_plugins_have_one_shape():
    from graphops.host.registry import get_registry

    wrong = [f"{pkg}: {role} {target} (belongs in {pkg}.{ROLES[role]})"
             for pkg, role, target in _roles(get_registry())
             if pkg.startswith("graphops_") and role in ROLES
             and target.split(":")[0] != f"{pkg}.{ROLES[role]}"]
    assert not wrong, "\n".join(wrong)
    for pkg in {p for p, _, _ in _roles(get_registry()) if p.startswith("graphops_")}:
        common = ROOT / "plugins" / pkg / "common.py"
        if common.exists():  # device-neutral: no backend module, no CuPy at import
            mods = [m for _, m in imported(common.read_text(), f"{pkg}.common")]
            assert not [m for m in mods if m.split(".")[:2] in ([pkg, "cpu"], [pkg, "gpu"], [pkg, "hybrid"])
                        or m == "cupy"], (pkg, mods)


def test_every_algorithm_has_a_reference_and_an_example():
    """tests/reference/<algorithm>.py (the slow, obvious check) and configs/<algorithm>_example.yaml
    (a pipeline a user runs first) for every algorithm graphops ships."""
    from graphops.host.registry import get_registry

    names = sorted(get_registry().algorithms)
    assert not [n for n in names if not (ROOT / "tests" / "reference" / f"{n}.py").exists()]
    assert not [n for n in names if not (ROOT / "configs" / f"{n}_example.yaml").exists()]


def test_every_plugin_api_name_is_used_in_tree_or_documented():
    """A name in graphops.plugin earns its place: an in-tree plugin imports it, or the plugin
    guide (docs/plugins.md) describes it for third-party plugins."""
    import graphops.plugin as api

    used = set()
    for path in _plugin_modules().values():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "graphops.plugin":
                used |= {a.name for a in node.names}
    guide = (ROOT / "docs" / "plugins.md").read_text()
    quoted = set(re.findall(r"\w+", " ".join(re.findall(r"`([^`]*)`", guide))))  # words in `code`
    idle = [n for n in api.__all__ if n not in used and n not in quoted]
    assert idle == [], f"in graphops.plugin, used by no in-tree plugin and not in docs/plugins.md: {idle}"
