"""What a plugin declares is checked as it is declared: a wrong field is an error naming the
declaration, the field, the value and how to write it (never an IndexError or a re error from
inside graphops), and the registry leaves the plugin out with that message."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphops import Algorithm, Backend, Command, Generator, Gram, Input, Params, Reader, hookimpl
from graphops.host.registry import Registry


def _algo(**given_):
    return Algorithm(**{"name": "x", "params": Params, "inputs": ("graph",), "backends": {"cpu": "a.b:c"}, **given_})


CASES = [  # (declaration, error type, message)
    (lambda: _algo(inputs=()), ValueError,
     "algorithm 'x': inputs is empty; declare at least one input slot, e.g. inputs=('graph',)"),
    (lambda: _algo(backends={"cpu": 123}), TypeError,
     "algorithm 'x': backends['cpu'] is 123 (int); give a 'package.module:function' string or "
     "graphops.Backend(target='package.module:function', ...)"),
    (lambda: _algo(outputs=("vertex", "value"), vertex_columns=("nope",)), ValueError,
     "algorithm 'x': vertex_columns names 'nope', which is not among outputs ('vertex', 'value'); graphops maps "
     "only declared output columns to the caller's ids. List it in outputs, or drop it from vertex_columns"),
    (lambda: _algo(outputs=("vertex", "value"), vertex_columns={"nope": "graph"}), ValueError,
     "algorithm 'x': vertex_columns names 'nope', which is not among outputs ('vertex', 'value'); graphops maps "
     "only declared output columns to the caller's ids. List it in outputs, or drop it from vertex_columns"),
    (lambda: _algo(outputs=("vertex", "vertex")), ValueError,
     "algorithm 'x': outputs names 'vertex' more than once; list each once"),
    (lambda: _algo(outputs="degree"), TypeError,
     "algorithm 'x': outputs must be a tuple of strings, not one string; write outputs=('degree',)"),
    (lambda: _algo(optional_outputs=("graph",), outputs=("n",)), ValueError,
     "algorithm 'x': optional_outputs names 'graph', which outputs ('n',) lacks; list it in outputs too"),
    (lambda: _algo(inputs="graph"), TypeError,
     "algorithm 'x': inputs must be a tuple of slot names or graphops.Input objects; got 'graph' (str); write "
     "inputs=('graph',)"),
    (lambda: _algo(inputs=("graph", "graph")), ValueError,
     "algorithm 'x': the input slot 'graph' is declared more than once; give each slot its own name"),
    (lambda: _algo(inputs=(Input("g"), 3)), TypeError,
     "algorithm 'x': inputs holds 3 (int); each slot is a name ('graph') or graphops.Input('graph', kinds=(...))"),
    (lambda: _algo(name=123), TypeError, "algorithm name must be a string matching [a-z][a-z0-9_]*; got 123 (int)"),
    (lambda: _algo(backends=["a.b:c"]), TypeError,
     "algorithm 'x': backends must be a dict of backend names matching [a-z][a-z0-9_]* ('cpu', 'gpu', ...) -> a "
     "'package.module:function' string or graphops.Backend(target='package.module:function', ...); got "
     "['a.b:c'] (list)"),
    (lambda: _algo(backends={}), ValueError,
     "algorithm 'x' offers no backend; give backends={'cpu': 'package.module:function'}"),
    (lambda: _algo(backends={"CPU": "a.b:c"}), ValueError,
     "algorithm 'x': backends has the key 'CPU' (str); its keys are backend names matching [a-z][a-z0-9_]* "
     "('cpu', 'gpu', ...)"),
    (lambda: _algo(backends={"cpu": "a.b.c"}), ValueError,
     "algorithm 'x': backends['cpu']: backend target must look like 'package.module:function'; got 'a.b.c'"),
    (lambda: _algo(result="table"), ValueError,
     "algorithm 'x': result must be one of 'frame', 'array', 'array_or_frame'; got 'table'"),
    (lambda: _algo(cost=5), TypeError,
     "algorithm 'x': cost must look like 'package.module:function' (a string naming where it is defined); got 5 "
     "(int)"),
    (lambda: _algo(summary=None), TypeError, "algorithm 'x': summary must be a string; got None (NoneType)"),
    (lambda: _algo(writers={".fa": 3}), TypeError,
     "algorithm 'x': writers['.fa'] is 3 (int); give 'package.module:function'"),
    (lambda: _algo(params=dict), TypeError,
     "algorithm 'x': params must be a graphops.Params subclass; got <class 'dict'> (type)"),
    (lambda: Input("g", kinds="graph"), TypeError,
     "Input 'g': kinds must be a tuple of strings, not one string; write kinds=('graph',)"),
    (lambda: Input(3), TypeError, "input slot name must be a string matching [a-z][a-z0-9_]*; got 3 (int)"),
    (lambda: Backend(target="a.b:c", device="tpu"), ValueError,
     "Backend('a.b:c'): device must be one of 'cpu', 'gpu'; got 'tpu'"),
    (lambda: Backend(target="a.b:c", requires="cupy"), TypeError,
     "Backend('a.b:c'): requires must be a tuple of strings, not one string; write requires=('cupy',)"),
    (lambda: Reader("x", ".x", "a.b:c"), TypeError,
     "reader 'x': suffixes must be a tuple of strings, not one string; write suffixes=('.x',)"),
    (lambda: Reader("x", ("x",), "a.b:c"), ValueError,
     "reader 'x': suffixes look like '.csv' (a dot, then letters or digits: the last suffix of a file name); got 'x'"),
    (lambda: Reader(5, (".x",), "a.b:c"), TypeError,
     "reader name must be a string matching [a-z][a-z0-9_]*; got 5 (int)"),
    (lambda: Reader("x", (".x",), 5), TypeError,
     "reader 'x': target must look like 'package.module:function' (a string naming where it is defined); got 5 (int)"),
    (lambda: Reader("x", (".x",), "a.b:c", nodes="a.b"), ValueError,
     "reader 'x': nodes must look like 'package.module:function' (a string naming where it is defined); got 'a.b' "
     "(str)"),
    (lambda: Command(name="c", summary="s", target="a.b:c", arguments=3), TypeError,
     "command 'c': arguments must be a function(parser) adding the command's arguments, or None; got 3"),
    (lambda: Command(name=None, summary="s", target="a.b:c"), TypeError,
     "command name must be a string matching [a-z][a-z0-9-]*; got None (NoneType)"),
    (lambda: Generator("g", 5, "a.b:c"), TypeError,
     "generator 'g': params must be a graphops.GeneratorParams subclass or its 'package.module:Class'; got 5"),
    (lambda: Gram(work="edges"), ValueError, "Gram: work must be one of 'nodes', 'node_pairs', 'nodes_edges'; got 'edges'"),
]


@pytest.mark.parametrize("declare, kind, message", CASES, ids=[c[2][:60] for c in CASES])
def test_a_bad_declaration_names_the_field_and_the_fix(declare, kind, message):
    with pytest.raises(kind) as info:
        declare()
    assert str(info.value) == message


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.integers(), st.floats(), st.none(), st.binary(max_size=4), st.lists(st.integers(), max_size=2),
                 st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)))
def test_any_wrong_value_of_any_field_is_a_clear_error(value):
    """Whatever a field is given, the declaration either stands or raises TypeError/ValueError naming
    the declaration (never IndexError, KeyError, AttributeError or re's 'expected string')."""
    fields = ("name", "inputs", "backends", "outputs", "optional_outputs", "result", "vertex_columns", "summary",
              "cost", "writers", "functions", "estimator", "gram")
    for field in fields:
        try:
            _algo(**{field: value})
        except (TypeError, ValueError) as exc:
            assert str(exc).startswith(("algorithm 'x'", "algorithm name")), (field, str(exc))
    for make in (lambda v: Reader("x", v, "a.b:c"), lambda v: Reader("x", (".x",), "a.b:c", options=v),
                 lambda v: Input("g", kinds=v), lambda v: Backend("a.b:c", requires=v)):
        try:
            make(value)
        except (TypeError, ValueError) as exc:
            assert str(exc).startswith(("reader 'x'", "Input 'g'", "Backend('a.b:c')")), str(exc)


def test_the_registry_leaves_a_bad_declaration_out_and_says_why(fresh_pm):
    class Leaky:
        @staticmethod
        @hookimpl
        def graphops_register_algorithms():
            return [_algo(name="leaky", outputs=("vertex", "value"), vertex_columns=("nope",))]

    fresh_pm.register(Leaky(), name="leaky")
    reg = Registry(fresh_pm)
    assert "leaky" not in reg.algorithms and "describe" in reg.algorithms
    assert str(reg.failures["leaky"]).startswith(
        "plugin 'leaky' (from ?) was left out: its graphops_register_algorithms() raised ValueError: algorithm "
        "'leaky': vertex_columns names 'nope', which is not among outputs ('vertex', 'value')")


def test_lists_are_taken_where_tuples_are_declared():
    algo = _algo(inputs=["graph"], outputs=["vertex", "value"], vertex_columns=["vertex"])
    assert algo.outputs == ("vertex", "value") and algo.vertex_columns == {"vertex": "graph"}
    assert Reader("x", [".x"], "a.b:c").suffixes == (".x",)
