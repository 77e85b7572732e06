"""Calls on a Dask cluster (client=): a LocalCluster of worker processes gives the same results
as one process, bit for bit, also when a worker dies mid-run; errors come before any work."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphops as go
from graphops.cli.bench import details_text
from graphops.errors import BackendUnavailableError, InputError
from graphops.io.generate import rmat
from graphops.kernels import KroneckerDelta

distributed = pytest.importorskip("distributed")

KD = KroneckerDelta(0.5, on="label")


@pytest.fixture(autouse=True)
def _the_cluster_pays(monkeypatch):
    """These tests are of the cluster path: a Gram call's cost estimate says the cluster pays,
    however small the sets (the choice itself is tested in tests/test_cluster_pays.py)."""
    from graphops.engine import gramcost

    monkeypatch.setattr(gramcost, "PAYS_BY", 0.0)  # tk * 0 < t1: the cluster is always used



def test_jaccard_pairs_in_parts_equal_one_process(client):
    g = rmat(11, 8, seed=3)
    ref = go.run("jaccard", g, backend="cpu")
    out = go.execute_call("jaccard", g, backend="cpu", client=client)
    pd.testing.assert_frame_equal(out.result, ref)
    workers = out.details["workers"]
    assert sum(w["tasks"] for w in workers.values()) == out.details["parts"] == out.details["tasks"] > 2
    assert "Dask" in out.reason
    names = pd.DataFrame({"u": ["ann", "bob", "bob", "cy", "ann", "dee"], "v": ["bob", "cy", "dee", "dee", "dee", "ed"]})
    gn = go.Graph.from_edgelist(names, src="u", dst="v")
    pairs = pd.DataFrame({"first": ["ann", "cy", "ed", "bob"], "second": ["cy", "bob", "ann", "ann"]})
    pd.testing.assert_frame_equal(go.run("jaccard", gn, pairs=pairs, backend="cpu", client=client),
                                  go.run("jaccard", gn, pairs=pairs, backend="cpu"))
    pd.testing.assert_frame_equal(go.run("jaccard", gn, backend="cpu", client=client), go.run("jaccard", gn, backend="cpu"))
    empty = go.Graph.from_edgelist(pd.DataFrame({"src": [], "dst": []}, dtype="int64"))
    pd.testing.assert_frame_equal(go.run("jaccard", empty, backend="cpu", client=client),
                                  go.run("jaccard", empty, backend="cpu"))


@pytest.mark.parametrize("measure", ["sorensen", "cosine", "adamic_adar"])
def test_the_similarity_family_and_two_hop_pairs_in_parts_equal_one_process(client, measure):
    """Each measure on the cluster: every edge (pairs in parts), the two-hop pairs (first vertices
    in parts, the pairs in order), their top k (each part's k best, merged), and given first
    vertices: the frames of one process."""
    g = rmat(10, 8, seed=4)
    some = g.vertices[::5].tolist()
    for kw in ({}, {"candidates": "two_hop"}, {"candidates": "two_hop", "top_k": 25},
               {"candidates": "two_hop", "vertices": some, "top_k": 7}, {"top_k": 9}):
        out = go.execute_call(measure, g, backend="cpu", client=client, **kw)
        pd.testing.assert_frame_equal(out.result, go.run(measure, g, backend="cpu", **kw))
        assert out.details["parts"] > 2, kw


def test_each_worker_reports_its_parts_phases(client):
    """Where a part's time goes, per worker: jaccard's parts move their data and run the kernels, a
    Gram call's parts cut their graphs and compute; each phase within the part's seconds."""
    g = rmat(10, 8, seed=4)
    out = go.execute_call("jaccard", g, backend="cpu", client=client)
    for w in out.details["workers"].values():
        assert set(w["phases_s"]) == {"move", "kernels"} and 0 <= sum(w["phases_s"].values()) <= w["seconds"]
    gs = go.generate.gnp_set({8: 12}, p=0.4, seed=2)
    gram = go.execute_call("sp_kernel", gs, backend="cpu", client=client)
    for w in gram.details["workers"].values():
        top = {k: v for k, v in w["phases_s"].items() if " > " not in k}  # a backend's own phases nest in compute
        assert set(top) == {"slice", "compute"} and 0 <= sum(top.values()) <= w["seconds"]
    for done in (out, gram):  # the call's parts phase, from the parts' own stamps: it holds them all
        ph = done.details["phases_s"]
        timeline = ph["until a part started"] + ph["parts running"] + ph["after the last part ended"]
        longest_mean = max(w["seconds"] / w["tasks"] for w in done.details["workers"].values())
        assert ph["parts running"] >= 0.99 * longest_mean and timeline <= ph["parts"] + 0.05
    text = details_text(gram.details)
    assert "until a part started" in text and "busiest worker: " in text and "compute" in text


def test_the_inputs_sent_to_every_worker_stay_there(client):
    """Dask's Active Memory Manager drops the copies of a key beyond those its waiting tasks need
    (every two seconds): the copies a call sends every worker stay for the next call (the
    scheduler's policy leaves graphops' keys alone), and other keys are reduced as before."""
    g = rmat(9, 8, seed=7)
    go.run("jaccard", g, backend="cpu", client=client)
    workers = set(client.scheduler_info()["workers"])
    theirs = client.scatter(np.arange(10), broadcast=True)
    deadline = time.monotonic() + 20
    while len(client.who_has([theirs])[theirs.key]) > 1 and time.monotonic() < deadline:
        client.amm.run_once()
        time.sleep(0.1)
    assert len(client.who_has([theirs])[theirs.key]) == 1  # the policy still reduces other keys
    ours = {k: v for k, v in client.who_has().items() if str(k).startswith("graphops-sent-")}
    assert ours and all(set(v) == workers for v in ours.values()), ours
    again = go.execute_call("jaccard", g, backend="cpu", client=client)
    assert again.details["sent_to_workers_bytes"] == 0


def test_parts_are_spread_over_the_workers_by_their_cost(client, monkeypatch):
    """Parts whose inputs every worker holds go to the least loaded worker, a repeated call's to
    where they ran, unless that would overload a worker (Dask alone once queued both parts of a
    two-worker call on one of them, and the next calls followed them there)."""
    import graphops.engine.gram as gram
    from graphops.engine.placing import placed

    monkeypatch.setattr(gram, "PARTS_PER_WORKER", 1)
    gs = go.generate.gnp_set({10: 40}, p=0.4, seed=3)
    first = go.execute_call("sp_kernel", gs, backend="cpu", client=client)
    assert first.details["parts"] == 2 and sorted(w["tasks"] for w in first.details["workers"].values()) == [1, 1]
    hints = placed(client, {"graphs": gs})
    assert len(hints) == 2
    one = sorted(client.scheduler_info()["workers"])[0]
    for select in hints:  # as if both had run on one worker
        hints[select] = one
    for _ in range(2):
        out = go.execute_call("sp_kernel", gs, backend="cpu", client=client)
        assert sorted(w["tasks"] for w in out.details["workers"].values()) == [1, 1]
        assert out.details["workers"][one]["tasks"] == 1


def test_a_part_of_the_pairs_keeps_their_index(monkeypatch):
    """A range of a graph's pairs carries the slice of their internal index: a part scored on a
    worker does not search its ids in the graph again; its result is the range of the whole."""
    from graphops.model.ids import IdMap
    from graphops.model.pairs import Pairs

    g = go.Graph.from_edgelist(_messy_edges())
    whole = Pairs.edges_of(g)
    ref = go.run("jaccard", g, backend="cpu")
    monkeypatch.setattr(IdMap, "lookup", lambda *a, **k: pytest.fail("the ids were searched again"))
    part = whole.slice(40, 90)
    view = part.index(g, g.device)
    np.testing.assert_array_equal(view.first, whole.index(g, g.device).first[40:90])
    got = go.run("jaccard", g, pairs=part, backend="cpu")
    pd.testing.assert_frame_equal(got, ref.iloc[40:90].reset_index(drop=True))


def _travelled(obj, family):
    """``obj`` through Dask's serialization as a connection of ``family`` sends it."""
    from distributed.protocol import deserialize, serialize

    header, frames = serialize(obj, serializers=(family,), on_error="raise")
    assert header["serializer"] == family  # graphops' own field-by-field path, not a pickle of the whole
    return deserialize(header, frames), frames


def test_graphops_objects_travel_field_by_field():
    """Dask sends a graph, a graph set, an id map and pairs field by field; the views cached on
    them stay behind, and what arrives computes what the original does."""
    from graphops.engine import wire
    from graphops.model.pairs import Pairs

    wire.register()
    g = go.Graph.from_edgelist(_messy_edges())
    g.csr()
    pairs = Pairs.edges_of(g)
    pairs.index(g, g.device)
    back, frames = _travelled(g, "dask")
    assert type(back) is go.Graph and "_csr_views" not in back.__dict__ and len(frames) > 2
    pd.testing.assert_frame_equal(go.run("jaccard", back, backend="cpu"), go.run("jaccard", g, backend="cpu"))
    moved_pairs = _travelled(pairs, "dask")[0]
    assert len(moved_pairs._views) == 0
    pd.testing.assert_frame_equal(go.run("jaccard", back, pairs=moved_pairs, backend="cpu"),
                                  go.run("jaccard", g, pairs=pairs, backend="cpu"))
    names = go.Graph.from_edgelist(pd.DataFrame({"src": ["a", "b", "c"], "dst": ["b", "c", "a"]}))
    np.testing.assert_array_equal(_travelled(names.ids, "dask")[0].values, names.ids.values)
    gs = go.datasets.load("MUTAG")[:30]
    np.testing.assert_array_equal(go.run("sp_kernel", _travelled(gs, "dask")[0], backend="cpu"),
                                  go.run("sp_kernel", gs, backend="cpu"))


def _forget_the_wire() -> bool:  # on a worker: as if graphops had been imported before Dask
    from distributed.protocol import dask_deserialize, dask_serialize

    from graphops.engine import wire

    for dispatch in (dask_serialize, dask_deserialize):
        for cls in wire._classes():
            dispatch._lookup.pop(cls, None)
    wire._registered = False
    return True


def test_a_cluster_call_teaches_its_workers_the_wire():
    """A worker that imported graphops before Dask (a spawned worker re-running a script's imports)
    does not know how graphops objects travel; a cluster call teaches it before sending any."""
    from graphops.engine import wire

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  env={"CUDA_VISIBLE_DEVICES": ""}) as cluster, distributed.Client(cluster) as c:
        assert all(c.run(_forget_the_wire).values())
        g = go.Graph.from_edgelist(_messy_edges())
        pd.testing.assert_frame_equal(go.run("jaccard", g, backend="cpu", client=c), go.run("jaccard", g, backend="cpu"))
        assert all(c.run(lambda: wire._registered).values())


def _messy_edges(n: int = 150, m: int = 2000, seed: int = 1) -> pd.DataFrame:
    """Edges with arbitrary ids, repeats in both orientations and self-loops."""
    rng = np.random.default_rng(seed)
    s, d = rng.integers(0, n, m) * 7 + 1000, rng.integers(0, n, m) * 7 + 1000
    s[::50] = d[::50]  # self-loops
    df = pd.DataFrame({"src": s, "dst": d})
    flipped = df.iloc[::9].rename(columns={"src": "dst", "dst": "src"})[["src", "dst"]]
    return pd.concat([df, flipped, df.iloc[::13]], ignore_index=True)


@pytest.mark.parametrize("directed", [False, True])
def test_jaccard_on_a_dask_edge_frame_equals_one_process(client, directed):
    """A Dask edge frame stays in its partitions (column slices on the workers); the result is a
    Dask frame whose rows equal one process's result, bit for bit and in order."""
    dd = pytest.importorskip("dask.dataframe")
    df = _messy_edges()
    params = {"symmetrize": True} if directed else {}
    ref = go.run("jaccard", go.Graph.from_edgelist(df, directed=directed), backend="cpu", **params)
    dg = go.Graph.from_edgelist(dd.from_pandas(df, npartitions=5), directed=directed)
    assert isinstance(dg, go.DaskGraph) and dg.device is go.Device.CPU
    out = go.execute_call("jaccard", dg, backend="cpu", client=client, **params)
    assert type(out.result).__module__.split(".")[0] == "dask" and out.result.npartitions == 5
    pd.testing.assert_frame_equal(out.result.compute(), ref)
    assert set(out.details["workers"]) == set(client.scheduler_info()["workers"])
    named = set().union(*(w["phases_s"] for w in out.details["workers"].values()))  # the tasks, by what they do
    assert {"shared", "score"} <= named, named


def test_the_set_measures_on_a_dask_edge_frame_equal_one_process(client):
    """sorensen, overlap and cosine from the slices' summed shared counts, on every edge and on
    given pairs: one process's values, bit for bit; the weighted forms and top_k there say what
    to do instead."""
    dd = pytest.importorskip("dask.dataframe")
    df = _messy_edges()
    g = go.Graph.from_edgelist(df)
    dg = go.Graph.from_edgelist(dd.from_pandas(df, npartitions=3))
    pairs = pd.DataFrame({"first": df["src"].iloc[:50].to_numpy(), "second": df["dst"].iloc[::-1].iloc[:50].to_numpy()})
    for measure in ("sorensen", "overlap", "cosine"):
        pd.testing.assert_frame_equal(go.run(measure, dg, backend="cpu", client=client).compute(),
                                      go.run(measure, g, backend="cpu"))
        pd.testing.assert_frame_equal(go.run(measure, dg, pairs=pairs, backend="cpu", client=client).compute(),
                                      go.run(measure, g, pairs=pairs, backend="cpu"))
    with pytest.raises(InputError, match="unweighted, without top_k.*ddf.compute"):
        go.run("sorensen", dg, backend="cpu", client=client, top_k=3)


def test_given_pairs_on_a_dask_edge_frame_equal_one_process(client):
    """Explicit pairs (edges, non-edges, repeats, self-pairs; NumPy or another dtype's ids) on
    column slices: a one-partition Dask frame equal to one process's result; the slices are
    built once per graph and client."""
    dd = pytest.importorskip("dask.dataframe")
    from graphops.engine import slices as daskgraph

    df = _messy_edges()
    g = go.Graph.from_edgelist(df)
    dg = go.Graph.from_edgelist(dd.from_pandas(df, npartitions=4))
    rng = np.random.default_rng(5)
    ids = np.unique(df.to_numpy())
    pairs = pd.DataFrame({"first": rng.choice(ids, 300), "second": rng.choice(ids, 300)})
    pairs.iloc[:40] = df.iloc[:40].to_numpy()
    pairs.iloc[40:45, 1] = pairs.iloc[40:45, 0]
    for asked in (pairs, pairs.astype("int32")):
        out = go.run("jaccard", dg, pairs=asked, backend="cpu", client=client)
        assert type(out).__module__.split(".")[0] == "dask" and out.npartitions == 1
        pd.testing.assert_frame_equal(out.compute(), go.run("jaccard", g, pairs=asked, backend="cpu"))
    assert len(daskgraph._KEPT[dg]) == 1
    pd.testing.assert_frame_equal(go.run("jaccard", dg, client=client).compute(), go.run("jaccard", g, backend="cpu"))


def test_column_slices_hold_a_share_of_the_graph_each(client):
    """Each worker's slice holds about 1/k of the adjacency entries, and together exactly the
    set adjacency of one process."""
    dd = pytest.importorskip("dask.dataframe")
    from graphops.engine.slices import column_slices
    from graphops_jaccard.common import adjacency

    g = rmat(10, 8, seed=4)
    frame = g.edges[["src", "dst"]]
    assert len(column_slices(client, go.Graph.from_edgelist(dd.from_pandas(frame, npartitions=2)), 1).bounds) == 2
    sl = column_slices(client, go.Graph.from_edgelist(dd.from_pandas(frame, npartitions=3)), 2)
    sizes = [len(client.submit(lambda a: a[1], f).result()) for f in sl.adjacency]
    whole = adjacency(g.csr(), False, False)
    assert sum(sizes) == len(whole.indices) and max(sizes) < 0.6 * len(whole.indices)
    np.testing.assert_array_equal(sl.degrees.result(), whole.degrees())


def test_dask_edge_frame_errors(client):
    dd = pytest.importorskip("dask.dataframe")
    df = _messy_edges(30, 60)
    ddf = dd.from_pandas(df, npartitions=2)
    dg = go.Graph.from_edgelist(ddf)
    with pytest.raises(InputError, match="pass client="):
        go.run("jaccard", dg)
    with pytest.raises(InputError, match=r"names 1 vertex id\(s\) that are not in the graph, in 1 of its rows \(e.g. 5\)"):
        go.run("jaccard", dg, pairs=pd.DataFrame({"first": [1000, 5], "second": [1007, 1000]}), client=client)
    with pytest.raises(InputError, match=r"names vertices by strings \(e.g. 'a'\); the graph's vertex ids are integers"):
        go.run("jaccard", dg, pairs=pd.DataFrame({"first": ["a"], "second": ["b"]}), client=client)
    from graphops.model.pairs import Pairs

    strings = np.array(["ann", "cy"], dtype=object)  # as a pipeline reads a pairs file of names
    with pytest.raises(InputError, match=r"names vertices by strings \(e.g. 'ann', 'cy'\)"):
        go.run("jaccard", dg, pairs=Pairs(strings, strings[::-1].copy()), client=client)
    with pytest.raises(InputError, match=r"names 2 vertex id\(s\) that are not in the graph, in 5 of its rows "
                                         r"\(e.g. 1000000, 1000001\)"):  # distinct ids counted, rows beside
        go.run("jaccard", dg, pairs=pd.DataFrame({"first": [10**6, 10**6 + 1, 10**6, 1007, 10**6 + 1, 10**6],
                                                   "second": [1000] * 6}), client=client)
    with pytest.raises(InputError, match="is empty"):
        go.run("jaccard", dg, pairs=df.iloc[:0], client=client)
    with pytest.raises(go.errors.InputTypeError, match=r"describe: input 'graph' cannot be a Dask frame.*\(cosine, jaccard, overlap, sorensen\)"):
        go.run("describe", dg, client=client)
    with pytest.raises(go.errors.InputTypeError, match="cannot be a Dask frame"):
        go.run("jaccard", go.Graph.from_edgelist(df), pairs=ddf, client=client)
    with pytest.raises(InputError, match="unweighted"):
        go.Graph.from_edgelist(ddf.assign(w=1.0), weight="w")
    with pytest.raises(InputError, match="integer vertex ids"):
        go.Graph.from_edgelist(dd.from_pandas(pd.DataFrame({"src": ["a", "b"], "dst": ["b", "c"]}), npartitions=1))
    with pytest.raises(InputError, match="no column"):
        go.Graph.from_edgelist(ddf, src="u")


@pytest.mark.parametrize("normalize", [False, True])
def test_mg_kernel_gram_in_row_blocks_equals_one_process(client, normalize):
    gs = go.datasets.load("MUTAG")[:48]
    kw = dict(node_kernel=KD, edge_kernel=KD, normalize=normalize)
    np.testing.assert_array_equal(go.run("mg_kernel", gs, backend="cpu", client=client, **kw),
                                  go.run("mg_kernel", gs, backend="cpu", **kw))
    test, train = gs[:10], gs[10:]
    np.testing.assert_array_equal(go.run("mg_kernel", test, train, backend="cpu", client=client, **kw),
                                  go.run("mg_kernel", test, train, backend="cpu", **kw))


def test_calls_from_several_threads_on_one_client_equal_one_process(client):
    """A Dask client is shared by threads: jaccard and Gram calls made at once on one client each
    get their own values, equal to one process (each call's parts, stop event, answers and
    landing are its own)."""
    import concurrent.futures

    gs = go.datasets.load("MUTAG")[:48]
    jobs = [("jaccard", (rmat(11, 8, seed=seed),), {}) for seed in range(3)]
    jobs += [("mg_kernel", (gs[:10], gs[10:]), dict(node_kernel=KD, edge_kernel=KD)),
             ("mg_kernel", (gs,), dict(node_kernel=KD, edge_kernel=KD, normalize=True)),
             ("sp_kernel", (gs[:20], gs[20:]), {})]
    refs = [go.run(name, *args, backend="cpu", **kw) for name, args, kw in jobs]
    with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
        for _ in range(2):
            outs = list(pool.map(lambda job: go.run(job[0], *job[1], backend="cpu", client=client, **job[2]), jobs))
            for ref, out in zip(refs, outs):
                if isinstance(ref, pd.DataFrame):
                    pd.testing.assert_frame_equal(out, ref)
                else:
                    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("taper", [0.5, 0.2])
def test_a_test_by_train_gram_in_tapered_parts_equals_one_process(client, monkeypatch, taper):
    """Each worker's parts of decreasing size (its last block, placed after the others end, the
    smallest): the matrix of one process, the parts' estimated costs in the shares asked."""
    import graphops.engine.gram as gram

    monkeypatch.setattr(gram, "TAPER", taper)
    gs = go.datasets.load("MUTAG")
    test, train = gs[:12], gs[12:]
    kw = dict(node_kernel=KD, edge_kernel=KD)
    out = go.execute_call("mg_kernel", test, train, backend="cpu", client=client, **kw)
    np.testing.assert_array_equal(out.result, go.run("mg_kernel", test, train, backend="cpu", **kw))
    from graphops.host.registry import get_registry

    algo = get_registry().algorithm("mg_kernel")
    split = gram.gram_split(algo, {"graphs": test, "other": train}, SimpleNamespace(normalize=False), 2)
    costs = sorted((p.cost for p in split.parts), reverse=True)
    assert len(costs) <= 2 * gram.PARTS_PER_WORKER and (taper < 0.5 or len(costs) == 2 * gram.PARTS_PER_WORKER)
    for r in range(1, len(costs) // 2):  # each round about TAPER times the last (graphs are whole; tiny parts merge)
        assert costs[2 * r] == pytest.approx(costs[2 * r - 2] * taper, rel=0.35), costs


def _kept_slices() -> int:  # on a worker: the distinct set slices its Gram parts hold
    from graphops.engine import parts as cluster

    return sum(len(v) for v in cluster._SLICES.values())


def test_a_second_gram_call_reuses_the_workers_slices():
    """The parts of a repeated call find the slices (and what the backend derived from them)
    that the first call made, instead of slicing and preparing the sets again (one worker: where
    parts run is Dask's choice, and a part moved to another worker slices there anew)."""
    gs = go.datasets.load("MUTAG")[:30]
    test, train = gs[:6], gs[6:]
    kw = dict(backend="cpu", node_kernel=KD, edge_kernel=KD)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=":0",
                                  env={"CUDA_VISIBLE_DEVICES": ""}) as cl, distributed.Client(cl) as c:
        first = go.run("mg_kernel", test, train, client=c, **kw)
        held = c.run(_kept_slices)
        assert list(held.values())[0] > 0
        again = go.run("mg_kernel", test, train, client=c, **kw)
        assert c.run(_kept_slices) == held
    np.testing.assert_array_equal(first, again)


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("kernels", [{}, {"node_kernel": {"gaussian": {"gamma": 0.5}}, "length_kernel": {"gaussian": {"gamma": 1.0}},
                                      "path": "fcsp"}], ids=["delta", "gaussian"])
def test_sp_kernel_gram_in_row_blocks_equals_one_process(client, normalize, kernels):
    from graphops.io.generate import gnp_set

    gs = gnp_set({8: 20, 14: 16}, p=0.3, seed=4) if kernels else go.datasets.load("MUTAG")[:40]
    kw = dict(normalize=normalize, **kernels)
    np.testing.assert_array_equal(go.run("sp_kernel", gs, backend="cpu", client=client, **kw),
                                  go.run("sp_kernel", gs, backend="cpu", **kw))
    out = go.execute_call("sp_kernel", gs[:9], gs[9:], backend="cpu", client=client, **kw)
    np.testing.assert_array_equal(out.result, go.run("sp_kernel", gs[:9], gs[9:], backend="cpu", **kw))
    # sp_kernel has no diagonal mode: a normalized test x train block normalizes itself (no
    # diagonal parts, which would need one call per graph)
    from graphops.engine.parts import PARTS_PER_WORKER

    assert out.details["parts"] <= 2 * PARTS_PER_WORKER


def _interrupt(client, call, task_prefix: str) -> None:
    """Ctrl-C one second into ``call()``: KeyboardInterrupt here, the cluster drops the call's
    tasks (names starting with ``task_prefix``), and the parts already running stop at their
    next chunk boundary (Dask does not stop a running task itself): every worker, one thread
    each, is free within seconds."""
    import signal

    def ours(dask_scheduler) -> int:
        return sum(str(key).startswith(task_prefix) for key in dask_scheduler.tasks)

    def ctrl_c() -> None:
        os.kill(os.getpid(), signal.SIGINT)

    def pressed_again(unraisable, hook=sys.unraisablehook) -> None:
        # Python drops a KeyboardInterrupt that lands in a weakref callback or __del__ ("Exception
        # ignored in ..."; seen once in CI, in a WeakKeyDictionary's callback): a user presses again
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            threading.Timer(0.2, ctrl_c).start()
        else:
            hook(unraisable)

    previous, hook = signal.signal(signal.SIGINT, signal.default_int_handler), sys.unraisablehook
    timer = threading.Timer(1.0, ctrl_c)
    sys.unraisablehook = pressed_again
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            call()
    finally:
        timer.cancel()
        sys.unraisablehook = hook
        signal.signal(signal.SIGINT, previous)
    stopped = time.monotonic()
    deadline = stopped + 10
    while client.run_on_scheduler(ours) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert client.run_on_scheduler(ours) == 0
    for worker in client.scheduler_info()["workers"]:
        client.submit(int, 1, workers=[worker], pure=False).result(timeout=30)
    assert time.monotonic() - stopped < 5, "a running part went on after Ctrl-C"


def _two_cpu_workers():
    return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                    env={"CUDA_VISIBLE_DEVICES": ""})


def test_ctrl_c_cancels_the_tasks():
    """Ctrl-C while a Gram matrix's row parts run (:func:`_interrupt`); a cluster of its own."""
    from graphops.io.generate import gnp_set

    gs = gnp_set({60: 400}, p=0.5, seed=1)  # minutes of work on two CPU workers
    kw = dict(node_kernel={"gaussian": {"gamma": 0.5}}, length_kernel={"gaussian": {"gamma": 1.0}},
              path="fcsp", fcsp_form="walk")
    with _two_cpu_workers() as cl, distributed.Client(cl) as client:
        _interrupt(client, lambda: go.run("sp_kernel", gs, backend="cpu", client=client, **kw), "_run_part")


def test_ctrl_c_stops_the_slice_counts():
    """Ctrl-C while jaccard's shared-neighbour counts run on the column slices of a Dask edge
    frame (the complete graph K_4000: 8 M edges, each pair's lists 4,000 long; each count task
    runs over ten seconds on a CPU worker). The slices, kept for the next call, are built first."""
    dd = pytest.importorskip("dask.dataframe")
    from distributed import wait

    from graphops.engine.slices import column_slices, frame_on

    s, d = np.triu_indices(4000, 1)
    edges = pd.DataFrame({"src": s, "dst": d})
    small = go.Graph.from_edgelist(dd.from_pandas(_messy_edges(30, 60), npartitions=2))
    with _two_cpu_workers() as cl, distributed.Client(cl) as client:
        parts = client.scatter([edges.iloc[k::4] for k in range(4)])  # partitions on the workers, as users load them
        dg = go.Graph.from_edgelist(frame_on(parts, edges.iloc[:0]))
        go.run("jaccard", small, backend="cpu", client=client).compute()  # the count kernels compiled
        sl = column_slices(client, dg, 2)
        wait([*sl.adjacency, *sl.edges, *sl.positions, sl.degrees, sl.offsets])
        _interrupt(client, lambda: go.run("jaccard", dg, backend="cpu", client=client), "stoppable")


def test_clear_errors_before_any_work(client):
    g = rmat(6, 4, seed=1)
    with pytest.raises(InputError, match="euler does not run on a Dask cluster"):
        go.run("euler", g, client=client)
    with pytest.raises(BackendUnavailableError, match="2 of 2 worker"):
        go.run("jaccard", g, backend="gpu", client=client)
    with pytest.raises(InputError, match="nodewise=True runs on one device"):
        go.run("mg_kernel", go.datasets.load("MUTAG")[:2], client=client, nodewise=True)
    assert go.execute_call("jaccard", g, client=client).backend == "cpu"  # auto: workers without GPUs


def _gram_case() -> tuple:
    gs = go.datasets.load("MUTAG")
    kw = dict(node_kernel=KD, edge_kernel=KD)
    return (lambda **c: go.execute_call("mg_kernel", gs, backend="cpu", **kw, **c),
            lambda **c: go.run("mg_kernel", gs[:4], backend="cpu", **kw, **c), np.testing.assert_array_equal,
            lambda r: r, lambda: go.run("mg_kernel", gs, backend="cpu", **kw))


def _dask_frame_case() -> tuple:
    import dask.dataframe as dd

    frame = rmat(15, 16, seed=6).edges[["src", "dst"]]
    small = go.Graph.from_edgelist(dd.from_pandas(frame.iloc[:500], npartitions=3))
    g = go.Graph.from_edgelist(dd.from_pandas(frame, npartitions=6))
    return (lambda **c: go.execute_call("jaccard", g, backend="cpu", **c),
            lambda **c: go.run("jaccard", small, backend="cpu", **c).compute(), pd.testing.assert_frame_equal,
            lambda r: r.compute(), lambda: go.run("jaccard", go.Graph.from_edgelist(frame), backend="cpu"))


# distributed leaves a socket of the killed worker's connection to be collected: its affair
@pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("case", [_gram_case, _dask_frame_case], ids=["mg_kernel-gram", "jaccard-dask-frame"])
def test_a_worker_lost_mid_run_changes_nothing(case):
    """Three workers; one is killed while the call runs: its tasks (and, for a Dask edge frame,
    the slice it held, from the tasks that made it) run again on the others (Dask), and the
    result is the one of a single process."""
    call, warm, same, local, reference = case()
    ref = reference()
    killed: list[float] = []
    with distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  env={"CUDA_VISIBLE_DEVICES": ""}) as cl, distributed.Client(cl) as c:
        warm(client=c)  # compile on every worker first
        victim = sorted(c.scheduler_info()["workers"])[0]

        def kill() -> None:
            time.sleep(0.3)
            killed.append(time.perf_counter())  # c.run returns only once the broken connection is noticed
            c.run(os._exit, 1, workers=[victim], on_error="ignore")

        threading.Thread(target=kill, daemon=True).start()
        t0 = time.perf_counter()
        out = local(call(client=c).result)
        finished = time.perf_counter()
        assert killed and killed[0] < finished, f"the worker was not killed while the call ran ({finished - t0:.2f} s)"
        deadline = time.perf_counter() + 30  # the scheduler may learn of the death after the call's last result
        while victim in c.scheduler_info()["workers"] and time.perf_counter() < deadline:
            time.sleep(0.1)
        assert victim not in c.scheduler_info()["workers"]
    same(out, ref)


def _jaccard_case() -> tuple:
    g = rmat(14, 16, seed=5)
    return (lambda **c: go.execute_call("jaccard", g, backend="cpu", **c),
            lambda **c: go.run("jaccard", rmat(6, 4, seed=1), backend="cpu", **c), pd.testing.assert_frame_equal,
            lambda r: r, lambda: go.run("jaccard", g, backend="cpu"))


@pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("case", [_gram_case, _jaccard_case], ids=["mg_kernel-gram", "jaccard"])
def test_every_worker_lost_mid_run_changes_nothing(case):
    """Every worker killed while the call runs: the inputs sent to them are gone with them, and Dask
    forgets the parts that needed them. Their nannies start new workers; the call sends its inputs
    again and runs once more: the values of one process (it was Dask's own "cancelled for reason:
    already forgotten" before)."""
    call, warm, same, local, reference = case()
    ref = reference()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  env={"CUDA_VISIBLE_DEVICES": ""}) as cl, distributed.Client(cl) as c:
        warm(client=c)
        killed: list[float] = []

        def kill() -> None:  # once a part runs
            while not any(c.processing().values()):
                time.sleep(0.002)
            killed.append(time.perf_counter())
            c.run(os._exit, 1, on_error="ignore")

        threading.Thread(target=kill, daemon=True).start()
        out = local(call(client=c).result)
        finished = time.perf_counter()
        assert killed and killed[0] < finished, "the workers were not killed while the call ran"
    same(out, ref)


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
    assert "Dask, 2 worker(s)" in scores.reason and sum(w["tasks"] for w in scores.details["workers"].values()) > 1
    assert "not on the cluster" in stats.reason
    got = pd.read_parquet(tmp_path / "o" / "scores.parquet")
    pd.testing.assert_frame_equal(got, go.run("jaccard", rmat(9, 8, seed=5), backend="cpu"), check_dtype=False)


PARTITIONED = """
version: 1
name: partitioned
graphs:
  big: {path: edges/*.parquet, partitioned: true}
  text: {path: text, format: csv, partitioned: true, columns: [a, b], src: a, dst: b}
steps:
  - {id: all, algorithm: jaccard, inputs: {graph: big}, backend: cpu, output: all.parquet}
  - {id: again, algorithm: jaccard, inputs: {graph: big}, backend: cpu, output: again.csv}
  - {id: text, algorithm: jaccard, inputs: {graph: text}, backend: cpu, output: text.parquet}
"""


def test_pipeline_partitioned_graph(tmp_path, client):
    """graphs: {big: {path: edges/*.parquet, partitioned: true}}: the files are read by the
    workers (a DaskGraph), jaccard runs on column slices, and its result is written by them: a
    folder of parquet files (or one CSV file), equal to one process's result on the whole file."""
    _run_partitioned(tmp_path, client, "cpu")


def _run_partitioned(tmp_path, client, device: str) -> None:
    from graphops.cli import main

    df = _messy_edges()
    (tmp_path / "edges").mkdir()
    (tmp_path / "text").mkdir()
    for k in range(3):
        df.iloc[k::3].to_parquet(tmp_path / "edges" / f"part-{k}.parquet", index=False)
        df.iloc[k::3].to_csv(tmp_path / "text" / f"part-{k}.csv", index=False, header=False)
    text = PARTITIONED.replace("partitioned: true", f"partitioned: true, device: {device}")
    (tmp_path / "p.yaml").write_text(text.replace("backend: cpu", f"backend: {device}"))
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "all.parquet").write_text("an older output, replaced")
    assert main(["run", str(tmp_path / "p.yaml"), "--out", str(tmp_path / "o"), "--cluster",
                 client.scheduler.address]) == 0
    whole = go.Graph.from_edgelist(pd.concat([df.iloc[k::3] for k in range(3)], ignore_index=True)).to(device)
    ref = go.run("jaccard", whole, backend=device)
    ref = ref.to_pandas() if device == "gpu" else ref
    assert (tmp_path / "o" / "all.parquet").is_dir()
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "o" / "all.parquet"), ref)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "o" / "again.csv"), ref)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "o" / "text.parquet"), ref)
    summary = json.loads((tmp_path / "o" / "partitioned.summary.json").read_text())
    assert summary["steps"][0]["shape"] == [len(ref), 3] and "DaskGraph" in summary["graphs"]["big"]["repr"]
    assert [step["backend"] for step in summary["steps"]] == [device] * 3
    assert not [p for p in (tmp_path / "o").iterdir() if p.name.startswith(".")]  # no temporary left


@pytest.mark.parametrize("change, message", [
    (("{id: again, algorithm: jaccard", "{id: again, algorithm: describe"), "graph 'big' is a daskgraph \\(partitioned: true, "
                                                                             "read by Dask; algorithms that take one: cosine, jaccard, overlap, sorensen"),
    (("output: all.parquet}", "output: all.parquet, plot: true}"), "plot: true draws from the whole result"),
    (("partitioned: true}", "partitioned: true, weight: w}"), "drop weight"),
    (("edges/*.parquet", "nothing/*.parquet"), "No parquet file matches 'nothing/\\*.parquet'"),
    (("edges/*.parquet", "edges/*.mtx"), "read as parquet or csv"),
    (("{id: all, algorithm: jaccard, inputs: {graph: big}, backend: cpu,", "{id: all, algorithm: jaccard, inputs: "
      "{graph: big}, backend: cpu, cluster: false,"), r"(?s)At key: cluster\n=====> cluster: false runs the step in this "
                                                     r"process, but graph 'big' is partitioned .*drop the step's cluster: "
                                                     r"false, or drop partitioned: true"),
    (("{path: text, format: csv,", "{path: text,"), r"No parquet file matches 'text' \(resolved to .*\) \(a folder is "
                                                      r"read as parquet unless format: says otherwise\); it holds 1 csv "
                                                      r"file\(s\): give format: csv"),
    (("{path: text, format: csv,", "{path: 'text/*.csv', format: parquet,"), r"a\.csv is not a parquet file \(it does "
                                                                             r"not start with parquet's 'PAR1'\); give "
                                                                             r"format: csv for text files"),
])
def test_pipeline_partitioned_errors(tmp_path, change, message):
    from graphops.errors import ConfigError
    from graphops.pipeline import load_pipeline

    (tmp_path / "edges").mkdir()
    (tmp_path / "text").mkdir()
    pd.DataFrame({"src": [1], "dst": [2]}).to_parquet(tmp_path / "edges" / "a.parquet")
    (tmp_path / "text" / "a.csv").write_text("1,2\n")
    (tmp_path / "p.yaml").write_text(PARTITIONED.replace(*change))
    with pytest.raises(ConfigError, match=message):
        load_pipeline(tmp_path / "p.yaml")


def test_pipeline_partitioned_needs_a_cluster(tmp_path):
    from graphops.errors import ConfigError
    from graphops.pipeline import run_pipeline

    (tmp_path / "edges").mkdir()
    (tmp_path / "text").mkdir()
    pd.DataFrame({"src": [1], "dst": [2]}).to_parquet(tmp_path / "edges" / "a.parquet")
    (tmp_path / "text" / "a.csv").write_text("1,2\n")
    (tmp_path / "p.yaml").write_text(PARTITIONED)
    with pytest.raises(ConfigError, match=r"(?s)At graphs.big\n==> At key: partitioned\n=====> a partitioned graph .*add a cluster: section"):
        run_pipeline(tmp_path / "p.yaml", out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("section, message", [
    ("{kind: local, address: 'tcp://h:8786'}", "either kind"),
    ("{address: 'tcp://h:8786', workers: 3}", "workers applies to a local cluster"),
    ("{kind: slurm}", "local-cuda"),
    ("{kind: local, protocol: ucx}", "protocol applies to a local GPU cluster"),
    ("{kind: local-cuda, protocol: nvlink}", "'auto', 'tcp' or 'ucx'"),
    ("{address: foo}", "'foo' is not a Dask scheduler's address: write scheme://host:port, e.g. tcp://host:8786"),
    ("{address: 'tcp://h:notaport'}", "'tcp://h:notaport' is not a Dask scheduler's address: its port 'notaport' is "
                                     "not a number; write scheme://host:port"),
    ("{address: 'TCP://h:8786'}", "its scheme 'TCP' is not one of tcp, ucx, ucxx"),
    ("{address: 'tcp://::1:8786'}", r"its host '::1' is an IPv6 address without brackets \(write \[::1\]:8786\)"),
    ("local", r"cluster: is a section, e.g. \{kind: local, workers: 4\}, .*; got 'local'"),
    ("false", r"cluster: is a section, .*a step's cluster: false keeps that step here\); got False"),
])
def test_pipeline_cluster_section_errors(tmp_path, section, message):
    from graphops.errors import ConfigError
    from graphops.pipeline import load_pipeline

    (tmp_path / "p.yaml").write_text(PIPELINE.replace("{kind: local, workers: 2}", section))
    with pytest.raises(ConfigError, match=message):
        load_pipeline(tmp_path / "p.yaml")


def test_cuda_protocol(monkeypatch):
    """ucx where distributed-ucxx is installed, unless tcp is asked; what is asked is kept."""
    import importlib.util

    from graphops.engine.cluster import cuda_protocol

    for installed, auto in ((True, "ucx"), (False, "tcp")):
        monkeypatch.setattr(importlib.util, "find_spec", lambda name, ok=installed: object() if ok else None)
        assert cuda_protocol() == cuda_protocol("auto") == auto
        assert cuda_protocol("tcp") == "tcp" and cuda_protocol("ucx") == "ucx"


def test_ucx_progress_is_set_before_a_ucx_cluster_starts_and_stays(monkeypatch):
    """UCX progressed on its own thread, completions handed over by a notifier thread, from before a
    ucx cluster starts here or a client joins one over ucx, and after (a worker started later takes
    the same); a process that says either setting itself keeps its own; tcp is left alone."""
    from graphops.engine import cluster

    names = sorted(cluster.UCX_PROGRESS)
    seen: list[dict] = []

    class Stop(Exception):
        pass

    def record(*args, **kwargs):
        seen.append({name: os.environ.get(name) for name in names})
        raise Stop()

    monkeypatch.setitem(sys.modules, "dask_cuda", SimpleNamespace(LocalCUDACluster=record))
    monkeypatch.setitem(sys.modules, "distributed_ucxx", SimpleNamespace())
    starts = [lambda p: cluster.connect("local-cuda", protocol=p).__enter__(),
              lambda p: cluster._client(SimpleNamespace(Client=record), f"{p}://127.0.0.1:1", 1.0)]
    for start in starts:
        for protocol, want in (("tcp", {}), ("ucx", cluster.UCX_PROGRESS)):
            for name in names:
                monkeypatch.delenv(name, raising=False)
            with pytest.raises(Stop):
                start(protocol)
            assert seen.pop() == {name: want.get(name) for name in names}
            assert {name: os.environ.get(name) for name in names} == {name: want.get(name) for name in names}
        for name in names:
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("UCXPY_PROGRESS_MODE", "polling")
        with pytest.raises(Stop):
            start("ucx")
        assert seen.pop() == {"UCXPY_ENABLE_PYTHON_FUTURE": None, "UCXPY_PROGRESS_MODE": "polling"}
        assert os.environ["UCXPY_PROGRESS_MODE"] == "polling" and "UCXPY_ENABLE_PYTHON_FUTURE" not in os.environ


UCX_IDLE = """
import json, os, threading, time
import graphops as go
from graphops.engine.cluster import connect
from graphops.io.generate import rmat

def busy(seconds=1.0):
    def ticks():
        total = 0
        for tid in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{tid}/stat") as fh:
                    f = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(f[11]) + int(f[12])
        return total
    a = ticks(); time.sleep(seconds); b = ticks()
    return (b - a) / os.sysconf("SC_CLK_TCK") / seconds

g = rmat(10, 8, seed=1, device="gpu")
with connect("local-cuda", 1, protocol="ucx") as c:
    import ucxx
    out = go.run("jaccard", g, backend="gpu", client=c)
    same = bool((out.to_pandas() == go.run("jaccard", g, backend="gpu").to_pandas()).all().all())
    print(json.dumps({"busy": busy(), "mode": ucxx.core._get_ctx().progress_mode, "same": same,
                      "env": "UCXPY_PROGRESS_MODE" in os.environ}))
print(json.dumps({"after": "UCXPY_PROGRESS_MODE" in os.environ}))
"""


@pytest.mark.rapids
def test_a_ucx_cluster_started_here_leaves_the_calling_process_idle():
    """A ucx cluster graphops starts (its scheduler runs in the calling process) does not keep a core
    of the calling process busy between calls: distributed-ucxx's default progress held the event
    loop thread at a whole core (1.01 of one on 2 x H200), taking the interpreter lock from the
    caller's own work. Run in a fresh interpreter: UCX takes its progress mode once per process."""
    pytest.importorskip("dask_cuda")
    pytest.importorskip("distributed_ucxx")
    env = {k: v for k, v in os.environ.items() if not k.startswith("UCXPY_")}
    proc = subprocess.run([sys.executable, "-c", UCX_IDLE], capture_output=True, text=True, timeout=240, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    inside, after = lines
    assert inside["mode"] == "thread" and inside["same"] and inside["env"], inside
    assert inside["busy"] < 0.5, inside  # cores busy in the calling process while no call runs
    assert after == {"after": True}  # a worker started later progresses the same way


def test_cli_cluster_address(tmp_path, client):
    from graphops.cli import main

    (tmp_path / "p.yaml").write_text(PIPELINE.replace("cluster: {kind: local, workers: 2}\n", ""))
    assert main(["run", str(tmp_path / "p.yaml"), "--out", str(tmp_path / "o"), "--cluster",
                 client.scheduler.address]) == 0
    summary = (tmp_path / "o" / "on_dask.summary.json").read_text()
    assert "Dask, 2 worker(s)" in summary


@pytest.fixture(scope="module")
def cuda_client():
    """A dask-cuda worker per GPU; on a host with one GPU, two plain worker processes share it
    (dask-cuda gives a GPU one worker), so that the work is still cut in parts and gathered."""
    dask_cuda = pytest.importorskip("dask_cuda")
    import cupy

    if cupy.cuda.runtime.getDeviceCount() >= 2:
        cluster = dask_cuda.LocalCUDACluster(dashboard_address=":0")
    else:
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                           env={"CUDA_VISIBLE_DEVICES": "0"})
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.mark.gpu
def test_gram_blocks_on_gpu_workers_come_back_in_the_callers_family(cuda_client, monkeypatch):
    """GPU workers keep the sets on their GPU and send device blocks to a client with a GPU (host
    sets in: NumPy out; device sets in: CuPy out), or host blocks to a client without one."""
    import cupy as cp

    from graphops.engine import cluster

    gs = go.datasets.load("MUTAG")
    test, train = gs[:40], gs[40:]
    ref = go.run("sp_kernel", test, train, backend="gpu", normalize=True)
    on_gpu = go.run("sp_kernel", test.to("gpu"), train.to("gpu"), backend="gpu", client=cuda_client, normalize=True)
    assert isinstance(on_gpu, cp.ndarray)
    np.testing.assert_array_equal(on_gpu.get(), ref)
    monkeypatch.setattr(cluster, "gpu_available", lambda: False)  # a caller without a GPU
    got = go.run("mg_kernel", test, train, backend="gpu", client=cuda_client, node_kernel=KD, edge_kernel=KD,
                 normalize=True)
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, go.run("mg_kernel", test, train, backend="gpu", node_kernel=KD, edge_kernel=KD,
                                              normalize=True))


# distributed leaves a socket of the killed worker's connection to be collected: its affair
@pytest.mark.rapids
@pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_gpu_worker_killed_during_an_rmat24_jaccard_changes_nothing():
    """A worker per GPU; one is killed while every edge of R-MAT 24 is scored: the parts it held
    are sent again and run elsewhere, and the coefficients equal one GPU's, bit for bit."""
    dask_cuda = pytest.importorskip("dask_cuda")
    import cupy as cp

    from graphops.engine.cluster import cuda_protocol

    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs a host with two or more GPUs")
    g = rmat(24, 16, seed=42, device="gpu")
    ref = go.run("jaccard", g, backend="gpu")
    killed: list[float] = []
    with dask_cuda.LocalCUDACluster(dashboard_address=":0", protocol=cuda_protocol()) as cl, \
            distributed.Client(cl) as c:
        go.run("jaccard", g, backend="gpu", client=c)  # the adjacency and each part's pairs sent
        victim = sorted(c.scheduler_info()["workers"])[-1]

        def kill() -> None:
            time.sleep(0.15)
            killed.append(time.perf_counter())
            c.run(os._exit, 1, workers=[victim], on_error="ignore")

        threading.Thread(target=kill, daemon=True).start()
        out = go.run("jaccard", g, backend="gpu", client=c)
        finished = time.perf_counter()
        assert killed and killed[0] < finished, "the worker was not killed while the call ran"
    assert list(out.columns) == list(ref.columns) and len(out) == len(ref)
    for col in ref.columns:
        assert bool(cp.array_equal(out[col].values, ref[col].values)), col


@pytest.mark.rapids
def test_a_gpu_graph_travels_as_device_buffers():
    """Over ucx (Dask's "cuda" family) a GPU graph's frame and arrays, a GPU graph set's arrays
    and string ids go as device buffers, not through host memory; what arrives computes the same."""
    from graphops.engine import wire

    wire.register()

    def split(frames):
        device = sum(int(np.prod(f.__cuda_array_interface__["shape"])) * np.dtype(f.__cuda_array_interface__["typestr"]).itemsize
                     for f in frames if hasattr(f, "__cuda_array_interface__"))
        return device, sum(memoryview(f).nbytes for f in frames if not hasattr(f, "__cuda_array_interface__"))

    g = rmat(12, 8, seed=4).to("gpu")
    back, frames = _travelled(g, "cuda")
    device, host = split(frames)
    assert device >= 4 * 8 * g.n_edges and host < device / 20, (device, host)
    pd.testing.assert_frame_equal(go.run("jaccard", back, backend="gpu").to_pandas(),
                                  go.run("jaccard", g, backend="gpu").to_pandas())
    names = go.Graph.from_edgelist(pd.DataFrame({"src": ["a", "b", "c"], "dst": ["b", "c", "a"]})).to("gpu")
    moved = _travelled(names, "cuda")[0]
    pd.testing.assert_frame_equal(go.run("jaccard", moved, backend="gpu").to_pandas(),
                                  go.run("jaccard", names, backend="gpu").to_pandas())
    gs = go.datasets.load("MUTAG").to("gpu")
    back, frames = _travelled(gs, "cuda")
    device, host = split(frames)
    assert host < device / 20, (device, host)
    np.testing.assert_array_equal(go.run("sp_kernel", back, backend="gpu").get(), go.run("sp_kernel", gs, backend="gpu").get())


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
    test, train = gs[:40], gs[40:]
    np.testing.assert_array_equal(go.run("mg_kernel", test, train, backend="gpu", client=cuda_client, **kw),
                                  go.run("mg_kernel", test, train, backend="gpu", **kw))
    fcsp = {"length_kernel": {"gaussian": {"gamma": 1.0}}, "path": "fcsp"}
    for args in ((gs,), (test, train)):
        for sp in ({}, {"normalize": True}, {"normalize": True, **fcsp}):
            np.testing.assert_array_equal(go.run("sp_kernel", *args, backend="gpu", client=cuda_client, **sp),
                                          go.run("sp_kernel", *args, backend="gpu", **sp))


@pytest.mark.rapids
def test_dask_cudf_edge_frame_on_a_local_cuda_cluster(cuda_client):
    """A dask-cuDF edge frame: column slices on the GPU workers, a dask-cuDF frame out, the values
    and row order of one GPU."""
    dask_cudf = pytest.importorskip("dask_cudf")
    g = rmat(14, 8, seed=2).to("gpu")
    frame = go.Graph.from_edgelist(_messy_edges().astype("int64")).edges[["src", "dst"]]
    for edges in (g.edges[["src", "dst"]], cudf_of(frame)):
        dg = go.Graph.from_edgelist(dask_cudf.from_cudf(edges, npartitions=5))
        out = go.execute_call("jaccard", dg, client=cuda_client)
        got = out.result.compute()
        assert out.backend == "gpu" and type(got).__module__.split(".")[0] == "cudf"
        ref = go.run("jaccard", go.Graph.from_edgelist(edges), backend="gpu")
        pd.testing.assert_frame_equal(got.to_pandas(), ref.to_pandas())
        pairs = edges.iloc[::3].rename(columns={"src": "first", "dst": "second"}).reset_index(drop=True)
        pairs["second"] = pairs["second"].iloc[::-1].to_numpy()  # mostly non-edges
        for asked in (pairs, pairs.to_pandas()):
            got = go.run("jaccard", dg, pairs=asked, client=cuda_client).compute()
            ref = go.run("jaccard", go.Graph.from_edgelist(edges), pairs=asked, backend="gpu")
            assert type(got).__module__.split(".")[0] == "cudf"
            pd.testing.assert_frame_equal(got.to_pandas(), ref.to_pandas())


def cudf_of(frame: pd.DataFrame):
    import cudf

    return cudf.from_pandas(frame)


@pytest.mark.rapids
def test_pipeline_partitioned_graph_on_gpu_workers(tmp_path, cuda_client):
    """The partitioned pipeline with device: gpu: dask-cuDF reads the files on the GPU workers."""
    _run_partitioned(tmp_path, cuda_client, "gpu")


# A whole-call cluster backend (Backend(cluster=True), as a distributed peer library offers): the
# degrees summed by the workers, each taking a share of the vertices.
def _degree_share(indptr, lo, hi):
    return int(indptr[hi] - indptr[lo])


def _prepare_on(graph, client):
    csr = graph.csr("cpu")
    return csr, client.scatter(csr.indptr, broadcast=True)


def _whole(client, prepared, params):
    csr, indptr = prepared
    k = len(client.scheduler_info()["workers"])
    bounds = [csr.n_vertices * j // k for j in range(k + 1)]
    shares = client.gather([client.submit(_degree_share, indptr, a, b, pure=False)
                            for a, b in zip(bounds[:-1], bounds[1:])])
    return np.asarray([sum(shares)], dtype=np.int64)


def _local(csr, params):
    return np.asarray([csr.indptr[-1]], dtype=np.int64)


def _no_split(inputs, params, workers):
    from graphops.plugin import Part, Split

    return Split([Part(0)], _local_part, lambda values: values[0])


def _local_part(algorithm, inputs, params, backend, select):
    return _local(inputs["graph"].csr("cpu"), params)


def _degree_registry():
    from graphops.plugin import Algorithm, Backend, Params, hookimpl
    from graphops.host.manager import make_plugin_manager
    from graphops.host.registry import Registry

    class Plugin:
        @staticmethod
        @hookimpl
        def graphops_register_algorithms():
            return [Algorithm(name="degree_total", params=Params, inputs=("graph",), result="array",
                              split="tests.test_cluster:_no_split",
                              backends={"cpu": "tests.test_cluster:_local",
                                        "spread": Backend(target="tests.test_cluster:_whole", cluster=True,
                                                          prepare="tests.test_cluster:_prepare_on")})]

    pm = make_plugin_manager(autoload=False, plugins=[])
    pm.register(Plugin(), name="degree_total")
    return Registry(pm)


def test_a_backend_that_runs_the_whole_call_on_the_cluster(client):
    """Backend(cluster=True): called here with the client (fn(client, *args, params)), its prepare
    once per input and client; offered only with a client, never by auto; wrapped as any backend."""
    from graphops.engine.cluster import _PREPARED

    reg, g = _degree_registry(), rmat(10, 8, seed=3)
    want = go.run("degree_total", g, backend="cpu", registry=reg)
    out = go.execute_call("degree_total", g, backend="spread", client=client, registry=reg)
    np.testing.assert_array_equal(out.result, want)
    assert out.backend == "spread" and "2 worker(s)" in out.details["note"]
    assert len(_PREPARED[client]) == 1
    go.run("degree_total", g, backend="spread", client=client, registry=reg)
    assert len(_PREPARED[client]) == 1  # prepared once for this graph and client
    with pytest.raises(BackendUnavailableError, match=r"runs a whole call on a Dask cluster.*pass client="):
        go.run("degree_total", g, backend="spread", registry=reg)
    assert go.execute_call("degree_total", g, registry=reg).backend == "cpu"


def test_a_cluster_backend_needs_an_algorithm_that_distributes():
    from graphops.plugin import Algorithm, Backend, Params

    with pytest.raises(ValueError, match="declares no split or gram"):
        Algorithm(name="x", params=Params, inputs=("graph",), backends={
            "cpu": "m:f", "spread": Backend(target="m:g", cluster=True)})
    with pytest.raises(ValueError, match="every backend needs a Dask cluster"):
        Algorithm(name="x", params=Params, inputs=("graph",), split="m:s",
                  backends={"spread": Backend(target="m:g", cluster=True)})


SCALE_OUT = """
version: 1
name: scale_out
graphs:
  g: {generate: {kind: rmat, scale: 10, edge_factor: 8, seed: 5}}
steps:
  - {id: here, algorithm: jaccard, inputs: {graph: g}, backend: cpu, cluster: false}
  - {id: spread, algorithm: jaccard, inputs: {graph: g}, backend: cpu}
  - {id: stats, algorithm: describe, inputs: {graph: g}, backend: cpu}
cluster: {kind: local, workers: 2}
bench: {repeat: 2, warmup: 1, baseline: cpu}
"""


def test_bench_times_a_files_splitting_steps_on_its_cluster(tmp_path):
    """A benchmark file with a cluster: section is a scale-out case: the steps that split their
    work run on the cluster (started for them), the others here; the case's baseline is the
    one-process row."""
    from graphops.cli.bench import rows_as_table, run_bench

    (tmp_path / "b.yaml").write_text(SCALE_OUT)
    report = run_bench([tmp_path / "b.yaml"])
    here, stats, spread = report.rows  # the steps that run here first, then those on the cluster
    assert (here.workers, spread.workers, stats.workers) == (0, 2, 0)
    assert here.median and spread.median and spread.baseline == "cpu" and here.speedup == 1.0
    assert spread.speedup == pytest.approx(here.median / spread.median)
    assert rows_as_table(report)[3][1] == "cpu (Dask 2 workers)"


def test_bench_of_a_partitioned_graph_times_it_without_a_floor(tmp_path):
    """A benchmark file whose graph is partitioned edge files (a Dask edge frame): the row is timed
    on the file's cluster; no floor (it would gather the frame), and not a crash."""
    from graphops.cli.bench import run_bench

    parts = tmp_path / "parts"
    parts.mkdir()
    (parts / "a.csv").write_text("0,1\n1,2\n2,0\n")
    (parts / "b.csv").write_text("2,3\n3,0\n")
    (tmp_path / "b.yaml").write_text(
        "version: 1\nname: bp\ngraphs:\n  g: {path: 'parts/*.csv', partitioned: true}\n"
        "steps:\n  - {id: w, algorithm: jaccard, inputs: {graph: g}, backend: cpu}\n"
        "cluster: {kind: local, workers: 2}\nbench: {repeat: 1, warmup: 0}\n")
    row, = run_bench([tmp_path / "b.yaml"]).rows
    assert row.median > 0 and row.workers == 2 and row.floor is None and row.work_floor is None


def test_pipeline_step_cluster_false_runs_here(tmp_path):
    from graphops.pipeline import run_pipeline

    (tmp_path / "p.yaml").write_text(SCALE_OUT.replace("bench: {repeat: 2, warmup: 1, baseline: cpu}\n", ""))
    here, spread, stats = run_pipeline(tmp_path / "p.yaml", out=tmp_path / "o", cache=False).steps
    assert "the step says cluster: false" in here.reason and "Dask, 2 worker(s)" in spread.reason
    assert "does not split its work" in stats.reason


@pytest.mark.rapids
def test_cugraph_dask_peer_on_one_cuda_worker():
    """The cugraph_dask peer (cugraph.dask's Jaccard, a whole call on the cluster) scores the
    same pairs as graphops' gpu backend, in its own order."""
    pytest.importorskip("cugraph.dask")
    dask_cuda = pytest.importorskip("dask_cuda")
    g = rmat(12, 8, seed=4).to("gpu")
    want = go.run("jaccard", g, backend="gpu").to_pandas()
    with dask_cuda.LocalCUDACluster(n_workers=1, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        out = go.execute_call("jaccard", g, backend="cugraph_dask", client=c)
    got = out.result.to_pandas().sort_values(["first", "second"]).reset_index(drop=True)
    want = want.sort_values(["first", "second"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(got[["first", "second"]], want[["first", "second"]], check_dtype=False)
    np.testing.assert_allclose(got["jaccard_coeff"], want["jaccard_coeff"], rtol=1e-6)


def test_when_closing_runs_before_a_client_graphops_opened_closes():
    """A cluster backend's tidy-up (e.g. a communicator it started) runs while the workers still
    answer; a failing one does not hide the run's outcome."""
    from graphops.engine.cluster import connect
    from graphops.plugin import when_closing

    seen = []
    with connect(kind="local", workers=1) as c:
        when_closing(c, lambda: seen.append(len(c.scheduler_info()["workers"])))
        when_closing(c, lambda: 1 / 0)
    assert seen == [1]


def _worker_stream(dask_worker=None) -> float:  # on a worker: how long its stream to the scheduler holds a message
    return dask_worker.batched_stream.interval


def _scheduler_streams(dask_scheduler=None) -> tuple[list[float], dict[str, float]]:
    return ([s.interval for s in dask_scheduler.stream_comms.values()],
            {c: s.interval for c, s in dask_scheduler.client_comms.items()})


def test_a_cluster_graphops_starts_sends_its_messages_promptly():
    """Dask holds a stream's messages up to 10 ms to batch them (a call's tasks waited there before
    starting): on a cluster graphops starts every stream sends within PROMPT_INTERVAL, the
    client's, the scheduler's to it and to each worker, each worker's, and a worker's that joins
    later."""
    from graphops.engine.cluster import connect
    from graphops.engine.prompt import PROMPT_INTERVAL

    with connect(kind="local", workers=1) as c:
        assert c.scheduler_comm.interval <= PROMPT_INTERVAL
        c.cluster.scale(2)
        c.wait_for_workers(2, timeout=60)
        assert sorted(c.run(_worker_stream).values()) == [PROMPT_INTERVAL] * 2
        to_workers, to_clients = c.run_on_scheduler(_scheduler_streams)
        assert to_workers == [PROMPT_INTERVAL] * 2 and to_clients[c.id] == PROMPT_INTERVAL


def test_a_users_cluster_keeps_its_shared_streams(client):
    """On a cluster the caller started, a call makes only its client's own streams prompt: the
    workers' streams, which other clients' work shares, keep Dask's batching."""
    from graphops.engine.prompt import PROMPT_INTERVAL

    before = client.run(_worker_stream)
    go.execute_call("jaccard", rmat(8, 4, seed=1), backend="cpu", client=client)
    assert client.scheduler_comm.interval <= PROMPT_INTERVAL
    to_workers, to_clients = client.run_on_scheduler(_scheduler_streams)
    assert to_clients[client.id] <= PROMPT_INTERVAL
    assert client.run(_worker_stream) == before and min(before.values()) > PROMPT_INTERVAL
    assert min(to_workers) > PROMPT_INTERVAL


class _NoGraphopsThere:
    """A client whose scheduler cannot load graphops: every remote call fails as it would."""

    asynchronous, id = False, "client-1"

    def __init__(self) -> None:
        self.scheduler_comm = SimpleNamespace(interval=0.01)

    def run_on_scheduler(self, *args, **kwargs):
        raise ModuleNotFoundError("No module named 'graphops'")

    register_plugin = run_on_scheduler


def test_prompt_streams_where_the_scheduler_lacks_graphops_and_after_a_reconnect(caplog):
    """A scheduler without graphops: the client's own stream is still prompt, the cluster's streams
    keep Dask's batching with one warning, nothing raised. A client that reconnects gets a new
    stream from Dask: the next call makes it prompt too."""
    from graphops.engine.prompt import PROMPT_INTERVAL, prompt_client, prompt_cluster

    c = _NoGraphopsThere()
    with caplog.at_level("WARNING", logger="graphops"):
        prompt_cluster(c)
    assert c.scheduler_comm.interval == PROMPT_INTERVAL
    assert "keep Dask's batching" in caplog.text and "install graphops where the scheduler" in caplog.text
    c.scheduler_comm = SimpleNamespace(interval=0.01)  # Dask's new stream after a reconnect
    prompt_client(c)
    assert c.scheduler_comm.interval == PROMPT_INTERVAL


@pytest.mark.parametrize("fresh", [False, True])
def test_a_second_try_or_a_send_asks_the_scheduler_for_its_workers_again(client, monkeypatch, fresh):
    """A call's parts use the scheduler's worker list the plan asked for moments before; a second
    try (a worker was lost since) or a first call that sent its inputs (which took time) asks
    again, so a worker gone meanwhile is not sent part data."""
    from dataclasses import replace

    from graphops.engine import cluster, dispatch, placing
    from graphops.host.registry import get_registry

    algo, g = get_registry().algorithm("jaccard"), rmat(9, 4, seed=5)
    planned = dispatch.plan(algo, {"graph": g}, "cpu", {}, client=client)
    gone = "tcp://127.0.0.1:9"  # a worker the plan saw, gone since
    planned = replace(planned, listed={gone: {"status": "running"}, **planned.listed})
    tried, scatter = [], placing._scatter_parts
    monkeypatch.setattr(placing, "_scatter_parts", lambda c, sp, ks, live, kept: tried.append(sorted(live)) or
                        scatter(c, sp, ks, [w for w in live if w != gone], kept))  # the send itself: live ones
    split = cluster._split(algo, dict(planned.inputs), planned.params, 2, "cpu")
    out, _ = cluster._parts_once(planned, split, 2, False, fresh=fresh)
    pd.testing.assert_frame_equal(out, go.run("jaccard", g, backend="cpu"))
    assert tried and gone not in tried[0]


CLUSTER_RUN = """version: 1
name: clu
cluster: {kind: local, workers: 2}
graphs:
  g: {generate: {kind: rmat, scale: 10, edge_factor: 8, seed: 1}}
steps:
  - {id: j, algorithm: jaccard, inputs: {graph: g}, backend: cpu, output: j.parquet}
"""


@pytest.mark.parametrize("verbose", [False, True])
def test_the_command_line_shows_dasks_info_records_only_when_verbose(tmp_path, verbose):
    """A run on a local cluster: Dask's scheduler logs each worker's start and stop at INFO; the
    command prints them with -v and not without (graphops' own INFO lines likewise)."""
    (tmp_path / "c.yaml").write_text(CLUSTER_RUN)
    argv = [sys.executable, "-m", "graphops", *(["-v"] if verbose else []), "run", str(tmp_path / "c.yaml"),
            "--out", str(tmp_path / "o"), "--quiet"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "o" / "j.parquet").exists()
    assert ("INFO distributed." in out.stderr) is verbose
    assert ("INFO graphops" in out.stderr) is verbose


def test_a_failing_part_on_a_local_cluster_is_one_line_without_the_workers_tracebacks(tmp_path):
    """The workers of a cluster the run started cannot read an edge file: the run prints graphops'
    one line (naming the file and line), not each worker's "Compute Failed" block before it."""
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "a.csv").write_text("0,1\n1,2\n")
    (tmp_path / "parts" / "b.csv").write_text("2,3\n3,x\n")
    (tmp_path / "c.yaml").write_text(
        "version: 1\ngraphs: {g: {path: 'parts/*.csv', partitioned: true}}\n"
        "steps: [{id: j, algorithm: jaccard, inputs: {graph: g}, backend: cpu, output: j.csv}]\n"
        "cluster: {kind: local, workers: 2}\n")
    argv = [sys.executable, "-m", "graphops", "run", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "o"), "--quiet"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    assert out.returncode == 1
    assert "Compute Failed" not in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert "b.csv, line 2, column 2: dst id 'x' is not an integer" in out.stderr.splitlines()[-1]


def test_a_host_gram_places_its_blocks_as_they_come_on_threads():
    """A raw test x train matrix for a caller on the host: each block (columns dealt in runs) is
    placed on a thread as it arrives, the rest when the merge is called; the matrix is the same
    as placing them in order, and a block that cannot be placed raises from the merge."""
    from graphops.engine.gram import _GramMerge, dealt, runs_of

    rng = np.random.default_rng(5)
    K = rng.random((7, 300))
    order = dealt(300, 6, run=8)
    cuts = np.linspace(0, 300, 7).astype(int)
    selects = tuple(("cols", "other", runs_of(np.sort(order[a:b]))) for a, b in zip(cuts[:-1], cuts[1:]))
    blocks = [K[:, np.concatenate([np.arange(a, b) for a, b in runs])] for _, _, runs in selects]
    merge = _GramMerge(selects, K.shape, square=False, normalize=False, host=True)
    values = [None if k % 2 == 0 and merge.add(k, blocks[k]) else blocks[k] for k in range(len(blocks))]
    np.testing.assert_array_equal(merge(values), K)
    broken = _GramMerge(selects, K.shape, square=False, normalize=False, host=True)
    assert broken.add(0, np.zeros((7, 1)))  # too narrow for its runs
    with pytest.raises(ValueError):
        broken([None] + blocks[1:])


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(0, 9), cols=st.integers(1, 120), parts=st.integers(1, 7), run=st.integers(1, 9),
       piece_rows=st.integers(1, 10), kind=st.sampled_from(["rows", "cols"]), started=st.booleans())
def test_a_host_gram_placed_in_pieces_of_rows_is_the_matrix(rows, cols, parts, run, piece_rows, kind, started):
    """Blocks of rows or of columns (graphs dealt in runs), each put in place in pieces of rows on
    the placing threads, with or without the matrix written first: the matrix placed in order."""
    from unittest import mock

    from graphops.engine import gram
    from graphops.engine.gram import _GramMerge, dealt, runs_of

    rng = np.random.default_rng(rows * 1000 + cols)
    K = rng.random((rows, cols)) if kind == "cols" else rng.random((cols, max(rows, 1)))
    n = K.shape[1] if kind == "cols" else len(K)
    order = dealt(n, parts, run=run)
    cuts = np.linspace(0, n, parts + 1).astype(int)
    selects = tuple((kind, "other", runs_of(np.sort(order[a:b]))) for a, b in zip(cuts[:-1], cuts[1:]))
    take = [np.concatenate([np.arange(a, b) for a, b in runs] or [np.zeros(0, int)]) for _, _, runs in selects]
    blocks = [K[:, t] if kind == "cols" else K[t] for t in take]
    with mock.patch.object(gram, "PIECE_BYTES", piece_rows * K.strides[0] if K.size else 8):
        merge = _GramMerge(selects, K.shape, square=False, normalize=False, host=True)
        if started:
            merge.start()
        values = [None if k % 2 == 0 and merge.add(k, blocks[k]) else blocks[k] for k in range(len(blocks))]
        np.testing.assert_array_equal(merge(values), K)


def test_a_block_that_comes_while_the_matrix_is_first_written_is_not_zeroed():
    """start() writes the matrix on the placing threads; a block added at once is placed after the
    rows it lands in were written (placed first, a first write running on another thread zeroed
    it: 2,752 zeros in one of 5 tries at 4,000 x 20,000)."""
    from graphops.engine.gram import _GramMerge

    runs = tuple((a, a + 4) for a in range(0, 20000, 400))
    for _ in range(3):
        merge = _GramMerge((("cols", "other", runs),), (3000, 20000), square=False, normalize=False, host=True)
        merge.start()
        assert merge.add(0, np.ones((3000, 4 * len(runs))))
        K = merge([None])
        assert all((K[:, a:b] == 1.0).all() for a, b in runs)


def test_a_scheduler_that_cannot_keep_the_copies_is_said_once_and_the_call_runs(client, monkeypatch, caplog):
    """A scheduler that cannot import graphops (a remote one) keeps Dask's policy: one warning for
    the client, naming what to do, and calls still run (they may send their inputs again)."""
    import logging

    from graphops.engine import placing

    monkeypatch.setattr(placing, "KEEPING", placing.weakref.WeakKeyDictionary())

    def refuse(fn, *args, **kw):
        raise ModuleNotFoundError("No module named 'graphops'")

    monkeypatch.setattr(client, "run_on_scheduler", refuse)
    g = rmat(8, 8, seed=9)
    with caplog.at_level(logging.WARNING, logger="graphops"):
        for _ in range(2):
            pd.testing.assert_frame_equal(go.run("jaccard", go.Graph.from_edgelist(g.edges), backend="cpu",
                                                 client=client), go.run("jaccard", g, backend="cpu"))
    said = [r.getMessage() for r in caplog.records if "Active Memory Manager" in r.getMessage()]
    assert len(said) == 1 and "active-memory-manager.start: false" in said[0], said


def test_a_dask_edge_frame_refuses_what_its_slices_do_not_compute(client):
    """Two-hop candidates and top_k on a Dask edge frame are refused before anything runs, in a
    Python call as in a pipeline (a two-hop call once scored the edges instead, without a word)."""
    dd = pytest.importorskip("dask.dataframe")
    dg = go.Graph.from_edgelist(dd.from_pandas(_messy_edges(), npartitions=2))
    assert dg.kind == "daskgraph" and go.Graph.from_edgelist(_messy_edges()).kind == "graph"
    for measure in ("jaccard", "sorensen"):
        with pytest.raises(InputError, match="two_hop.*one device.*ddf.compute"):
            go.run(measure, dg, backend="cpu", client=client, candidates="two_hop")
        with pytest.raises(InputError, match="without top_k.*ddf.compute"):
            go.run(measure, dg, backend="cpu", client=client, top_k=5)


@pytest.mark.rapids
def test_gpu_workers_write_jaccard_into_the_callers_memory(cuda_client):
    """GPU workers on this machine write their coefficients into this process's GPU memory (CUDA
    IPC): every part lands and its short answer is posted (graphops.engine.mailbox), the values
    are one GPU's, and a call's result is its own (the next call writes into the same staging
    array)."""
    g = rmat(14, 8, seed=5).to("gpu")
    ref = {m: go.run(m, g, backend="gpu").to_pandas() for m in ("jaccard", "sorensen")}
    first = go.execute_call("jaccard", g, backend="gpu", client=cuda_client)
    second = go.execute_call("sorensen", g, backend="gpu", client=cuda_client)  # other values, the same places
    for out, m in ((first, "jaccard"), (second, "sorensen")):
        assert out.details["landed_parts"] == out.details["posted_parts"] == out.details["parts"] > 1, out.details
        pd.testing.assert_frame_equal(out.result.to_pandas(), ref[m])
    from graphops.engine import landing

    for k in range(6):  # calls one after another: an array waits for Dask's word on its tasks, the next takes another
        m = ("jaccard", "sorensen")[k % 2]
        out = go.execute_call(m, g, backend="gpu", client=cuda_client)
        assert out.details["landed_parts"] == out.details["parts"], out.details
        pd.testing.assert_frame_equal(out.result.to_pandas(), ref[m])
        assert len(landing._STAGING[cuda_client]) <= landing.CONFIRMING_MOST + 1


def test_an_asynchronous_client_is_refused_in_one_line():
    """An asynchronous client made graphops' first wait fail inside Dask ('coroutine' object is not
    iterable); said before any work, with the fix."""
    import asyncio

    async def main() -> str:
        async with distributed.LocalCluster(n_workers=1, processes=False, asynchronous=True,
                                            dashboard_address=":0") as cl, \
                distributed.Client(cl, asynchronous=True) as c:
            with pytest.raises(go.InputError) as err:
                go.run("jaccard", go.datasets.load("karate"), backend="cpu", client=c)
            return str(err.value)

    said = asyncio.run(main())
    assert said == ("the Dask client given is asynchronous (Client(..., asynchronous=True)); graphops waits for its "
                    "cluster calls: give it a client made without asynchronous=True")
