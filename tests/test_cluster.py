"""Calls on a Dask cluster (client=): a LocalCluster of worker processes gives the same results
as one process, bit for bit, also when a worker dies mid-run; errors come before any work."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pandas as pd
import pytest

import graphops as go
from graphops.errors import BackendUnavailableError, InputError
from graphops.generate import rmat
from graphops.kernels import KroneckerDelta

distributed = pytest.importorskip("distributed")

KD = KroneckerDelta(0.5, on="label")


@pytest.fixture(scope="module")
def client():
    """Two CPU worker processes, no GPU visible to them (also on a GPU host)."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                       env={"CUDA_VISIBLE_DEVICES": ""})
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_jaccard_pairs_in_parts_equal_one_process(client):
    g = rmat(11, 8, seed=3)
    ref = go.run("jaccard", g, backend="cpu")
    out = go.execute_call("jaccard", g, backend="cpu", client=client)
    pd.testing.assert_frame_equal(out.result, ref)
    workers = out.details["workers"]
    assert sum(w["parts"] for w in workers.values()) == out.details["parts"] > 2 and "Dask" in out.reason
    names = pd.DataFrame({"u": ["ann", "bob", "bob", "cy", "ann", "dee"], "v": ["bob", "cy", "dee", "dee", "dee", "ed"]})
    gn = go.Graph.from_edgelist(names, src="u", dst="v")
    pairs = pd.DataFrame({"first": ["ann", "cy", "ed", "bob"], "second": ["cy", "bob", "ann", "ann"]})
    pd.testing.assert_frame_equal(go.run("jaccard", gn, pairs=pairs, backend="cpu", client=client),
                                  go.run("jaccard", gn, pairs=pairs, backend="cpu"))


@pytest.mark.parametrize("normalize", [False, True])
def test_mg_kernel_gram_in_row_blocks_equals_one_process(client, normalize):
    gs = go.datasets.load("MUTAG")[:48]
    kw = dict(node_kernel=KD, edge_kernel=KD, normalize=normalize)
    np.testing.assert_array_equal(go.run("mg_kernel", gs, backend="cpu", client=client, **kw),
                                  go.run("mg_kernel", gs, backend="cpu", **kw))
    test, train = gs[:10], gs[10:]
    np.testing.assert_array_equal(go.run("mg_kernel", test, train, backend="cpu", client=client, **kw),
                                  go.run("mg_kernel", test, train, backend="cpu", **kw))


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("kernels", [{}, {"node_kernel": {"gaussian": {"gamma": 0.5}}, "length_kernel": {"gaussian": {"gamma": 1.0}},
                                      "path": "fcsp"}], ids=["delta", "gaussian"])
def test_sp_kernel_gram_in_row_blocks_equals_one_process(client, normalize, kernels):
    from graphops.generate import gnp_set

    gs = gnp_set({8: 20, 14: 16}, p=0.3, seed=4) if kernels else go.datasets.load("MUTAG")[:40]
    kw = dict(normalize=normalize, **kernels)
    np.testing.assert_array_equal(go.run("sp_kernel", gs, backend="cpu", client=client, **kw),
                                  go.run("sp_kernel", gs, backend="cpu", **kw))
    np.testing.assert_array_equal(go.run("sp_kernel", gs[:9], gs[9:], backend="cpu", client=client, **kw),
                                  go.run("sp_kernel", gs[:9], gs[9:], backend="cpu", **kw))


def test_ctrl_c_cancels_the_tasks():
    """Ctrl-C while the parts run: KeyboardInterrupt here, and the cluster drops the call's tasks
    (a part already running finishes on its worker: Dask does not stop a running task, so this
    test has a cluster of its own)."""
    import signal

    from graphops.generate import gnp_set

    gs = gnp_set({60: 400}, p=0.5, seed=1)  # minutes of work on two CPU workers
    kw = dict(node_kernel={"gaussian": {"gamma": 0.5}}, length_kernel={"gaussian": {"gamma": 1.0}},
              path="fcsp", fcsp_form="walk")
    def ours(dask_scheduler) -> int:
        return sum(str(key).startswith("_run_part") for key in dask_scheduler.tasks)

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  env={"CUDA_VISIBLE_DEVICES": ""}) as cl, distributed.Client(cl) as client:
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
        try:
            timer.start()
            with pytest.raises(KeyboardInterrupt):
                go.run("sp_kernel", gs, backend="cpu", client=client, **kw)
        finally:
            timer.cancel()
            signal.signal(signal.SIGINT, previous)
        deadline = time.monotonic() + 10
        while client.run_on_scheduler(ours) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert client.run_on_scheduler(ours) == 0


def test_clear_errors_before_any_work(client):
    g = rmat(6, 4, seed=1)
    with pytest.raises(InputError, match="euler does not run on a Dask cluster"):
        go.run("euler", g, client=client)
    with pytest.raises(BackendUnavailableError, match="2 of 2 worker"):
        go.run("jaccard", g, backend="gpu", client=client)
    with pytest.raises(InputError, match="nodewise=True runs on one device"):
        go.run("mg_kernel", go.datasets.load("MUTAG")[:2], client=client, nodewise=True)
    assert go.execute_call("jaccard", g, client=client).backend == "cpu"  # auto: workers without GPUs


# distributed leaves a socket of the killed worker's connection to be collected: its affair
@pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_worker_lost_mid_run_changes_nothing():
    """Three workers; one is killed while the Gram matrix is being computed: its tasks run again
    on the others (Dask), and the matrix is the one of a single process."""
    gs = go.datasets.load("MUTAG")
    kw = dict(node_kernel=KD, edge_kernel=KD)
    ref = go.run("mg_kernel", gs, backend="cpu", **kw)
    killed: list[float] = []
    with distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=True, dashboard_address=":0") as cl, \
            distributed.Client(cl) as c:
        go.run("mg_kernel", gs[:4], backend="cpu", client=c, **kw)  # compile on every worker first
        victim = sorted(c.scheduler_info()["workers"])[0]

        def kill() -> None:
            time.sleep(0.3)
            c.run(os._exit, 1, workers=[victim], on_error="ignore")
            killed.append(time.perf_counter())

        threading.Thread(target=kill, daemon=True).start()
        out = go.execute_call("mg_kernel", gs, backend="cpu", client=c, **kw)
        finished = time.perf_counter()
        assert killed and killed[0] < finished, "the worker was not killed while the call ran"
        assert victim not in c.scheduler_info()["workers"]
    np.testing.assert_array_equal(out.result, ref)


def test_no_dask_import_without_a_client():
    code = ("import sys, graphops as go; g = go.datasets.load('karate'); go.run('jaccard', g, backend='cpu'); "
            "print(sorted(m for m in ('dask', 'distributed') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


PIPELINE = """
version: 1
name: on_dask
graphs:
  g: {generate: {kind: rmat, scale: 9, edge_factor: 8, seed: 5}}
steps:
  - {id: scores, algorithm: jaccard, inputs: {graph: g}, backend: cpu, output: scores.parquet}
  - {id: stats, algorithm: describe, inputs: {graph: g}, backend: cpu}
cluster: {kind: local, workers: 2}
"""


def test_pipeline_cluster_section(tmp_path):
    from graphops.pipeline import run_pipeline

    (tmp_path / "p.yaml").write_text(PIPELINE)
    summary = run_pipeline(tmp_path / "p.yaml", out=tmp_path / "o")
    scores, stats = summary.steps
    assert "Dask, 2 worker(s)" in scores.reason and sum(w["parts"] for w in scores.details["workers"].values()) > 1
    assert "not on the cluster" in stats.reason
    got = pd.read_parquet(tmp_path / "o" / "scores.parquet")
    pd.testing.assert_frame_equal(got, go.run("jaccard", rmat(9, 8, seed=5), backend="cpu"), check_dtype=False)


@pytest.mark.parametrize("section, message", [
    ("{kind: local, address: 'tcp://h:8786'}", "either kind"),
    ("{address: 'tcp://h:8786', workers: 3}", "workers applies to a local cluster"),
    ("{kind: slurm}", "local-cuda"),
])
def test_pipeline_cluster_section_errors(tmp_path, section, message):
    from graphops.errors import ConfigError
    from graphops.pipeline import load_pipeline

    (tmp_path / "p.yaml").write_text(PIPELINE.replace("{kind: local, workers: 2}", section))
    with pytest.raises(ConfigError, match=message):
        load_pipeline(tmp_path / "p.yaml")


def test_cli_cluster_address(tmp_path, client):
    from graphops.cli import main

    (tmp_path / "p.yaml").write_text(PIPELINE.replace("cluster: {kind: local, workers: 2}\n", ""))
    assert main(["run", str(tmp_path / "p.yaml"), "--out", str(tmp_path / "o"), "--cluster",
                 client.scheduler.address]) == 0
    summary = (tmp_path / "o" / "on_dask.summary.json").read_text()
    assert "Dask, 2 worker(s)" in summary


@pytest.fixture(scope="module")
def cuda_client():
    dask_cuda = pytest.importorskip("dask_cuda")
    cluster = dask_cuda.LocalCUDACluster(dashboard_address=":0")
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.mark.rapids
def test_gpu_backends_on_a_local_cuda_cluster(cuda_client):
    """dask-cuda workers (a worker per GPU) run the gpu backends: cuDF in, cuDF out, the values of
    one GPU; auto picks gpu when every worker has one."""
    g = rmat(14, 8, seed=2).to("gpu")
    out = go.execute_call("jaccard", g, client=cuda_client)
    assert out.backend == "gpu" and type(out.result).__module__.split(".")[0] == "cudf"
    pd.testing.assert_frame_equal(out.result.to_pandas(), go.run("jaccard", g, backend="gpu").to_pandas())
    gs = go.datasets.load("MUTAG")
    kw = dict(node_kernel=KD, edge_kernel=KD, normalize=True)
    np.testing.assert_array_equal(go.run("mg_kernel", gs, backend="gpu", client=cuda_client, **kw),
                                  go.run("mg_kernel", gs, backend="gpu", **kw))
