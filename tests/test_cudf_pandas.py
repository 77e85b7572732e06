"""graphops under cudf.pandas: proxy frames in, data kept where it is, proxy frames out.

The plumbing is checked here with a stand-in for cudf.pandas (proxy objects of its shape); the
real thing runs on a RAPIDS host, where tests/workflows/cudf_pandas_workflow.py runs as unchanged
pandas code under ``python -m cudf.pandas``."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import graphops as go
from graphops.base.device import Device, as_proxy, device_of, unproxy

WORKFLOW = Path(__file__).parent / "workflows" / "cudf_pandas_workflow.py"


class _Proxy:
    """The shape of a cudf.pandas proxy: it wraps a real frame in ``_fsproxy_wrapped``."""

    def __init__(self, wrapped):
        object.__setattr__(self, "_fsproxy_wrapped", wrapped)

    def __getattr__(self, name):  # frame methods go to the wrapped frame, as the proxy does
        return getattr(self._fsproxy_wrapped, name)

    def __getitem__(self, key):
        return self._fsproxy_wrapped[key]


_Proxy.__module__ = "pandas.core.frame"  # as cudf.pandas names its proxy types


@pytest.fixture
def fake_cudf_pandas(monkeypatch):
    """A stand-in cudf.pandas in sys.modules (is_proxy_object, as_proxy_object)."""
    api = types.ModuleType("cudf.pandas")
    api.is_proxy_object = lambda obj: isinstance(obj, _Proxy)
    api.as_proxy_object = lambda obj: obj if isinstance(obj, _Proxy) else _Proxy(obj)
    monkeypatch.setitem(sys.modules, "cudf", sys.modules.get("cudf") or types.ModuleType("cudf"))
    monkeypatch.setitem(sys.modules, "cudf.pandas", api)
    monkeypatch.setitem(sys.modules, "cudf.pandas.fast_slow_proxy", types.ModuleType("fsp"))
    return api


def test_no_proxies_without_cudf_pandas():
    df = pd.DataFrame({"a": [1]})
    assert unproxy(df) == (df, False)
    assert as_proxy(df) is df
    assert Device.CPU.xdf is pd


def test_proxy_frame_in_proxy_frame_out(fake_cudf_pandas):
    edges = pd.DataFrame({"u": [0, 0, 1, 2], "v": [1, 2, 2, 3]})
    proxy = _Proxy(edges)
    assert unproxy(proxy) == (edges, True)
    assert device_of(proxy) is Device.CPU  # where the wrapped frame is, not "cudf" by module name
    g = go.Graph.from_edgelist(proxy, src="u", dst="v")
    assert g.proxied and g.device is Device.CPU
    res = go.run("jaccard", g, backend="cpu")
    assert isinstance(res, _Proxy) and isinstance(res._fsproxy_wrapped, pd.DataFrame)
    plain = go.run("jaccard", go.Graph.from_edgelist(edges, src="u", dst="v"), backend="cpu")
    assert not isinstance(plain, _Proxy)
    pd.testing.assert_frame_equal(res._fsproxy_wrapped, plain)
    # a proxy pairs frame alone also makes the result a proxy; moving the graph keeps the mark
    pairs = _Proxy(pd.DataFrame({"first": [0], "second": [3]}))
    out = go.run("jaccard", go.Graph.from_edgelist(edges, src="u", dst="v"), pairs=pairs, backend="cpu")
    assert isinstance(out, _Proxy) and list(out["second"]) == [3]
    assert g.to("cpu").proxied


def test_proxy_node_frame(fake_cudf_pandas):
    nodes = _Proxy(pd.DataFrame({"id": [0, 1, 2, 3, 9], "label": [1, 1, 2, 2, 3]}))
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [0, 1], "dst": [1, 3]}), nodes=nodes)
    assert g.n_vertices == 5 and not g.proxied
    assert list(np.asarray(g.nodes["id"])) == [0, 1, 2, 3, 9]


@pytest.mark.rapids
def test_unchanged_pandas_code_under_cudf_pandas():
    """The workflow script under ``python -m cudf.pandas``: GPU data stays on the GPU, results
    come back as proxies, values equal the plain-pandas CPU run."""
    run = subprocess.run([sys.executable, "-m", "cudf.pandas", str(WORKFLOW)], capture_output=True,
                         text=True, timeout=600, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-6000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen == {"graph": "gpu", "result": "gpu", "slow_graph": "cpu", "slow_result": "cpu",
                    "string_ids": ["ann", "cy"], "euler_rows": 6, "euler_device": "gpu",
                    "host_frame": "pandas"}
