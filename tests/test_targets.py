"""Targets resolved from their source (graphops.host.targets) and the backend contract checked on
the parameters read there (graphops.host.contract): nothing is imported, and the quick reading
agrees with Python's parser and with Python's own call rules."""
from __future__ import annotations

import ast

from hypothesis import given, settings
from hypothesis import strategies as st

from graphops.host.contract import call_problem
from graphops.host.targets import _Module

NAMES = ("run", "prepare", "other")


@st.composite
def signatures(draw) -> str:
    """A parameter list: positional (some with defaults), maybe *args, maybe keyword-only."""
    n = draw(st.integers(0, 4))
    defaults = draw(st.integers(0, n))
    parts = [f"a{i}" + ("=0" if i >= n - defaults else "") for i in range(n)]
    if draw(st.booleans()):
        parts.append("*rest")
    keyword = draw(st.lists(st.sampled_from(["k0", "k1=1", "k2"]), max_size=2, unique=True))
    if keyword:
        parts += ([] if "*rest" in parts else ["*"]) + keyword
    return ", ".join(parts)


@settings(max_examples=150, deadline=None)
@given(signatures(), st.integers(0, 5))
def test_the_contract_check_agrees_with_python(params, given_args):
    """No problem found means the call works; a call Python refuses is always a problem."""
    args = ast.parse(f"def f({params}):\n    pass\n").body[0].args
    namespace: dict = {}
    exec(f"def f({params}):\n    pass\n", namespace)
    try:
        namespace["f"](*range(given_args))
        works = True
    except TypeError:
        works = False
    problem = call_problem(args, given_args)
    assert works or problem is not None
    if works and problem is not None:  # stricter than Python in one way: no unused parameters with defaults
        assert problem.startswith("takes") and "*rest" not in params


def _layout(sig: str, style: int) -> str:
    if style == 0:
        return f"({sig})"
    if style == 1:
        return "(\n    " + sig.replace(", ", ",\n    ") + ",\n)" if sig else "(\n)"
    return f"({sig}\n        )"


@st.composite
def blocks(draw) -> str:
    kind = draw(st.sampled_from(["def", "def", "decorated", "docstring", "class", "comment", "assign"]))
    name = draw(st.sampled_from(NAMES))
    sig = _layout(draw(signatures()), draw(st.integers(0, 2)))
    fake = f'"""text at column 0:\ndef {name}(fake, one):\n    pass\n"""'
    if kind in ("def", "decorated"):
        head = "@decorate(1,\n   2)\n" if kind == "decorated" else ""
        doc = fake.replace('"""', "'''") if draw(st.booleans()) else '"""One line."""'
        return f"{head}def {name}{sig} -> dict[str, int]:\n    {doc}\n    return {{}}\n"
    if kind == "docstring":
        return fake + "\n"
    if kind == "class":
        return f"class C:\n    def {name}(self, x):\n        pass\n"
    return "# def run(commented, out):\n" if kind == "comment" else f"{name}_table = {{\n'a': 1,\n}}\n"


@settings(max_examples=150, deadline=None)
@given(st.lists(blocks(), max_size=7), st.sampled_from(NAMES))
def test_the_quick_reading_finds_what_the_parser_finds(parts, name):
    """Whatever the layout (multi-line signatures, a closing parenthesis at column 0, decorators,
    strings holding 'def' at column 0, methods, comments), a function's parameters are those of
    the module's last top-level def of that name, as Python's parser reads it."""
    text = "\n".join(parts)
    tree = ast.parse(text)
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    found = _Module("m", "m.py", text).function(name)
    assert (found is None) == (not defs)
    if defs:
        assert ast.unparse(found.args) == ast.unparse(defs[-1].args)
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    names |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets}
    assert _Module("m", "m.py", text).defines(name) == (name in names)
    assert _Module("m", "m.py", text).defines(f"{name}_table") == (f"{name}_table" in names)


def test_registering_graphops_plugins_parses_no_module_in_full():
    """Every in-tree target is found by the quick reading (a few ms for all plugins at every
    command-line start); whole modules are parsed only when it finds nothing."""
    from graphops.host.contract import backend_problems
    from graphops.host.registry import get_registry
    from graphops.host.targets import Sources

    sources = Sources()
    registry = get_registry()
    for algo in registry.algorithms.values():
        assert backend_problems(algo, sources) == {}
    for reader in registry.readers.values():
        reader.check_contract(sources)
    for target in [*(c.target for c in registry.commands.values()), *(g.target for g in registry.generators.values())]:
        sources.check_defined(target)
    assert not [name for name, m in sources._modules.items() if m is not None and m._tree is not None]
