"""What graphops checks around a plugin's code: the inputs a backend gets are read-only on the host
(a backend writing into them cannot corrupt the graph for later calls), array results hold numbers,
readers return frames, and a plugin's exception reaches the caller with its type and a note naming
the backend, the algorithm, the plugin and its distribution."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import graphops as go
from graphops import Algorithm, Params, PluginError, Reader
from graphops.engine.dispatch import execute
from graphops.engine.local import error_line
from graphops.engine.testing import check_algorithm
from graphops.host.contract import check_reader_result

NOTE = ("graphops: raised inside backend 'cpu' of algorithm 'misbehaving' (plugin 'evp', distribution evp-dist 0.1): "
        "a bug of the plugin, not of the input; report it to the plugin's authors")


def _algo(function: str, **declared) -> Algorithm:
    return Algorithm(**{"name": "misbehaving", "params": Params, "inputs": ("graph",), "outputs": ("n",),
                        "backends": {"cpu": f"tests.misbehaving_backend:{function}"}, "plugin": "evp",
                        "distribution": "evp-dist 0.1", **declared})


@pytest.fixture
def g():
    return go.Graph.from_edgelist(pd.DataFrame({"src": [0, 1, 2, 3], "dst": [1, 2, 0, 4]}))


@pytest.mark.parametrize("function", ["mutate", "mutate_in_numba"])
def test_a_backend_cannot_write_into_the_graphs_csr(g, function):
    before = go.run("describe", g, backend="cpu")
    with pytest.raises(Exception) as info:
        execute(_algo(function), {"graph": g}, "cpu", {})
    assert "read-only" in str(info.value) or "readonly" in str(info.value)
    assert info.value.__notes__ == [NOTE]
    pd.testing.assert_frame_equal(go.run("describe", g, backend="cpu"), before)
    assert int(before["n_components"][0]) == 2 and float(before["degree_max"][0]) == 2


def test_a_backend_that_copies_first_may_change_its_copy(g):
    assert execute(_algo("copy_then_change"), {"graph": g}, "cpu", {}).result["n"].tolist() == [0]
    assert g.csr().indices.sum() > 0


def test_check_algorithm_finds_a_backend_writing_into_its_inputs():
    """CuPy arrays cannot be read-only: the plugin authors' gate compares the inputs before and after."""
    with pytest.raises(AssertionError) as info:
        check_algorithm(_algo("sneaky"))
    assert str(info.value) == ("misbehaving: backend 'cpu' on graph 'single_edge': the backend wrote into its input "
                               "array(s) graph.indices; inputs are shared by later calls: copy an array before "
                               "changing it")


def test_every_host_csr_view_is_read_only(g):
    gs = go.GraphSet.from_graphs([g, g])
    for csr in (g.csr(), g.csr("cpu"), gs.csr()):
        assert all(not a.flags.writeable for a in csr.arrays().values())
    assert gs.node_ptr.flags.writeable  # the set's own array, which its CSR shares, keeps its flag


def test_an_object_array_result_is_the_plugins_bug(g):
    with pytest.raises(PluginError) as info:
        execute(_algo("objects", outputs=(), result="array"), {"graph": g}, "cpu", {})
    assert str(info.value) == (
        "backend 'cpu' of algorithm 'misbehaving' (plugin evp, evp-dist 0.1) returned an array of dtype object; an "
        "array result holds numbers or booleans (a bool, integer, float or complex dtype). Fix the backend")
    assert info.value.distribution == "evp-dist 0.1"


def test_a_reader_returning_no_frame_is_named():
    reader = Reader("evg", (".evg",), "tests.misbehaving_backend:read_42", plugin="evp", distribution="evp-dist 0.1")
    with pytest.raises(PluginError) as info:
        check_reader_result(reader, 42, "y.evg")
    assert str(info.value) == (
        "reader 'evg' (plugin 'evp', evp-dist 0.1): tests.misbehaving_backend:read_42 returned 42 (int) for 'y.evg'; "
        "a reader returns an edge frame (a pandas DataFrame, or a cuDF one on a GPU). Fix the reader in the plugin")
    frame = pd.DataFrame({"src": [0], "dst": [1]})
    assert check_reader_result(reader, frame, "y.evg") is frame


@pytest.mark.parametrize("function, kind", [("key_error", KeyError), ("value_error", ValueError)])
def test_a_plugins_exception_keeps_its_type_and_gains_a_note(g, function, kind):
    with pytest.raises(kind) as info:
        go.execute(_algo(function), {"graph": g}, "cpu", {})
    assert info.value.__notes__ == [NOTE]
    if function == "key_error":
        assert error_line(info.value) == f"KeyError: 'x'; {NOTE}"


def test_graphops_own_errors_raised_in_a_backend_get_no_note(g):
    with pytest.raises(go.InputError) as info:
        go.execute(_algo("input_error"), {"graph": g}, "cpu", {})
    assert not hasattr(info.value, "__notes__")
    assert error_line(info.value) == "InputError: the graph has no weights; build it with weight="


def test_read_graph_names_a_reader_that_returned_no_frame(fresh_pm, tmp_path):
    from graphops import hookimpl
    from graphops.host.registry import Registry

    class Formats:
        @staticmethod
        @hookimpl
        def graphops_register_readers():
            return [Reader("evg", (".evg",), "tests.misbehaving_backend:read_42")]

    fresh_pm.register(Formats(), name="evp")
    path = tmp_path / "y.evg"
    path.write_text("1 2\n")
    with pytest.raises(PluginError) as info:
        go.read_graph(path, registry=Registry(fresh_pm))
    assert str(info.value) == (
        f"reader 'evg' (plugin 'evp'): tests.misbehaving_backend:read_42 returned 42 (int) for {str(path)!r}; a reader "
        f"returns an edge frame (a pandas DataFrame, or a cuDF one on a GPU). Fix the reader in the plugin")
