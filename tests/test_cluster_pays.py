"""The cluster is used only where it pays: a Gram call given a client runs on its workers when the
algorithm's cost estimate says they beat one device (graphops.engine.gramcost), else here, and
the outcome, the run summary and graphops bench say why."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

import graphops as go
from graphops.engine import gramcost
from graphops.engine.dispatch import execute, validate
from graphops.engine.gramcost import Estimate, Site, estimate
from graphops.host.registry import get_registry
from graphops.io.generate import gnp_set, rmat

distributed = pytest.importorskip("distributed")

MG = {"node_kernel": {"kronecker_delta": {"h": 0.5, "on": "label"}}, "edge_kernel": {"constant": {"c": 1.0}}}



def test_a_small_sp_kernel_call_runs_here(client, monkeypatch):
    """A call smaller than what any cluster adds runs here without asking the scheduler anything."""
    gs = go.datasets.load("MUTAG")[:40]

    def no_round_trip(*args, **kwargs):
        raise AssertionError("the scheduler was asked")

    monkeypatch.setattr(client, "scheduler_info", no_round_trip)
    for args in ((gs,), (gs[:9], gs[9:])):
        out = go.execute_call("sp_kernel", *args, backend="CPU", client=client, normalize=True)
        assert out.details["cluster"].startswith("cluster not used: estimated "), out.details
        assert out.reason.count("cluster not used") == 1, out.reason
        assert "on any number of workers" in out.details["cluster"] and "over tcp" in out.details["cluster"]
        assert "workers" not in out.details and out.reason.endswith(out.details["cluster"])
        np.testing.assert_array_equal(out.result, go.run("sp_kernel", *args, backend="cpu", normalize=True))


def test_a_call_the_workers_would_not_speed_up_runs_here(client, monkeypatch):
    """Above the cluster's fixed cost, the estimate for the cluster's workers decides (here: one
    device's 0.1 s against 2 workers' 0.05 s each plus the call, its tasks and the sets sent)."""
    from graphops_sp_kernel import cost

    gs = go.datasets.load("MUTAG")[:40]
    monkeypatch.setitem(cost.CPU, "entry", 0.1 / 820)  # 820 entries of K(gs): 0.1 s on one device
    out = go.execute_call("sp_kernel", gs, backend="cpu", client=client)
    assert out.details["cluster"].startswith("cluster not used: estimated 10"), out.details
    assert "on 2 worker(s)" in out.details["cluster"] and "Dask, 2 worker(s)" in out.reason
    assert "workers" not in out.details and out.reason.count("cluster not used") == 1
    np.testing.assert_array_equal(out.result, go.run("sp_kernel", gs, backend="cpu"))


def test_never_pays_agrees_with_the_estimate():
    """The shortcut never changes a choice: where no cluster of any size pays, neither do 1 to 64 workers."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    algo = get_registry().algorithm("sp_kernel")

    @settings(max_examples=60, deadline=None)
    @given(st.floats(0.0, 2.0), st.integers(1, 300), st.integers(0, 300), st.sampled_from(["tcp", "ucx"]))
    def agree(t1, na, nb, protocol):
        gs = gnp_set({8: na + nb}, p=0.2, seed=1)
        inputs = {"graphs": gs[:na]} if nb == 0 else {"graphs": gs[:na], "other": gs[na:]}
        inputs, p = validate(algo, inputs, {})
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(gramcost, "one_device_seconds", lambda *a, **k: t1)
            never = gramcost.never_pays(algo, inputs, p, "cpu", protocol)
            for k in (1, 2, 3, 8, 64):
                if never:
                    assert not estimate(algo, inputs, p, k, Site(protocol, "cpu")).pays, (t1, k)

    agree()


def test_a_huge_estimate_distributes(client, monkeypatch):
    from graphops_sp_kernel import cost

    monkeypatch.setitem(cost.CPU, "entry", 1.0)  # a second an entry of K: the cluster pays
    gs = go.datasets.load("MUTAG")[:30]
    out = go.execute_call("sp_kernel", gs, backend="cpu", client=client)
    assert out.details["cluster"].startswith("cluster used: estimated ")
    assert sum(w["tasks"] for w in out.details["workers"].values()) == out.details["parts"] > 1
    np.testing.assert_array_equal(out.result, go.run("sp_kernel", gs, backend="cpu"))


def test_a_backend_that_cannot_run_here_stays_on_the_cluster(client, monkeypatch):
    """No estimate when the caller cannot run the workers' backend (e.g. GPU workers, no GPU here)."""
    from graphops.engine import choose

    monkeypatch.setattr(choose, "_usable", lambda spec: (False, "not here"))
    gs = go.datasets.load("MUTAG")[:20]
    out = go.execute_call("sp_kernel", gs, backend="cpu", client=client)
    assert "workers" in out.details and "cluster" not in out.details


def _here(inputs, params, workers, backend=None):  # a plugin's split: too small to share
    from graphops.plugin import Here

    return Here("a test split's answer")


def _unbounded(inputs, params):
    return float("inf")


def _words(inputs, params):
    return "lots"


def test_a_plugin_split_may_answer_here(client):
    algo = dataclasses.replace(get_registry().algorithm("jaccard"), split="tests.test_cluster_pays:_here")
    g = rmat(8, 8, seed=1)
    out = execute(algo, {"graph": g}, "cpu", {}, client=client)
    assert out.details["cluster"] == "cluster not used: a test split's answer"
    pd.testing.assert_frame_equal(out.result, go.run("jaccard", g, backend="cpu"))


def test_the_declared_estimate_is_checked(client):
    from graphops.plugin import Gram

    with pytest.raises(ValueError, match="Gram: seconds must look like 'package.module:function'"):
        Gram(seconds="nope")
    with pytest.raises(TypeError, match="Gram: seconds must look like"):
        Gram(seconds=3)
    sp = get_registry().algorithm("sp_kernel")
    gs = go.datasets.load("MUTAG")[:10]
    words = dataclasses.replace(sp, gram=dataclasses.replace(sp.gram, seconds="tests.test_cluster_pays:_words"))
    with pytest.raises(go.errors.PluginError, match="returned 'lots'; it must return the estimated seconds"):
        execute(words, {"graphs": gs}, "cpu", {}, client=client)
    endless = dataclasses.replace(sp, gram=dataclasses.replace(sp.gram, seconds="tests.test_cluster_pays:_unbounded"))
    out = execute(endless, {"graphs": gs}, "cpu", {}, client=client)
    assert out.details["cluster"].startswith("cluster used: estimated unbounded on one device")
    none = dataclasses.replace(sp, gram=dataclasses.replace(sp.gram, seconds=None))
    out = execute(none, {"graphs": gs}, "cpu", {}, client=client)  # no estimate: always on the cluster
    assert "workers" in out.details and "cluster" not in out.details


PIPELINE = """
version: 1
name: pays
graphs:
  mutag: {dataset: MUTAG}
steps:
  - {id: gram, algorithm: sp_kernel, inputs: {graphs: mutag}, backend: cpu, output: gram.npy}
"""


def test_the_run_summary_says_why_the_cluster_was_not_used(tmp_path, client):
    from graphops.pipeline import run_pipeline

    (tmp_path / "p.yaml").write_text(PIPELINE)
    summary = run_pipeline(tmp_path / "p.yaml", out=tmp_path / "o", cluster=client.scheduler.address)
    (step,) = summary.steps
    assert step.status == "ok" and "; cluster not used: estimated " in step.reason
    assert step.details["cluster"] in step.reason and "on any number of workers" in step.reason
    assert step.reason.count("cluster not used") == 1, step.reason
    written = json.loads((tmp_path / "o" / "pays.summary.json").read_text())
    assert "cluster not used: " in written["steps"][0]["reason"]
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "gram.npy"),
                                  go.run("sp_kernel", go.datasets.load("MUTAG"), backend="cpu"))


def test_a_bench_row_that_ran_here_has_no_workers(tmp_path, client):
    from graphops.cli.bench import run_bench

    bench = PIPELINE.replace("backend: cpu, output: gram.npy", "backend: cpu") + (
        f"cluster: {{address: '{client.scheduler.address}'}}\nbench: {{repeat: 1, warmup: 0, baseline: cpu}}\n")
    (tmp_path / "b.yaml").write_text(bench)
    (row,) = run_bench([tmp_path / "b.yaml"]).rows
    assert row.median and row.workers == 0 and row.efficiency is None
    assert row.note.startswith("cluster not used: estimated "), row.note


# the estimate ------------------------------------------------------------------------------------

def _estimate(name, test, train, workers, protocol="tcp", backend="gpu", unsent=0, **params):
    algo = get_registry().algorithm(name)
    inputs, p = validate(algo, {"graphs": test, "other": train} if train is not None else {"graphs": test}, params)
    return estimate(algo, inputs, p, workers, Site(protocol, backend, unsent))


@pytest.mark.parametrize("name, params", [("sp_kernel", {}), ("sp_kernel", {"path": "fcsp"}), ("mg_kernel", MG)])
@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_the_estimate_grows_with_the_sets_and_shrinks_with_workers(name, params, backend):
    small, large = gnp_set({12: 20, 20: 20}, p=0.2, seed=1), gnp_set({12: 80, 30: 80}, p=0.2, seed=2)
    for test, train in ((small[:10], small), (small, None)):
        bigger = (large[:40], large) if train is not None else (large, None)
        assert _estimate(name, *bigger, 2, backend=backend, **params).one_device > \
            _estimate(name, test, train, 2, backend=backend, **params).one_device
    shares = [_estimate(name, small[:10], large, k, backend=backend, **params) for k in (1, 2, 4, 8)]
    assert len({e.one_device for e in shares}) == 1
    assert [e.compute for e in shares] == sorted((e.compute for e in shares), reverse=True)
    assert shares[0].compute > shares[1].compute > shares[3].compute
    assert not shares[0].pays  # one worker: one device's work and the cluster's overhead on top
    slow, fast = (_estimate(name, small[:10], large, 4, protocol=p, backend=backend, **params) for p in ("tcp", "ucx"))
    assert slow.moving > fast.moving and slow.cluster > fast.cluster
    first = _estimate(name, small[:10], large, 4, backend=backend, unsent=10 ** 7, **params)
    assert first.moved_bytes == slow.moved_bytes + 4 * 10 ** 7  # a first call sends the sets to every worker


def test_the_benchmark_sets_split_as_measured():
    """Calibrated on configs/bench/scaling_gram.yaml (1,000 x 20,000 molecule-sized graphs, H100):
    mg_kernel (~0.9-1.3 s on one GPU) is cut on 2+ GPU workers, over ucx or tcp, also on a first
    call; sp_kernel (14.5-23 ms on one GPU, 142-237 ms on a cluster) never is."""
    from graphops.engine.placing import nbytes as _nbytes

    train = gnp_set({12: 5000, 18: 5000, 24: 5000, 30: 5000}, p=0.12, seed=7)
    test = gnp_set({20: 1000}, p=0.12, seed=8)
    sets = _nbytes(train) + _nbytes(test)
    mg = _estimate("mg_kernel", test, train, 1, **MG)
    assert 0.8 < mg.one_device < 1.4
    sp = _estimate("sp_kernel", test, train, 1)
    assert 0.01 < sp.one_device < 0.03
    for protocol in ("ucx", "tcp"):
        for unsent in (0, sets):
            assert not _estimate("mg_kernel", test, train, 1, protocol, unsent=unsent, **MG).pays
            for k in (2, 4, 8):
                assert _estimate("mg_kernel", test, train, k, protocol, unsent=unsent, **MG).pays
            for k in (1, 2, 4, 8, 64):
                assert not _estimate("sp_kernel", test, train, k, protocol, unsent=unsent).pays


def test_the_protocol_is_read_from_the_scheduler_address(client):
    class Fake:
        def __init__(self, address):
            self.scheduler = type("S", (), {"address": address})()

    assert gramcost.protocol_of(client) == "tcp"
    assert [gramcost.protocol_of(Fake(a)) for a in ("ucx://10.0.0.1:8786", "ucxx://h:1", "inproc://x/1", None)] == \
        ["ucx", "ucx", "inproc", "tcp"]
    assert gramcost.link_rate("ucx") > gramcost.link_rate("tcp") == gramcost.link_rate("tls")
    e = Estimate(1.0, 4, 16, 8e6, "inproc")
    assert e.moving == 0 and e.cluster == pytest.approx(0.25 + gramcost.CALL_SECONDS + 16 * gramcost.TASK_SECONDS)
    assert e.pays == (e.cluster * gramcost.PAYS_BY < 1.0)


def test_a_first_call_counts_the_sets_it_sends(client, monkeypatch):
    from graphops.engine import cluster
    from graphops.engine.dispatch import plan
    from graphops.engine.placing import nbytes as _nbytes_of

    gs = go.datasets.load("MUTAG")[:12]
    monkeypatch.setattr(gramcost, "PAYS_BY", 0.0)  # planned for the cluster, and sent by a call there
    planned = plan(get_registry().algorithm("sp_kernel"), {"graphs": gs}, "cpu", {}, client=client)
    assert cluster._site(planned).unsent_bytes == _nbytes_of(gs) > 0
    cluster.run_on_cluster(planned)
    assert cluster._site(planned).unsent_bytes == 0
