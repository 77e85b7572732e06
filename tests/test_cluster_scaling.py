"""What a cluster call moves and keeps: jaccard on a graph held here sends its workers the set
adjacency once and each part's pairs to one worker once; only coefficients come back."""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import graphops as go
from graphops.io.generate import rmat

distributed = pytest.importorskip("distributed")



def _held(dask_worker) -> list[tuple[str, int, str]]:  # on a worker: what it holds, by class, with lengths
    out = []
    for value in dask_worker.data.values():
        name = type(value).__name__
        out.append((name, len(value.first), value.digest) if name == "PairIndex" else (name, 0, ""))
    return out


def _placed_pairs(held: dict) -> int:
    """The pairs the workers hold, each part's once (a part stolen by an idle worker takes a copy of
    its pairs there, which Dask may not have dropped yet)."""
    parts = {digest: n for items in held.values() for name, n, digest in items if name == "PairIndex"}
    return sum(parts.values())


@pytest.mark.parametrize("weighted", [False, True])
def test_jaccard_workers_hold_the_adjacency_and_their_own_pairs(client, weighted):
    g = rmat(10, 8, seed=11)
    if weighted:
        edges = g.edges.assign(w=(g.edges["src"] % 7 + 1).astype("float64"))
        g = go.Graph.from_edgelist(edges, weight="w")
    params = {"use_weight": weighted}
    ref = go.run("jaccard", g, backend="cpu", **params)
    first = go.execute_call("jaccard", g, backend="cpu", client=client, **params)
    pd.testing.assert_frame_equal(first.result, ref)
    held = client.run(_held)
    names = {name for items in held.values() for name, _, _ in items}
    assert "Graph" not in names and "Adjacency" in names, names
    assert _placed_pairs(held) == len(ref)  # each part's pairs sent once
    assert all(any(name == "PairIndex" for name, _, _ in items) for items in held.values())  # both got parts
    assert first.details["gathered_from_workers_bytes"] == 8 * len(ref)
    assert first.details["sent_to_workers_bytes"] > 16 * len(ref)  # the pairs' indices and the adjacency
    again = go.execute_call("jaccard", g, backend="cpu", client=client, **params)
    pd.testing.assert_frame_equal(again.result, ref)
    assert again.details["sent_to_workers_bytes"] == 0  # kept on the workers
    assert _placed_pairs(client.run(_held)) == len(ref)


def test_given_pairs_go_to_the_workers_as_their_index(client):
    g = rmat(9, 8, seed=2)
    edges = g.edges
    pairs = pd.DataFrame({"first": edges["dst"].to_numpy()[:300], "second": edges["src"].to_numpy()[5:305]})
    ref = go.run("jaccard", g, pairs=pairs, backend="cpu")
    pd.testing.assert_frame_equal(go.run("jaccard", g, pairs=pairs, backend="cpu", client=client), ref)


def test_another_backend_gets_the_graph_and_a_pair_index(client):
    """A backend other than graphops' own kernels (here the hybrid one, on CPU workers) runs on
    the whole graph sent to every worker, with its part's internal indices."""
    g = rmat(9, 8, seed=5)
    from graphops_jaccard.dist import split
    from graphops_jaccard.params import JaccardParams

    params = JaccardParams()
    s = split({"graph": g}, params, 2, backend="hybrid")
    assert s.sent is None and all(p.data is not None for p in s.parts)
    own = split({"graph": g}, params, 2, backend="cpu")
    assert set(own.sent) == {"adjacency"}


SWEEP = """
version: 1
graphs:
  g: {generate: {kind: rmat, scale: 10, edge_factor: 8, seed: 1}}
steps:
  - {id: here, algorithm: jaccard, inputs: {graph: g}, backend: cpu, cluster: false}
  - {id: spread, algorithm: jaccard, inputs: {graph: g}, backend: cpu}
cluster: {kind: local, workers: [1, 2]}
bench: {repeat: 2, warmup: 1, baseline: cpu}
"""


def test_bench_sweeps_cluster_sizes(tmp_path):
    """cluster.workers as a list: a cluster of each size in turn for the steps that split their
    work, the one-process step once; speed-up and efficiency against it, bytes moved per call."""
    from graphops.cli.bench import rows_as_table, run_bench

    (tmp_path / "b.yaml").write_text(SWEEP)
    report = run_bench([tmp_path / "b.yaml"])
    pairs = len(go.run("jaccard", rmat(10, 8, seed=1), backend="cpu"))
    here, one, two = report.rows
    assert (here.workers, one.workers, two.workers) == (0, 1, 2)
    assert here.efficiency is None and here.speedup == 1.0
    for row in (one, two):
        assert row.speedup == pytest.approx(here.median / row.median)
        assert row.efficiency == pytest.approx(row.speedup / row.workers)
        assert row.moved_bytes == 8 * pairs  # the coefficients came back; the inputs went during the warm-up
        assert row.peak_device_bytes is None  # CPU workers
        assert 1 <= len(row.per_worker) <= row.workers, row.per_worker  # the median call's workers, in the JSON
        assert all(w["tasks"] >= 1 and w["seconds"] > 0 for w in row.per_worker.values())
    assert here.per_worker == {}
    assert json.loads(report.to_json())["rows"][2]["per_worker"] == two.per_worker
    table = rows_as_table(report)
    assert table[0][4:7] == ["efficiency", "peak GiB/worker", "moved GB"]
    assert table[3][1] == "cpu (Dask 2 workers)" and table[3][4].endswith("%")
    swept = run_bench([tmp_path / "b.yaml"], workers=[2])  # the argument replaces the file's sizes
    assert [r.workers for r in swept.rows] == [0, 2]


@pytest.mark.parametrize("workers", [[0], [1, 1], [2.0], 0])
def test_bench_workers_argument_errors(tmp_path, workers):
    from graphops.cli.bench import run_bench

    (tmp_path / "b.yaml").write_text(SWEEP)
    with pytest.raises(ValueError, match="run_bench"):
        run_bench([tmp_path / "b.yaml"], workers=workers)


def test_a_run_takes_one_cluster_size(tmp_path):
    from graphops.pipeline import run_pipeline

    (tmp_path / "p.yaml").write_text(SWEEP.replace("bench: {repeat: 2, warmup: 1, baseline: cpu}\n", ""))
    with pytest.raises(Exception, match=r"list of cluster sizes, which graphops bench sweeps.*workers: 2"):
        run_pipeline(tmp_path / "p.yaml", out=tmp_path / "o")


@pytest.mark.parametrize("normalize", [False, True])
def test_a_test_by_train_gram_in_column_blocks_equals_one_process(client, normalize, monkeypatch):
    """mg_kernel cuts the larger (training) set into blocks of columns, balanced by the graphs'
    nodes and edges; a raw host result takes each block as it arrives. Values equal one process's."""
    import numpy as np

    from graphops.engine import gramcost
    from graphops.kernels import KroneckerDelta

    monkeypatch.setattr(gramcost, "PAYS_BY", 0)  # always on the cluster
    gs = go.datasets.load("MUTAG")
    kd = KroneckerDelta(0.5, on="label")
    kw = dict(node_kernel=kd, edge_kernel=kd, normalize=normalize, backend="cpu")
    test, train = gs[:7], gs[7:]
    ref = go.run("mg_kernel", test, train, **kw)
    out = go.execute_call("mg_kernel", test, train, client=client, **kw)
    np.testing.assert_array_equal(out.result, ref)
    assert out.details["parts"] > 2 and isinstance(out.result, np.ndarray)


def test_gram_work_by_nodes_and_edges():
    from graphops.engine.gram import _graph_work

    gs = go.datasets.load("MUTAG")
    n = np.diff(gs.node_ptr).astype(float)
    m = np.diff(gs.edge_ptr).astype(float)
    np.testing.assert_array_equal(_graph_work(gs, "nodes_edges"), n + m)
    np.testing.assert_array_equal(_graph_work(gs, "node_pairs"), n ** 2)
    np.testing.assert_array_equal(_graph_work(gs, "nodes"), n)


def test_a_splits_shipped_objects_travel_field_by_field():
    """The set adjacency a jaccard split sends (a Shipped dataclass) and a part's PairIndex go
    through Dask's own serializers field by field, not pickled whole (a device array pickled goes
    through host memory); what backends derived for a pair view stays behind."""
    from distributed.protocol import deserialize, serialize

    from graphops.engine.wire import register
    from graphops.model.pairs import PairIndex
    from graphops_jaccard.common import Adjacency

    register()
    adj = Adjacency(np.array([0, 1, 2], dtype=np.int64), np.array([1, 0], dtype=np.int32))
    index = PairIndex(np.array([0]), np.array([1]), "d", extra={"plan": object()})
    for obj in (adj, index):
        header, frames = serialize(obj, serializers=("dask", "pickle"), on_error="raise")
        assert header["serializer"] == "dask"
        back = deserialize(header, frames)
        assert type(back) is type(obj)
    back = deserialize(*serialize(index, serializers=("dask", "pickle"), on_error="raise"))
    assert back.extra == {} and back.digest == "d"
    np.testing.assert_array_equal(back.second, index.second)
    np.testing.assert_array_equal(deserialize(*serialize(adj, serializers=("dask",)))
                                  .indices, adj.indices)


class _FakeFuture:
    status = "finished"


class _FakeClient:
    id = "fake"

    def __init__(self, workers):
        self.workers, self.scattered = workers, []

    def scheduler_info(self, n_workers=-1):
        return {"workers": {w: {} for w in self.workers}}

    def scatter(self, data, workers, hash):
        self.scattered.append((workers[0], len(data)))
        return [_FakeFuture() for _ in data]


@given(costs=st.lists(st.floats(0.1, 100.0), min_size=1, max_size=40), n_workers=st.integers(1, 6))
@settings(max_examples=60, deadline=None)
def test_part_data_goes_to_one_worker_each_balanced_and_stays(costs, n_workers):
    """Each part with data is placed on exactly one live worker, the heaviest first on the least
    loaded (so no worker carries more than the mean plus the largest part), and a second call
    finds every part where it went, sending nothing."""
    from graphops.engine.parts import Part, Split
    from graphops.engine.placing import place_data

    workers = [f"w{k}" for k in range(n_workers)]
    client = _FakeClient(workers)
    keep = type("Keep", (), {})()
    split = Split([Part((k, k + 1), c, data=np.zeros(1)) for k, c in enumerate(costs)], run=None, merge=None,
                  keep_with=keep)
    moved = {"to_workers": 0}
    placed = place_data(client, split, moved)
    assert sorted(placed) == list(range(len(costs))) and all(w in workers for _, w in placed.values())
    load = {w: sum(costs[k] for k, (_, where) in placed.items() if where == w) for w in workers}
    assert max(load.values()) <= sum(costs) / n_workers + max(costs) + 1e-9
    assert moved["to_workers"] == 8 * len(costs)
    again = {"to_workers": 0}
    assert {k: w for k, (_, w) in place_data(client, split, again).items()} == {k: w for k, (_, w) in placed.items()}
    assert again["to_workers"] == 0


@pytest.mark.parametrize("text", ["0", "1,1", "2,x", "", "1,,2", "5000", "٣"])
def test_bench_workers_option_errors(capsys, text):
    from graphops.cli.command import main

    with pytest.raises(SystemExit) as exc:
        main(["bench", "--workers", text, "nothing.yaml"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--workers" in err and "distinct cluster sizes from 1 to 4096" in err


def test_bench_workers_option_sweeps(tmp_path, capsys):
    from graphops.cli.command import main

    (tmp_path / "b.yaml").write_text(SWEEP)
    assert main(["bench", str(tmp_path / "b.yaml"), "--workers", "2", "--repeat", "1", "--json",
                 str(tmp_path / "r.json")]) == 0
    import json

    rows = json.loads((tmp_path / "r.json").read_text())["rows"]
    assert [r["workers"] for r in rows] == [0, 2] and rows[1]["efficiency"] is not None


@given(edges=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=120),
       cuts=st.lists(st.integers(0, 31), max_size=4))
@settings(max_examples=80, deadline=None)
def test_column_slices_put_together_are_the_whole_adjacency(edges, cuts):
    """merge_slices of CSRs over increasing column ranges is the CSR over all columns: each row's
    entries in column order, nothing lost or repeated."""
    from graphops.engine.slices import merge_slices

    n = 31
    pairs = sorted(set(edges))
    rows = np.array([u for u, _ in pairs], dtype=np.int64)
    cols = np.array([v for _, v in pairs], dtype=np.int64)
    bounds = [0, *sorted(set(cuts)), n + 1]

    def csr(keep):
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(rows[keep], minlength=n), out=indptr[1:])
        return indptr, cols[keep].astype(np.int32)

    slices = [csr((cols >= a) & (cols < b)) for a, b in zip(bounds[:-1], bounds[1:])]
    whole = csr(np.ones(len(rows), bool))
    got = merge_slices(*slices)
    np.testing.assert_array_equal(got[0], whole[0])
    np.testing.assert_array_equal(got[1], whole[1])
    assert got[1].dtype == np.int32


@pytest.mark.parametrize("whole", [True, False], ids=["whole-adjacency", "k2-slices"])
def test_jaccard_on_a_dask_edge_frame_both_ways(client, monkeypatch, whole):
    """A Dask edge frame is scored on the whole adjacency put together on each slice's worker when
    it fits, else slice by slice; both equal one process, bit for bit."""
    import dask.dataframe as dd

    from graphops.engine import slices

    if not whole:
        monkeypatch.setattr(slices, "WHOLE_SHARE", 0.0)
    frame = rmat(11, 8, seed=21).edges[["src", "dst"]]
    g = go.Graph.from_edgelist(dd.from_pandas(frame, npartitions=5))
    out = go.run("jaccard", g, backend="cpu", client=client).compute()
    ref = go.run("jaccard", go.Graph.from_edgelist(frame), backend="cpu")
    pd.testing.assert_frame_equal(out, ref)
    sl = slices.column_slices(client, g, 2)
    assert (sl.whole != []) is whole


@pytest.mark.parametrize("workers, said", [
    (0, "give a count of workers from 1 to 4096 (workers: 4), or for graphops bench a list"),
    ("[1, 1]", "a sweep lists each count once"), ("[]", "got []"), ("2.5", "got 2.5"), ("[0, 2]", "got [0, 2]")])
def test_bad_workers_in_a_file_is_one_line_at_its_key(tmp_path, workers, said):
    from graphops.errors import ConfigError
    from graphops.pipeline import load_pipeline

    (tmp_path / "b.yaml").write_text(SWEEP.replace("workers: [1, 2]", f"workers: {workers}"))
    with pytest.raises(ConfigError) as caught:
        load_pipeline(tmp_path / "b.yaml")
    text = str(caught.value)
    assert "cluster.workers" in text and said in text and "constrained-int" not in text, text


def test_bench_workers_given_as_text_is_a_type_error(tmp_path):
    from graphops.cli.bench import run_bench
    from graphops.errors import InputTypeError

    with pytest.raises(InputTypeError, match=r"run_bench: workers must be .*got '1,2' \(str\)"):
        run_bench([tmp_path], workers="1,2")


def test_a_sweep_of_a_file_without_a_cluster_says_so(tmp_path):
    from graphops.cli.bench import run_bench

    (tmp_path / "b.yaml").write_text(SWEEP.replace("cluster: {kind: local, workers: [1, 2]}\n", ""))
    rows = run_bench([tmp_path / "b.yaml"], workers=[2], repeat=1).rows
    assert [r.workers for r in rows] == [0, 0]
    assert all(r.note.startswith("not swept (--workers): the file has no cluster: section") for r in rows)


def test_a_sweep_size_that_cannot_start_names_the_option_and_an_address_file_times_its_own_steps(tmp_path):
    """A --workers size this machine cannot start is said to come from --workers, not from the file;
    a file that names a running scheduler is not swept, but its steps that run here are timed."""
    from graphops.cli.bench import run_bench
    from graphops.engine.cluster import local_worker_limit

    (tmp_path / "b.yaml").write_text(SWEEP)
    too_many = local_worker_limit()[1] + 1
    rows = run_bench([tmp_path / "b.yaml"], workers=[too_many], repeat=1, warmup=0).rows
    assert [r.workers for r in rows] == [0, 0] and rows[0].median > 0
    assert rows[1].note.startswith(f"skipped: --workers {too_many}: cluster workers: {too_many}, but a local cluster "
                                   f"starts one process per worker"), rows[1].note
    (tmp_path / "a.yaml").write_text(SWEEP.replace("cluster: {kind: local, workers: [1, 2]}",
                                                   "cluster: {address: 'tcp://127.0.0.1:1', timeout: 1}"))
    here, there = run_bench([tmp_path / "a.yaml"], workers=[2], repeat=1, warmup=0).rows
    assert here.median > 0 and not here.note.startswith("skipped"), here.note
    assert there.note == "skipped: --workers sweeps clusters started here; this file names a running scheduler's address"


def test_a_run_names_the_file_and_key_of_a_sweep(tmp_path):
    from graphops.errors import InputError
    from graphops.pipeline import run_pipeline

    (tmp_path / "p.yaml").write_text(SWEEP.replace("bench: {repeat: 2, warmup: 1, baseline: cpu}\n", ""))
    with pytest.raises(InputError, match=r"p\.yaml: cluster\.workers: \[1, 2\] is a list of cluster sizes"):
        run_pipeline(tmp_path / "p.yaml", out=tmp_path / "o")
    assert not (tmp_path / "o").exists()  # refused before anything was made


def test_a_client_that_is_not_one_or_is_closed_is_one_line():
    from graphops.errors import InputError, InputTypeError

    g = rmat(6, 4, seed=1)
    with pytest.raises(InputTypeError, match="client must be a dask.distributed.Client .* got str"):
        go.run("jaccard", g, backend="cpu", client="tcp://x:1")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cl:
        c = distributed.Client(cl)
        c.close()
        with pytest.raises(InputError, match="the Dask client given is closed"):
            go.run("jaccard", g, backend="cpu", client=c)


@pytest.mark.parametrize("address, said", [
    ("nonsense", "is not a Dask scheduler's address"), ("tcp://", "is not a Dask scheduler's address"),
    ("foo://x:1", "is not a Dask scheduler's address"), ("tls://127.0.0.1:1", "For tls:// pass a Client"),
    ("tcp://host:notaport", "is not a Dask scheduler's address: its port 'notaport' is not a number"),
    ("host:notaport", "its port 'notaport' is not a number"), ("tcp://127.0.0.1", "it names no port"),
    ("tcp://127.0.0.1:99999", "its port 99999 is not between 1 and 65535"),
    ("tcp://127.0.0.1:8786/", "it ends with '/' after the port \\(write '127.0.0.1:8786'\\)"),
    ("tcp://[::1:8786", "its host '\\[::1' opens a bracket it does not close"), ("tcp://:8786", "it names no host"),
    ("tcp://::1:8786", "its host '::1' is an IPv6 address without brackets")])
def test_a_bad_scheduler_address_is_one_line(address, said):
    from graphops.engine.cluster import connect
    from graphops.errors import ClusterUnavailableError

    with pytest.raises(ClusterUnavailableError, match=said):
        with connect(address=address, timeout=2):
            pass


def test_old_and_new_backend_keys_together_name_the_fix(tmp_path):
    from graphops.errors import ConfigError
    from graphops.pipeline import load_pipeline

    base = SWEEP.replace("cluster: {kind: local, workers: [1, 2]}\n", "")
    (tmp_path / "a.yaml").write_text(base.replace("version: 1\n", "version: 1\nbackend: cpu\ndevice: cpu\n"))
    with pytest.raises(ConfigError) as caught:
        load_pipeline(tmp_path / "a.yaml")
    assert "both backend: and device: (its former name); remove device:" in str(caught.value)
    assert "'graphs'" not in str(caught.value)  # no dump of the whole file
    (tmp_path / "b.yaml").write_text(base.replace("version: 1\n", "version: 1\ndevice: cuda\n"))
    with pytest.raises(ConfigError, match="device: 'cuda' .* write backend:"):
        load_pipeline(tmp_path / "b.yaml")
    (tmp_path / "c.yaml").write_text(SWEEP.replace("workers: [1, 2]", "workers: {a: 1}"))
    with pytest.raises(ConfigError) as caught:
        load_pipeline(tmp_path / "c.yaml")
    assert "constrained-int" not in str(caught.value) and "give a count of workers" in str(caught.value)


@given(edges=st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), min_size=1, max_size=150),
       cuts=st.lists(st.integers(1, 40), max_size=5))
@settings(max_examples=80, deadline=None)
def test_each_distinct_edge_has_one_home_slice(edges, cuts):
    """Cut into column slices, every distinct edge {u, v} (repeats and both directions once, a
    self-loop too) is homed in exactly one slice, as first stored."""
    from graphops.engine.slices import _cut, _slice

    n = 41
    s = np.array([u for u, _ in edges], dtype=np.int64)
    d = np.array([v for _, v in edges], dtype=np.int64)
    bounds = [0, *sorted(set(cuts)), n]
    pieces = _cut((s, d), bounds, 0)
    homed = []
    for piece in pieces:
        _, (first, second), pos = _slice(n, piece)
        homed += [(int(a), int(b), int(p)) for a, b, p in zip(first, second, pos)]
    first_row = {}
    for row, (u, v) in enumerate(edges):
        first_row.setdefault(frozenset((u, v)), (u, v, row))
    assert sorted(homed) == sorted(first_row.values())


@pytest.mark.parametrize("scramble", [True, False])
@pytest.mark.parametrize("cap", [1.5, 100.0])
def test_slices_share_the_edges_evenly(scramble, cap):
    """Each of 4 slices of an R-MAT graph is home to about a quarter of its distinct edges and of
    their estimated work Σ (min(d_u, d_v) + EDGE_COST) (homing each edge at its larger end gave
    the last slice 7/16), within the cap on entries. Not scrambled, the hubs are the first
    vertices: cut by entries, the first slice's edges took 1.10 of the mean work."""
    from graphops.engine.slices import EDGE_COST, _bounds, _cut, _histogram, _home_work, _slice

    frame = rmat(14, 16, seed=5, scramble=scramble).edges
    s, d = frame["src"].to_numpy(np.int64), frame["dst"].to_numpy(np.int64)
    n = int(max(s.max(), d.max())) + 1
    entries = _histogram((s, d), n)
    bounds = _bounds(n, 4, entries, _home_work((s, d), entries), cap=cap)
    homes = [_slice(n, piece) for piece in _cut((s, d), bounds, 0)]
    deg = np.diff(homes[0][0][0]) + sum(np.diff(h[0][0]) for h in homes[1:])
    counts = np.array([len(h[1][0]) for h in homes], dtype=float)
    work = np.array([(np.minimum(deg[h[1][0]], deg[h[1][1]]) + EDGE_COST).sum() for h in homes], dtype=float)
    held = np.array([len(h[0][1]) for h in homes], dtype=float)
    assert counts.sum() == len(frame)
    assert np.all(np.abs(counts / counts.mean() - 1) < (0.1 if scramble else 0.25)), counts
    assert np.all(np.abs(work / work.mean() - 1) < (0.01 if scramble else 0.03)), work
    assert held.max() <= cap * held.mean(), held


def test_the_entry_cap_is_what_free_memory_holds_and_at_least_the_mean():
    from graphops.engine.slices import ENTRY_BYTES, ENTRY_CAP, SLICE_SHARE, entry_cap

    mean = 1e7
    assert entry_cap([10**12, 10**13], 4 * mean, 4) == ENTRY_CAP  # room to spare
    small = int(1.2 * mean * ENTRY_BYTES / SLICE_SHARE)  # a worker whose memory holds 1.2 times the mean
    assert entry_cap([10**12, small], 4 * mean, 4) == pytest.approx(1.2)
    assert entry_cap([10**6], 4 * mean, 4) == 1.0  # too little memory: cut by entries
    assert entry_cap([], 0, 4) == 1.0


def _fits(entries: np.ndarray, k: int, cap: float) -> bool:
    """Whether some cut of ``entries`` into k contiguous slices keeps each within ``cap`` (slow, obvious)."""
    import itertools

    n = len(entries)
    for cut in itertools.combinations_with_replacement(range(n + 1), k - 1):
        b = [0, *cut, n]
        if all(entries[x:y].sum() <= cap for x, y in zip(b[:-1], b[1:])):
            return True
    return False


@given(entries=st.lists(st.integers(0, 30), min_size=0, max_size=9), k=st.integers(1, 4),
       work=st.lists(st.floats(0, 1e6), min_size=9, max_size=9), times=st.floats(1.0, 3.0))
@settings(max_examples=300, deadline=None)
def test_slice_bounds_balance_work_within_the_entry_cap(entries, k, work, times):
    """Bounds: k + 1 of them, from 0 to n, never falling; each slice within the cap (times the
    mean entries) whenever some cut allows it; the work cut where the cap does not interfere."""
    from graphops.engine.slices import _bounds

    e, n = np.array(entries, dtype=np.int64), len(entries)
    w = np.array(work[:n])
    b = _bounds(n, k, e, w, cap=times)
    assert len(b) == k + 1 and b[0] == 0 and b[-1] == n and all(x <= y for x, y in zip(b[:-1], b[1:]))
    cap = times * e.sum() / k
    if _fits(e, k, cap):
        assert all(e[x:y].sum() <= cap for x, y in zip(b[:-1], b[1:])), b


def test_slice_bounds_move_columns_from_the_costly_slices():
    """Hubs' edges in the first columns: cut by entries, the first slice would take nearly all the
    work; cut by work, it takes fewer columns and holds at most the cap (1.5 times) its share of entries."""
    from graphops.engine.slices import _bounds

    entries = np.ones(1000, np.int64)
    work = np.ones(1000)
    work[:100] = 100.0  # the first tenth of the columns holds 10,000 of the 10,900 units of work
    b = _bounds(1000, 4, entries, work, cap=1.5)
    assert b[1] < 250 and b[1] >= 100 * 0.25 * 10900 / 10000 - 1
    assert max(y - x for x, y in zip(b[:-1], b[1:])) <= 1.5 * 250


@pytest.mark.parametrize("normalize", [False, True])
def test_test_by_train_parts_take_graphs_from_all_over_the_set(client, monkeypatch, normalize):
    """A test x train Gram matrix in blocks of columns: each block's columns are runs of graphs
    dealt from all over the training set (ordered by size here), put back in place by the merge;
    the matrix equals one process's."""
    from graphops.engine import gram, gramcost
    from graphops.io.generate import gnp_set

    monkeypatch.setattr(gramcost, "PAYS_BY", 0)  # always on the cluster
    seen = []
    real = gram._place
    monkeypatch.setattr(gram, "_place", lambda K, kind, runs, block, *rows: (seen.append((kind, runs)),
                                                                              real(K, kind, runs, block, *rows)))
    test, train = gnp_set({10: 15}, p=0.2, seed=3), gnp_set({6: 300, 12: 300, 18: 300}, p=0.2, seed=4)
    done = go.execute_call("sp_kernel", test, train, backend="cpu", client=client, normalize=normalize)
    np.testing.assert_array_equal(done.result, go.run("sp_kernel", test, train, backend="cpu", normalize=normalize))
    assert len(seen) == done.details["parts"] == 8  # 2 workers, 4 parts each
    for kind, runs in seen:
        assert kind == "cols" and min(a for a, _ in runs) < 300 and max(b for _, b in runs) > 600  # small to large
    assert sorted(i for _, runs in seen for a, b in runs for i in range(a, b)) == list(range(len(train)))


def test_edge_files_that_do_not_read_alike_are_one_line(client, tmp_path):
    """One of the files has a header row the others do not: the workers cannot read it as integer
    ids, and the call says so in one line with the fix (not Dask's dtype table)."""
    _refused_on_the_workers(client, tmp_path, "0,1\n1,2\n", "x,y\nfoo,bar\n",
                            r"b\.csv, line 1, column 1: src id 'x' is not an integer; .* \(the workers could not read "
                            r"the graph's edge files\)")


def _refused_on_the_workers(client, folder, first, second, said):
    """Edge files a.csv (``first``) and b.csv (``second``) in ``folder``, read; jaccard on them is
    refused with a message matching ``said``."""
    from graphops.io.partitioned import read_edge_files

    (folder / "a.csv").write_text(first)
    (folder / "b.csv").write_text(second)
    with pytest.raises(go.InputError, match=said):
        go.run("jaccard", read_edge_files(folder / "*.csv", "csv"), backend="cpu", client=client)


@pytest.mark.parametrize("second", ["2,3\n3,4\n", "dst,src\n2,3\n", "a,b\n2,3\n"],
                         ids=["no-header", "swapped", "other-names"])
def test_a_later_file_without_the_first_files_header_row_is_named(tmp_path, second):
    """The first file has a header row: each file is read with one, so a file without it would lose
    its first edge and one naming other columns would be read by position, silently; named instead."""
    from graphops.io.partitioned import read_edge_files

    (tmp_path / "a.csv").write_text("src,dst\n0,1\n1,2\n")
    (tmp_path / "b.csv").write_text(second)
    with pytest.raises(go.InputError, match=r"b\.csv, line 1: .* is not the header row of .*a\.csv \('src,dst'\); .*"
                                            r"give every file the same header row, or none"):
        read_edge_files(tmp_path / "*.csv", "csv")
    (tmp_path / "b.csv").write_text("src,dst\n2,3\n")
    assert len(read_edge_files(tmp_path / "*.csv", "csv").edges.compute()) == 3


def test_an_empty_first_edge_file_is_named(tmp_path):
    from graphops.io.partitioned import read_edge_files

    (tmp_path / "a.csv").write_text("")
    (tmp_path / "b.csv").write_text("0,1\n")
    with pytest.raises(go.InputError, match=r"a.csv: the file is empty; the first of the edge files says how all"):
        read_edge_files(tmp_path / "*.csv", "csv")


def test_jaccard_parts_hold_about_a_part_of_pairs_each(monkeypatch):
    """Pairs a part: about PART_PAIRS (32 M: R-MAT 22's 64 M pairs are one part on each of 2 or 4
    workers, R-MAT 24's 260 M two parts on 4), at least one a worker, at most PARTS_PER_WORKER."""
    import graphops_jaccard.dist as dist
    from graphops.engine.parts import PARTS_PER_WORKER

    monkeypatch.setattr(dist, "PART_PAIRS", 1 << 25)
    assert dist.parts_per_worker(64_152_285, 4) == dist.parts_per_worker(64_152_285, 2) == 1
    assert dist.parts_per_worker(260_000_000, 4) == 2
    assert dist.parts_per_worker(524_000_000, 4) == 4 == PARTS_PER_WORKER
    assert dist.parts_per_worker(10**12, 4) == PARTS_PER_WORKER and dist.parts_per_worker(0, 3) == 1
    g = rmat(9, 8, seed=1)
    s = dist.split({"graph": g}, _params(), 3)
    assert len(s.parts) == 3


def _params():
    from graphops_jaccard.params import JaccardParams

    return JaccardParams()


def test_edge_frames_whose_parts_lack_the_columns_are_one_line(client, tmp_path):
    """Parquet files with other columns than the first's, or a Dask frame's partition unlike its
    meta: one line naming the columns, not a KeyError from inside Dask."""
    import dask
    import dask.dataframe as dd

    from graphops.io.partitioned import read_edge_files

    pd.DataFrame({"src": [0, 1, 2], "dst": [1, 2, 0]}).to_parquet(tmp_path / "e0.parquet")
    pd.DataFrame({"a": [0, 1], "b": [1, 2]}).to_parquet(tmp_path / "e1.parquet")
    with pytest.raises(go.InputError, match=r"e1\.parquet: has no column\(s\) \['src', 'dst'\] \(its columns: \['a', "
                                            r"'b'\]\), which .*e0\.parquet has; every edge file needs the same id "
                                            r"columns"):
        go.run("jaccard", read_edge_files(tmp_path, "parquet"), backend="cpu", client=client)
    meta = pd.DataFrame({"src": pd.Series(dtype="int64"), "dst": pd.Series(dtype="int64")})
    parts = [dask.delayed(pd.DataFrame)({"src": [0, 1], "dst": [1, 2]}), dask.delayed(pd.DataFrame)({"a": [0], "b": [2]})]
    ddf = dd.from_delayed(parts, meta=meta, verify_meta=False)
    with pytest.raises(go.InputError, match=r"a partition of the edge frame has no column\(s\) \['src', 'dst'\] \(its "
                                            r"columns: \['a', 'b'\]\); every file or partition needs the same columns"):
        go.run("jaccard", go.Graph.from_edgelist(ddf), backend="cpu", client=client)


def test_a_dask_edge_frame_takes_each_column_once_and_is_a_frame():
    """src and dst naming one column, a missing column, or a Dask array: one line each, before any work."""
    import dask.array as da
    import dask.dataframe as dd

    ddf = dd.from_pandas(pd.DataFrame({"src": [0, 1], "dst": [1, 2]}), npartitions=1)
    with pytest.raises(go.InputError, match=r"column 'src' is given for more than one role"):
        go.Graph.from_edgelist(ddf, src="src", dst="src")
    with pytest.raises(go.InputError, match=r"the Dask edge frame has no column\(s\) \['a'\]"):
        go.Graph.from_edgelist(ddf, src="a")
    from graphops.errors import InputTypeError

    with pytest.raises(InputTypeError, match=r"a Dask edge frame is a dask.dataframe or dask_cudf DataFrame .*; got "
                                                r"dask.array.core.Array"):
        go.Graph.from_edgelist(da.zeros((3, 2)))


def test_a_local_cluster_larger_than_the_machine_is_one_line(monkeypatch):
    """Thousands of worker processes on a few cores ran for minutes without a word: refused before
    any starts, naming the cores and the most that fit."""
    import os

    from graphops.engine.cluster import connect

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    with pytest.raises(go.InputError, match=r"cluster workers: 9, but a local cluster starts one process per worker "
                                            r"and this machine has 2 core\(s\): give workers: 8 or fewer"):
        with connect("local", workers=9):
            pass


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_fifo_among_partitioned_edge_files_is_named(tmp_path):
    """A named pipe the pattern matches: one line naming it (its edges were left out without a word)."""
    from graphops.io.partitioned import read_edge_files

    (tmp_path / "a.csv").write_text("0,1\n1,2\n")
    os.mkfifo(tmp_path / "b.csv")
    for source in (tmp_path / "*.csv", tmp_path):
        with pytest.raises(go.InputError, match=r"b\.csv: is a named pipe \(FIFO\), not a regular file, among the edge "
                                                r"files of"):
            read_edge_files(source, "csv")


@pytest.mark.parametrize("kind", ["gone", "loop"])
def test_a_link_to_no_file_among_partitioned_edge_files_is_named(tmp_path, kind):
    """A link the pattern matches that leads to no file (its target gone, or a loop of links): one
    line naming it (its edges were left out without a word)."""
    from graphops.io.partitioned import read_edge_files

    (tmp_path / "a.csv").write_text("0,1\n1,2\n")
    if kind == "gone":
        (tmp_path / "b.csv").symlink_to(tmp_path / "nowhere" / "b.csv")
    else:
        (tmp_path / "b.csv").symlink_to(tmp_path / "c.csv")
        (tmp_path / "c.csv").symlink_to(tmp_path / "b.csv")
    for source in (tmp_path / "*.csv", tmp_path):
        with pytest.raises(go.InputError, match=r"b\.csv: is a link to .*, which does not lead to a file \(gone, or a "
                                                r"loop of links\), among the edge files of"):
            read_edge_files(source, "csv")


def test_text_files_read_as_parquet_are_one_line(tmp_path):
    """CSV files given format='parquet': one line naming the files and the fix (pyarrow's
    ArrowInvalid was reported as a bug)."""
    from graphops.io.partitioned import read_edge_files

    (tmp_path / "a.csv").write_text("0,1\n1,2\n")
    with pytest.raises(go.InputError, match=r"a\.csv: is not a parquet file \(it does not start with parquet's 'PAR1'\)"
                                            r", among the edge files of .*; give format='csv' for text files"):
        read_edge_files(tmp_path / "*.csv", "parquet")
    (tmp_path / "b.parquet").write_bytes(b"PAR1 and then no parquet at all")  # damaged
    with pytest.raises(go.InputError, match=r"the edge files of '.*b\.parquet' could not be read as parquet \(.*\); "
                                            r"for text files give format='csv'"):
        read_edge_files(tmp_path / "b.parquet", "parquet")


def test_a_service_that_never_answers_is_one_line_after_the_timeout():
    """Something at the address takes the connection and never speaks (not a Dask scheduler): one
    line after the timeout and a little more, not a wait without end (Dask's Client waited forever)."""
    import socket
    import time

    from graphops.engine.cluster import ANSWER_GRACE, connect
    from graphops.errors import ClusterUnavailableError

    pytest.importorskip("distributed")
    with socket.socket() as quiet:
        quiet.bind(("127.0.0.1", 0))
        quiet.listen(5)
        address = f"tcp://127.0.0.1:{quiet.getsockname()[1]}"
        t0 = time.perf_counter()
        with pytest.raises(ClusterUnavailableError, match=r"something at 'tcp://127\.0\.0\.1:\d+' took the connection but "
                                                          r"did not answer as a Dask scheduler within 3 s \(another "
                                                          r"service on that port\?\)"):
            with connect(address=address, timeout=1):
                pass
        assert time.perf_counter() - t0 < 1 + ANSWER_GRACE + 3


def test_a_file_that_is_not_parquet_among_parquet_edge_files_is_named(tmp_path):
    from graphops.io.partitioned import read_edge_files

    pd.DataFrame({"src": [0, 1], "dst": [1, 2]}).to_parquet(tmp_path / "a.parquet")
    (tmp_path / "b.parquet").write_text("0,1\n")
    with pytest.raises(go.InputError, match=r"b\.parquet: is not a parquet file \(it does not start with parquet's "
                                            r"'PAR1'\), among the edge files of"):
        read_edge_files(tmp_path, "parquet")
    (tmp_path / "b.parquet").write_text("")
    with pytest.raises(go.InputError, match=r"b\.parquet: is not a parquet file \(.*; it is empty\)"):
        read_edge_files(tmp_path / "*.parquet", "parquet")


@pytest.mark.parametrize("bad, said", [
    ("7,x7", r"b\.csv, line 2, column 2: dst id 'x7' is not an integer"),
    ("3.5,1", r"b\.csv, line 2, column 1: src id '3\.5' is not an integer"),
    ("99999999999999999999,1", r"b\.csv, line 2, column 1: src id '99999999999999999999' is beyond the 64-bit integer "
                               r"range \(\|id\| < 2\*\*63\); ids on partitioned edge files are 64-bit integers: map "
                               r"them to smaller ones")])
def test_a_bad_id_in_a_later_edge_file_is_named_with_its_file_and_line(tmp_path, bad, said):
    """The workers cannot read a text edge file (an id that is not an integer, in a file after the
    first): the file, line, column and value, as reading that file alone names them."""
    import distributed

    from graphops.io.partitioned import read_edge_files

    (tmp_path / "a.csv").write_text("0,1\n1,2\n2,3\n")
    (tmp_path / "b.csv").write_text(f"3,4\n{bad}\n")
    g = read_edge_files(tmp_path / "*.csv", "csv")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cl, \
            distributed.Client(cl) as c:
        with pytest.raises(go.InputError, match=said + r".* \(the workers could not read the graph's edge files\)"):
            go.run("jaccard", g, backend="cpu", client=c)


def test_header_false_on_files_with_a_header_row_names_line_1():
    """header: false on files that start with a header row: Dask reads the ids as text; the first
    file's line 1 is named with the fix, not "map names to integers" (categorize())."""
    import tempfile

    from graphops.io.partitioned import read_edge_files

    with tempfile.TemporaryDirectory() as d:
        for name in ("a.csv", "b.csv"):
            (Path(d) / name).write_text("src,dst\n0,1\n1,2\n")
        with pytest.raises(go.InputError, match=r"a\.csv, line 1, column 1: src id 'src' is not an integer; .*if line "
                                                r"1 is a header, pass header=True"):
            read_edge_files(Path(d) / "*.csv", "csv", header=False)


def test_the_files_read_here_to_name_a_bad_line_stay_within_the_budget(tmp_path, monkeypatch):
    """Past LOCATE_BYTES the files are not read here (a partitioned source may be one huge file):
    the workers' own message stands."""
    import distributed

    from graphops.io import partitioned
    from graphops.io.partitioned import read_edge_files

    monkeypatch.setattr(partitioned, "LOCATE_BYTES", 10)
    (tmp_path / "a.csv").write_text("0,1\n1,2\n2,3\n")
    (tmp_path / "b.csv").write_text("3,4\n7,x7\n")
    g = read_edge_files(tmp_path / "*.csv", "csv")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cl, \
            distributed.Client(cl) as c:
        with pytest.raises(go.InputError, match=r"^the graph's edge files could not be read on the workers"):
            go.run("jaccard", g, backend="cpu", client=c)


def test_decimal_pairs_on_a_dask_graph_are_named_as_such(client):
    dd = pytest.importorskip("dask.dataframe")
    dg = go.Graph.from_edgelist(dd.from_pandas(pd.DataFrame({"src": [0, 1], "dst": [1, 2]}), npartitions=1))
    from graphops.model.pairs import Pairs

    with pytest.raises(go.InputError, match=r"column 'first' has dtype float64; vertex ids must be integers"):
        go.run("jaccard", dg, pairs=pd.DataFrame({"first": [0.5], "second": [1.0]}), client=client)
    with pytest.raises(go.InputError, match=r"names vertices by decimal numbers \(e.g. 0.5\)"):  # arrays as given
        go.run("jaccard", dg, pairs=Pairs(np.array([0.5]), np.array([1.0])), client=client)


def test_a_client_made_after_the_caller_gave_up_is_closed():
    """_within: a value made past the deadline (a scheduler slow to answer) is closed where it was
    made, not left open; a value in time is returned and an error raised."""
    import time

    from graphops.engine.cluster import _NoAnswer, _within

    closed = []

    class Made:
        def close(self):
            closed.append(self)

    def slow():
        time.sleep(0.4)
        return Made()

    with pytest.raises(_NoAnswer):
        _within(slow, 0.05)
    deadline = time.monotonic() + 5
    while not closed and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(closed) == 1
    assert isinstance(_within(Made, 5), Made) and len(closed) == 1
    with pytest.raises(ZeroDivisionError):
        _within(lambda: 1 / 0, 5)


@given(lengths=st.lists(st.integers(0, 40), min_size=1, max_size=5), seed=st.integers(0, 2**16))
@settings(max_examples=80, deadline=None)
def test_balanced_cut_points_deal_every_edge_once(lengths, seed):
    """The cut points of each slice's running cost, for the same k + 1 marks, put every edge
    between exactly two cuts, in slice order; each target's cost is within one edge's cost of
    the mean."""
    from graphops.engine.slices import _cut_points, _joined, _last, _piece

    rng = np.random.default_rng(seed)
    k = len(lengths)
    costs = [rng.integers(1, 50, size=n).astype(np.float64) for n in lengths]
    running = [np.cumsum(c) for c in costs]
    totals = np.array([_last(r) for r in running])
    before = np.concatenate([[0.0], np.cumsum(totals)])
    marks = before[-1] * np.arange(k + 1) / k
    cuts = [_cut_points(r, list(marks - before[s])) for s, r in enumerate(running)]
    ids = [np.arange(n) + 1000 * s for s, n in enumerate(lengths)]  # edge i of slice s named 1000 s + i
    cost_of = dict(zip(np.concatenate(ids).tolist(), np.concatenate(costs).tolist()))
    dealt = []
    for j in range(k):
        pieces = [_piece((ids[s], -ids[s]), ids[s] * 2, cuts[s][j], cuts[s][j + 1])
                  for s in range(k) if cuts[s][j + 1] > cuts[s][j] or s == j]
        (first, second), pos = _joined(*pieces)
        np.testing.assert_array_equal(second, -first)
        np.testing.assert_array_equal(pos, 2 * first)
        dealt.append(first)
        cost = sum(cost_of[e] for e in first.tolist())
        assert abs(cost - before[-1] / k) <= max((c.max() for c in costs if len(c)), default=0.0)
    np.testing.assert_array_equal(np.concatenate(dealt), np.concatenate(ids))  # every edge once, in slice order


def test_balanced_edges_are_the_slices_edges_dealt_by_cost(client, monkeypatch):
    """The edges dealt by cost, in one or several pieces a worker, are the slices' own, each once
    with its position, and jaccard calls on them equal one process."""
    import dask.dataframe as dd

    from graphops.engine import slices
    from graphops_jaccard import dist

    frame = rmat(10, 8, seed=3).edges[["src", "dst"]]
    g = go.Graph.from_edgelist(dd.from_pandas(frame, npartitions=3))
    sl = slices.column_slices(client, g, 2)
    got = client.gather(slices.balanced_edges(sl, dist._cpu_cost))
    made = client.gather([sl.edges, sl.positions])

    def rows(edges, positions):
        first, second = (np.concatenate([e[c] for e in edges]).tolist() for c in (0, 1))
        return sorted(zip(first, second, np.concatenate(positions).tolist()))

    assert rows(*got) == rows(*made)
    assert slices.balanced_edges(sl, dist._cpu_cost)[0][0] is slices.balanced_edges(sl, dist._cpu_cost)[0][0]  # kept
    deg = client.gather(sl.degrees)
    work = [dist._cpu_cost(np, deg[e[0]], deg[e[1]]).sum() for e in got[0]]
    assert max(work) - min(work) <= dist._cpu_cost(np, deg, deg).max()
    pieces = client.gather(slices.balanced_edges(sl, dist._cpu_cost, 3))  # three pieces a worker
    assert len(pieces[0]) == 6 and rows(*pieces) == rows(*made)
    work = [dist._cpu_cost(np, deg[e[0]], deg[e[1]]).sum() for e in pieces[0]]
    assert max(work) - min(work) <= dist._cpu_cost(np, deg, deg).max()
    ref = go.run("jaccard", go.Graph.from_edgelist(frame), backend="cpu")
    for per_worker in (1, 1, 3):  # the second call on the order kept from the first
        monkeypatch.setattr(dist, "PIECES_PER_WORKER", per_worker)
        pd.testing.assert_frame_equal(go.run("jaccard", g, backend="cpu", client=client).compute(), ref)
    assert len(sl.plans) == 2


def test_part_values_that_land_outside_dask_messages_come_back_in_order(client, monkeypatch, tmp_path):
    """The engine's path for values the workers write into the caller's memory (CUDA IPC on GPUs;
    a file here, placed by the real landings' offsets): every part lands, the merge gets each value
    in place, the result is one process's, and the call says how many parts landed."""
    from graphops.engine import cluster, landing
    from tests.clusters import FileStaging

    made = []

    def file_staging(client, nbytes):
        made.append(FileStaging(str(tmp_path / f"s{len(made)}"), nbytes))
        return made[-1]

    monkeypatch.setattr(landing, "staging_for", file_staging)
    monkeypatch.setattr(cluster, "landings", lambda client, merge, parts, host: landing.landings(client, merge, parts,
                                                                                                 False))
    g = rmat(10, 8, seed=7)
    out = go.execute_call("jaccard", g, backend="cpu", client=client)
    assert out.details["landed_parts"] == out.details["parts"] > 1
    pd.testing.assert_frame_equal(out.result, go.run("jaccard", g, backend="cpu"))
    for _ in range(200):  # free for the next call once Dask reports the parts done (their answers were posted)
        if not made[-1].busy:
            break
        time.sleep(0.05)
    assert not made[-1].busy and not made[-1].confirming


class _DeviceLike:
    """A stand-in for a device array: what Landing.receive looks at before it copies."""

    __cuda_array_interface__ = {"shape": (10,), "typestr": "<f8", "data": (0, False), "version": 3}
    dtype = np.dtype("float64")
    nbytes = 80


def test_a_value_lands_only_where_it_can(monkeypatch):
    """A Landing gives the value back as it is when it is not a device array of its dtype and
    size, comes from another machine or from the caller's own process, or when the copy fails
    (here: no CUDA to open the caller's memory with); values bound for the host get no staging."""
    from graphops.engine import landing
    from graphops.engine.landing import Landing, _machine, landings

    value = _DeviceLike()
    other = os.getpid() + 1
    host = np.zeros(10)
    monkeypatch.setattr(landing, "_opened", lambda handle: pytest.fail("a host array was copied"))
    assert Landing(b"h", _machine(), other, 0, 80, "float64").receive(host) is host
    here = _machine()
    for wrong in (Landing(b"h", "elsewhere/1", other, 0, 80, "float64"),
                  Landing(b"h", here, os.getpid(), 0, 80, "float64"),
                  Landing(b"h", here, other, 0, 80, "float32"), Landing(b"h", here, other, 0, 88, "float64")):
        monkeypatch.setattr(landing, "_opened", lambda handle: pytest.fail("a value that cannot land was copied"))
        assert wrong.receive(value) is value
    for error in (ZeroDivisionError, RuntimeError, MemoryError):  # any failure of the copy: sent as before
        opened = []

        def failing(handle, error=error):
            opened.append(handle)
            raise error("no")

        monkeypatch.setattr(landing, "_opened", failing)
        assert Landing(b"h", _machine(), other, 0, 80, "float64").receive(value) is value and opened == [b"h"]

    class Declared:
        landing = (10, "float64")

        @staticmethod
        def lands(select):
            return select[0], select[1] - select[0]

    assert landings(None, Declared(), [], True) == (None, {})


def _fake_cupy(monkeypatch, ipc: bool = True) -> dict:
    """A CuPy with only what the staging arrays use: allocations counted, IPC handles made or not."""
    import contextlib
    import sys
    import types

    state = {"live": set(), "next": 1}

    def malloc(n):
        state["next"] += 1
        state["live"].add(state["next"])
        return state["next"]

    def handle(ptr):
        if not ipc:
            raise RuntimeError("cudaErrorNotSupported")
        return b"handle-%d" % ptr

    runtime = types.SimpleNamespace(getDevice=lambda: 0, malloc=malloc, ipcGetMemHandle=handle,
                                    free=lambda ptr: state["live"].discard(ptr))
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime, Device=lambda d: contextlib.nullcontext()))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    return state


def test_staging_arrays_are_reused_bounded_and_freed(monkeypatch):
    """One staging array a client, reused call after call; a failed call's array stays busy and
    the next call takes another, up to LEFT_MOST; a call whose values could have landed and none
    did frees the idle arrays (the workers asked first to close them) and the client gets none
    again, while one whose values could not land (e.g. top_k's few) changes nothing; closing
    frees the rest; without CUDA IPC nothing is held and nothing asked again."""
    import gc

    from graphops.engine import landing

    monkeypatch.setattr(landing, "_NO_IPC", [])
    state = _fake_cupy(monkeypatch)

    class Client:
        def __init__(self):
            self.closed = []

        def run(self, fn, handles):
            self.closed.extend(handles)

    c = Client()
    first = landing.staging_for(c, 800)
    landing.done(first, 2, c)
    assert landing.staging_for(c, 400) is first  # reused while big enough
    landing.done(first, 0, c, 0)  # nothing could have landed (values of another size): still used
    assert landing.staging_for(c, 800) is first  # and left busy by a failed call
    second = landing.staging_for(c, 800)  # another
    assert second is not first and len(state["live"]) == 2
    assert landing.staging_for(c, 800) is None  # two left busy: no more
    landing.done(second, 0, c, 3)  # could have landed, none did: never again; the idle one freed
    assert c.closed == [second.handle]
    handles = (first.handle, second.handle)
    del second
    gc.collect()
    assert landing.staging_for(c, 800) is None and len(state["live"]) == 1  # the busy one kept
    landing.release(c)  # closing: the rest, once the workers closed them
    del first
    gc.collect()
    assert not state["live"] and sorted(c.closed) == sorted(handles)
    d = Client()
    small = landing.staging_for(d, 100)
    landing.done(small, 1, d)
    bigger = landing.staging_for(d, 1000)  # outgrown: the small one closed on the workers and freed
    assert bigger is not small and d.closed == [small.handle]
    del small, bigger
    landing.release(d)
    gc.collect()
    assert not state["live"]
    state = _fake_cupy(monkeypatch, ipc=False)
    assert landing.staging_for(Client(), 100) is None and not state["live"] and landing._NO_IPC
    assert landing.staging_for(Client(), 100) is None


def test_calls_from_several_threads_on_one_client_never_share_a_staging_array(monkeypatch):
    """Two calls on one client from several threads at once (a Dask client is shared by threads):
    each gets an array of its own or none, never one another call is writing into. The fake
    device compares slowly, so without the pick's lock every thread saw the idle array as free."""
    import threading
    import time

    from graphops.engine import landing

    monkeypatch.setattr(landing, "_NO_IPC", [])
    _fake_cupy(monkeypatch)

    class SlowDevice(int):
        def __eq__(self, other):
            time.sleep(0.02)  # a thread switch between seeing an array free and marking it busy
            return int(self) == int(other)

        __hash__ = int.__hash__

    import sys

    sys.modules["cupy"].cuda.runtime.getDevice = lambda: SlowDevice(0)

    class Client:
        def run(self, fn, handles):
            pass

    c = Client()
    first = landing.staging_for(c, 800)
    landing.done(first, 1, c)  # idle: the one every thread would pick
    got, start = [], threading.Barrier(6)

    def call():
        start.wait()
        got.append(landing.staging_for(c, 800))

    threads = [threading.Thread(target=call) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    taken = [s for s in got if s is not None]
    assert first in taken and len({id(s) for s in taken}) == len(taken) == landing.LEFT_MOST
    assert all(s.busy for s in taken)
    landing.release(c)


@given(marks=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=2, max_size=7),
       costs=st.lists(st.floats(0, 100), max_size=30))
@settings(max_examples=100, deadline=None)
def test_cut_points_never_fall_whatever_the_marks(marks, costs):
    """Cut points start at 0, end at the edge count and never fall, for any marks (NaN, out of
    order, beyond the total): every edge lies between exactly two cuts."""
    from graphops.engine.slices import _cut_points

    running = np.cumsum(np.asarray(costs, dtype=np.float64))
    cuts = _cut_points(running, marks)
    assert cuts[0] == 0 and cuts[-1] == len(running) and len(cuts) == len(marks)
    assert all(a <= b for a, b in zip(cuts, cuts[1:]))


@pytest.mark.parametrize("bad, said", [
    (lambda xp, du, dv: xp.full(len(du), np.nan), "with NaN, inf or negative values"),
    (lambda xp, du, dv: -1.0 * du, "with NaN, inf or negative values"),
    (lambda xp, du, dv: xp.ones(len(du) + 1), "got shape"),
    (lambda xp, du, dv: 1.0, "got shape ()")])
def test_a_bad_cost_function_is_named_not_a_lost_edge(bad, said):
    """balanced_edges' cost comes from a plugin: NaN, negative or misshapen costs are one line naming
    the function, never cut points that drop or repeat edges."""
    from graphops.engine.slices import _running_cost
    from graphops.errors import PluginError

    edges = (np.array([0, 1, 2]), np.array([1, 2, 0]))
    with pytest.raises(PluginError, match="balanced_edges: the cost function") as caught:
        _running_cost(edges, np.array([2, 2, 2]), bad)
    assert said in str(caught.value)
    np.testing.assert_array_equal(_running_cost(edges, np.array([2, 2, 2]), lambda xp, du, dv: du + dv), [4, 8, 12])


@pytest.mark.parametrize("workers, said", [
    ("[1, 2]", "cluster.workers [1, 2]: a sweep, which graphops bench times one size at a time; graphops run takes "
               "one count"),
    ("4096", "cluster.workers 4096: a local cluster starts one process per worker, and this machine has"),
    ("2", None)])
def test_validate_says_what_a_run_here_would_refuse_of_the_cluster(tmp_path, capsys, workers, said):
    """A sweep of worker counts and a local cluster larger than this machine are valid in a file
    (for graphops bench; for a larger machine): validate says so on a line of its own."""
    from graphops.cli.command import main

    (tmp_path / "b.yaml").write_text(SWEEP.replace("workers: [1, 2]", f"workers: {workers}"))
    assert main(["validate", str(tmp_path / "b.yaml")]) == 0
    text = capsys.readouterr().out.replace("\n", " ")
    assert "valid" in text
    assert (said in " ".join(text.split())) if said else ("cluster.workers" not in text)


def _edge_files(width: int) -> st.SearchStrategy:
    """1 to 3 files of 1 to 12 rows of ``width`` fields (ids 0 to 9; '0,1' starts about one row in 100)."""
    return st.lists(st.lists(st.lists(st.integers(0, 9), min_size=width, max_size=width), min_size=1, max_size=12),
                    min_size=1, max_size=3)


@settings(max_examples=80, deadline=None)
@given(files=st.one_of(st.integers(2, 3).flatmap(_edge_files),
                       st.lists(st.lists(st.lists(st.integers(0, 1), min_size=1, max_size=4), min_size=1, max_size=12),
                                min_size=1, max_size=3)),
       header=st.sampled_from([None, "src,dst", "0,1"]), columns=st.sampled_from([None, 2, 3]),
       before=st.sampled_from(["", "\n", "# c\n"]), blocks=st.sampled_from(["default", 16]))
@example(files=[[[k % 10, (k + 1) % 10] for k in range(12)]], header="src,dst", columns=None, before="\n", blocks=16)
@example(files=[[[0, 1]] * 12], header="0,1", columns=None, before="", blocks=16)
@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.rapids)])
def test_partitioned_text_files_are_read_as_written_or_refused(device, files, header, columns, before, blocks):
    """Any text edge files, rows of 1 to 4 fields, a header row or not (one a row can start with:
    '0,1'), lines before it, in blocks of 16 bytes or Dask's own: read with ``src`` and ``dst`` the
    first two fields of every row, in order, or refused in one line naming a file and line; never
    read shifted by a field (pandas takes the first of a field more than the header names as the
    index), cut, or short of a block's first row (taken for a header). By pandas on the CPU, by
    dask-cuDF (cuDF's byte ranges) on the GPU."""
    import tempfile

    from graphops.io import partitioned
    from graphops.io.partitioned import read_edge_files

    names = [f"c{k}" for k in range(columns)] if columns else None
    header = None if names else header
    with tempfile.TemporaryDirectory() as d:
        for k, rows in enumerate(files):
            head = before + header + "\n" if header else ""
            (Path(d) / f"{k:02d}.csv").write_text(head + "".join(",".join(map(str, r)) + "\n" for r in rows))
        width = {len(r) for rows in files for r in rows}
        was, partitioned.BLOCKSIZE = partitioned.BLOCKSIZE, blocks  # (hypothesis: no function-scoped fixture)
        try:
            g = read_edge_files(Path(d) / "*.csv", "csv", columns=names, header=bool(header), device=device)
            got = g.edges.compute()
            got = got.to_pandas() if device == "gpu" else got
        except go.InputError as exc:
            assert re.search(r"\d\d\.csv, line \d+", str(exc)), str(exc)
            assert not _laid_out_alike(width, bool(header), columns), str(exc)  # files laid out alike are read
            return
        finally:
            partitioned.BLOCKSIZE = was
    rows = [r for f in files for r in f]
    assert _laid_out_alike(width, bool(header), columns)
    assert got.iloc[:, 0].tolist() == [r[0] for r in rows]
    assert got.iloc[:, 1].tolist() == [r[1] for r in rows]


def _laid_out_alike(width: set[int], header: bool, columns: int | None) -> bool:
    """Rows of these widths are read: columns= names at most as many fields as every row has;
    else every row has the same fields, 2 or more, and as many as the header row names."""
    if columns:
        return min(width) >= columns
    return len(width) == 1 and min(width) >= 2 and (not header or width == {2})


def test_a_text_id_past_int64_in_a_later_file_is_refused_not_wrapped(client, tmp_path):
    """Dask read an id past 2**63 in a later file (or block) as uint64 and cast it to the first
    block's int64: -9223372036854775808. Each block's ids are checked as read: the line named."""
    from graphops.io.partitioned import read_edge_files

    _refused_on_the_workers(client, tmp_path, "0,1\n1,2\n2,0\n2,3\n", "3,4\n9223372036854775808,1\n",
                            r"b\.csv, line 2, column 1: src id '9223372036854775808' is beyond the 64-bit integer "
                            r"range")
    (tmp_path / "a.csv").write_text("18446744073709551615,1\n1,2\n")  # in Dask's sample: at the read
    with pytest.raises(go.InputError, match=r"a\.csv, line 1, column 1: .* beyond the 64-bit integer range"):
        read_edge_files(tmp_path / "*.csv", "csv")


@pytest.mark.parametrize("head, kw", [
    ("", {}), ("u,v,w\n", {}), ("", {"columns": ["u", "v", "w"], "src": "u", "dst": "v"}),
    ("u,v,w\n", {"src": "v", "dst": "u"}), ("", {"src": 2, "dst": 0})])
def test_a_column_that_is_not_an_id_may_change_type_between_files(client, tmp_path, monkeypatch, head, kw):
    """A third column read as int64 in one file (or block) and float64 in another made Dask fail
    the whole read ('Mismatched dtypes'), though the graph keeps the ids alone: only the ids are
    read. Blocks of 64 bytes; header or not, columns=, ids by name or position, in any order."""
    from graphops.io import partitioned
    from graphops.io.partitioned import read_edge_files

    monkeypatch.setattr(partitioned, "BLOCKSIZE", 64)
    rows = [(i, i + 1, 1 if i < 20 else 1.5) for i in range(40)]
    (tmp_path / "a.csv").write_text(head + "".join(f"{a},{b},{w}\n" for a, b, w in rows[:20]))
    (tmp_path / "b.csv").write_text(head + "".join(f"{a},{b},{w}\n" for a, b, w in rows[20:]))
    g = read_edge_files(tmp_path / "*.csv", "csv", **kw)
    if kw.get("src") == 2:  # src the third column: 1.5 is refused as an id, its line named
        with pytest.raises(go.InputError, match=r"b\.csv, line \d+, column 3: src id '1\.5' is not an integer"):
            go.run("jaccard", g, backend="cpu", client=client)
        with pytest.raises(ValueError, match=r"ids read as float64 in field 3: ids on partitioned edge files"):
            g.edges.compute()
        return
    got = g.edges.compute()
    first, second = (1, 0) if kw.get("src") == "v" else (0, 1)
    assert list(zip(got[g.src], got[g.dst])) == [(r[first], r[second]) for r in rows]
    one = go.Graph.from_edgelist(pd.DataFrame({"src": [r[first] for r in rows], "dst": [r[second] for r in rows]}))
    pd.testing.assert_frame_equal(go.run("jaccard", g, backend="cpu", client=client).compute().reset_index(drop=True),
                                  go.run("jaccard", one, backend="cpu").reset_index(drop=True), check_names=False)


@pytest.mark.rapids
def test_partitioned_text_files_on_gpu_workers_refuse_an_id_past_int64_and_read_pattern_names(tmp_path, monkeypatch):
    """dask-cuDF reads each block with cuDF, which takes an id past 2**63 as uint64 (the graph's
    int64 ids would wrap it to a negative one): each block's ids are checked there too, the line
    named. A file whose name has pattern characters is read (dask-cuDF takes a list's names as
    they are, Dask's sample of the first file as a pattern). Blocks of 64 bytes."""
    import dask_cuda
    from distributed import Client

    from graphops.io import partitioned
    from graphops.io.partitioned import read_edge_files

    monkeypatch.setattr(partitioned, "BLOCKSIZE", 64)
    (tmp_path / "a.csv").write_text("".join(f"{i},{i + 1}\n" for i in range(40)))
    (tmp_path / "b.csv").write_text("3,4\n" * 20 + "9223372036854775808,1\n")
    with dask_cuda.LocalCUDACluster(n_workers=1, dashboard_address=":0") as cl, Client(cl) as c:
        with pytest.raises(go.InputError, match=r"b\.csv, line 21, column 1: src id '9223372036854775808' is beyond "
                                                r"the 64-bit integer range"):
            go.run("jaccard", read_edge_files(tmp_path / "*.csv", "csv", device="gpu"), backend="gpu", client=c)
    (tmp_path / "b.csv").unlink()
    (tmp_path / "[a].csv").write_text("7,8\n8,9\n")
    g = read_edge_files(tmp_path / "[a].csv", "csv", device="gpu")
    assert g.edges.compute().to_pandas().values.tolist() == [[7, 8], [8, 9]]


def test_parquet_edge_files_with_other_id_types_or_columns_are_refused(tmp_path):
    """uint64 ids beside int64 ones were read as float64 under an int64 meta (2**53 + 1 became
    2**53); a file without the id columns failed inside Dask: each is one line naming the file."""
    from graphops.io.partitioned import read_edge_files

    pd.DataFrame({"src": np.array([2**53 + 1, 1], np.int64), "dst": [1, 2]}).to_parquet(tmp_path / "a.parquet")
    pd.DataFrame({"src": np.array([3], np.uint64), "dst": [4]}).to_parquet(tmp_path / "b.parquet")
    with pytest.raises(go.InputError, match=r"b\.parquet: its id columns are 'src' uint64, 'dst' int64; .*a\.parquet's "
                                            r"are 'src' int64, 'dst' int64\. .*write every file's ids with one type"):
        read_edge_files(tmp_path, "parquet")
    pd.DataFrame({"u": [3], "v": [4]}).to_parquet(tmp_path / "b.parquet")
    with pytest.raises(go.InputError, match=r"b\.parquet: has no column\(s\) \['src', 'dst'\] \(its columns: "
                                            r"\['u', 'v'\]\)"):
        read_edge_files(tmp_path, "parquet")
    pd.DataFrame({"src": [3], "dst": [4]}).to_parquet(tmp_path / "b.parquet")
    assert read_edge_files(tmp_path, "parquet").edges.compute()["src"].tolist() == [2**53 + 1, 1, 3]


def test_a_folder_among_the_edge_files_is_named(tmp_path):
    from graphops.io.partitioned import read_edge_files

    (tmp_path / "a.csv").write_text("0,1\n")
    (tmp_path / "b.csv").mkdir()
    (tmp_path / "b.csv" / "x.csv").write_text("3,4\n")
    with pytest.raises(go.InputError, match=r"b\.csv: is a folder, among the edge files of .*; its files would be left "
                                            r"out"):
        read_edge_files(tmp_path / "*.csv", "csv")


@pytest.mark.parametrize("before", ["\n", "# note\n", "\n% note\n\n", "\ufeff# note\n", "\ufeff\n"])
def test_lines_before_the_header_row_lose_no_edge_of_a_later_block(tmp_path, monkeypatch, before):
    """Dask reads each block after a file's first with the header row taken from the first file's
    first line not starting with a comment: after a blank line (or a byte-order mark before a
    comment), that was that line, and each later block's first edge was taken as its header.
    Blocks of 64 bytes here."""
    from graphops.io import partitioned
    from graphops.io.partitioned import read_edge_files

    monkeypatch.setattr(partitioned, "BLOCKSIZE", 64)
    rows = [(i, i + 1) for i in range(60)]
    (tmp_path / "a.csv").write_text(before + "src,dst\n" + "".join(f"{a},{b}\n" for a, b in rows))
    g = read_edge_files(tmp_path / "*.csv", "csv")
    assert g.edges.npartitions > 1
    got = g.edges.compute()
    assert list(zip(got["src"], got["dst"])) == rows


def test_a_header_row_that_a_row_starts_with_loses_no_edge_of_a_later_block(tmp_path, monkeypatch):
    """header=True over a header '0,1' (pandas writes one for an unnamed frame): Dask put no header
    before a later block that starts with '0,1', and that block's first edge was read as its header."""
    from graphops.io import partitioned
    from graphops.io.partitioned import read_edge_files

    monkeypatch.setattr(partitioned, "BLOCKSIZE", 64)
    (tmp_path / "a.csv").write_text("0,1\n" + "0,1\n" * 40)
    g = read_edge_files(tmp_path / "*.csv", "csv", header=True)
    assert g.edges.npartitions > 1 and len(g.edges.compute()) == 40


@pytest.mark.parametrize("first", [True, False])
@pytest.mark.parametrize("line", ["  # note\n", "\f\n", "   \n"])
def test_a_line_pandas_would_take_for_a_row_before_the_edges_is_named(tmp_path, line, first):
    """Blanks, a form feed or an indented comment before a file's first row: pandas took it for the
    header or a row (a raw ParserError or a column named '  '); named, with the fix."""
    from graphops.io.partitioned import read_edge_files

    (tmp_path / "a.csv").write_text((line if first else "") + "src,dst\n0,1\n1,2\n")
    (tmp_path / "b.csv").write_text(("" if first else line) + "src,dst\n2,3\n")
    bad = "a" if first else "b"
    with pytest.raises(go.InputError, match=bad + r"\.csv, line 1: blanks, a form feed, or a comment after blanks "
                                                  r"or not starting with '#' .*before the first edge row; .*empty "
                                                  r"the line"):
        read_edge_files(tmp_path / "*.csv", "csv")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_src_or_dst_column_the_edge_files_lack_is_named(tmp_path, fmt):
    """src='from' on files whose columns are src and dst was a bare KeyError (in a pipeline: "this
    is a bug"); one line naming the columns there are."""
    from graphops.io.partitioned import read_edge_files

    frame = pd.DataFrame({"src": [0, 1], "dst": [1, 2]})
    frame.to_csv(tmp_path / "a.csv", index=False) if fmt == "csv" else frame.to_parquet(tmp_path / "a.parquet")
    with pytest.raises(go.InputError, match=r"src='from': no such column in the edge files of .* \(their columns: "
                                            r"\['src', 'dst'\]\); name one of them, or give a position \(src=0\)"):
        read_edge_files(tmp_path / f"*.{fmt}", fmt, src="from")


@pytest.mark.parametrize("kw, said", [
    ({"header": "yes"}, r"header='yes' is not one of 'auto', True, False"),
    ({"src": True}, r"read_edge_files: src must be a column name \(a str\) or a position"),
    ({"dst": 1.7}, r"read_edge_files: dst must be a column name"),
    ({"columns": ["s", "s"]}, r"read_edge_files: columns must name the leading columns, each once"),
    ({"directed": "no"}, r"read_edge_files: directed must be True, False or None")])
def test_read_edge_files_checks_its_arguments_as_read_graph_does(tmp_path, kw, said):
    """header='yes' read as 'auto', src=True as position 1, dst=1.7 as 1, columns=['s', 's'] a raw
    pandas ValueError: each is now refused as read_graph refuses it."""
    from graphops.errors import GraphopsError
    from graphops.io.partitioned import read_edge_files

    (tmp_path / "a.csv").write_text("0,1\n1,2\n")
    with pytest.raises(GraphopsError, match=said):
        read_edge_files(tmp_path / "*.csv", "csv", **kw)


def test_partitioned_reads_refuse_what_one_file_refuses(tmp_path):
    """A header naming a column twice (read as src and src.1), columns=/header= on parquet files
    (ignored), float or decimal ids in parquet (truncated later, or a raw pyarrow error): one line
    each. A file whose own name has pattern characters is read as that file."""
    import decimal

    from graphops.io.partitioned import read_edge_files

    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.csv").write_text("src,src\n0,1\n1,2\n")
    with pytest.raises(go.InputError, match=r"a\.csv, line 1, column 2: the header names column 'src' twice"):
        read_edge_files(tmp_path / "t" / "*.csv", "csv")
    (tmp_path / "p").mkdir()
    pd.DataFrame({"src": [0, 1], "dst": [1, 2]}).to_parquet(tmp_path / "p" / "a.parquet")
    with pytest.raises(go.InputError, match=r"columns= applies to text edge files; parquet files name their columns"):
        read_edge_files(tmp_path / "p", "parquet", columns=["dst", "src"])
    with pytest.raises(go.InputError, match=r"header= applies to text edge files"):
        read_edge_files(tmp_path / "p", "parquet", header=True)
    pd.DataFrame({"src": [0.0, 4.5], "dst": [1, 2]}).to_parquet(tmp_path / "p" / "a.parquet")
    with pytest.raises(go.InputError, match=r"a\.parquet: column 'src' holds double; ids on partitioned edge files "
                                            r"are integers"):
        read_edge_files(tmp_path / "p", "parquet")
    pd.DataFrame({"src": [decimal.Decimal(1)], "dst": [2]}).to_parquet(tmp_path / "p" / "a.parquet")
    with pytest.raises(go.InputError, match=r"column 'src' holds decimal"):
        read_edge_files(tmp_path / "p", "parquet")
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "[a].csv").write_text("0,1\n1,2\n")
    assert len(read_edge_files(tmp_path / "g" / "[a].csv", "csv").edges.compute()) == 2
    pd.DataFrame({"src": [0, 1, 2], "dst": [1, 2, 0]}).to_parquet(tmp_path / "g" / "[b].parquet")
    assert len(read_edge_files(tmp_path / "g" / "[b].parquet", "parquet").edges.compute()) == 3


@pytest.mark.parametrize("first, second", [("0,1\n1,2\n", "% note\n3,4\n"), ("# a\n0,1\n", "3,4 % note\n4,5\n")])
def test_a_later_file_with_another_comment_character_is_named(client, tmp_path, first, second):
    """The workers read every file with the first file's comment character: a later file using the
    other one cannot be read there; its file and line are named (it was Dask's dtype table)."""
    _refused_on_the_workers(client, tmp_path, first, second,
                            r"b\.csv, line 1: ('%' starts a comment, but the edge files are read with '#' comments "
                            r"\(the first file's\)|.*not starting with '#' \(the files' comment character\), "
                            r"before the first edge row)")


@pytest.mark.parametrize("bad", ["1.0", "1e3", "9007199254740993.0", "True"])
def test_float_or_boolean_text_ids_in_a_later_file_are_refused(client, tmp_path, bad):
    """Ids pandas would take as whole floats or booleans (1.0 as 1, 9007199254740993.0 rounded to
    2**53): refused with the line, as for one file, never read as integers."""
    _refused_on_the_workers(client, tmp_path, "0,1\n1,2\n", f"{bad},3\n",
                            r"b\.csv, line 1, column 1: src id .* is not an integer")


@pytest.mark.parametrize("head", ["src, dst", "src,dst # ids"])
def test_header_names_with_blanks_or_a_comment_are_read_as_one_file_reads_them(client, tmp_path, head):
    """A header 'src, dst' names the columns src and dst, as for one file (pandas keeps ' dst'); an
    id past 2**63 under it, in a later file, is refused (it was cast to a negative id)."""
    from graphops.io.partitioned import read_edge_files

    (tmp_path / "a.csv").write_text(f"{head}\n0,1\n1,2\n")
    (tmp_path / "b.csv").write_text(f"{head}\n2,3\n")
    g = read_edge_files(tmp_path / "*.csv", "csv", src="src", dst="dst")
    assert g.edges.compute()["dst"].tolist() == [1, 2, 3]
    (tmp_path / "b.csv").write_text(f"{head}\n2,9223372036854775808\n")
    with pytest.raises(go.InputError, match=r"b\.csv, line 2, column 2( \('dst ?'\))?: dst id '9223372036854775808' "
                                            r"is beyond"):
        go.run("jaccard", read_edge_files(tmp_path / "*.csv", "csv"), backend="cpu", client=client)


def test_parquet_ids_of_widths_read_together_are_accepted(tmp_path):
    """int32 ids beside int64 ones are read as int64 without a change: accepted (uint64 beside
    int64 is refused above)."""
    from graphops.io.partitioned import read_edge_files

    wide = pd.DataFrame({"src": np.array([0, 1], np.int64), "dst": np.array([1, 2], np.int64)})
    wide.to_parquet(tmp_path / "a.parquet")
    pd.DataFrame({"src": np.array([3], np.int32), "dst": np.array([4], np.int32)}).to_parquet(tmp_path / "b.parquet")
    got = read_edge_files(tmp_path, "parquet").edges.compute()
    assert got["src"].tolist() == [0, 1, 3] and got["dst"].tolist() == [1, 2, 4]


def test_columns_read_the_leading_fields_of_wider_rows(tmp_path):
    """columns=['s', 'd'] on rows of 3 fields: the first two, as for one file (pandas took the
    first field as the index and read fields 2 and 3); with a header naming 2 of 3 fields, refused."""
    from graphops.io.partitioned import read_edge_files

    (tmp_path / "a.csv").write_text("0,1,9\n1,2,9\n")
    got = read_edge_files(tmp_path / "*.csv", "csv", columns=["s", "d"]).edges.compute()
    assert got["s"].tolist() == [0, 1] and got["d"].tolist() == [1, 2]
    (tmp_path / "a.csv").write_text("src,dst\n0,1,9\n1,2,9\n")
    with pytest.raises(go.InputError, match=r"a\.csv, line 2: 3 fields, expected 2"):
        read_edge_files(tmp_path / "*.csv", "csv")


@pytest.mark.parametrize("bad", ["1_000", "１２"])
def test_text_ids_python_would_read_as_integers_are_refused(client, tmp_path, bad):
    """Dask casts a later block's text ids with int(), which takes '1_000' and full-width digits:
    refused with the line, as one file refuses them."""
    _refused_on_the_workers(client, tmp_path, "1,2\n3,4\n2,3\n", f"{bad},2\n{bad},3\n",
                            r"b\.csv, line 1, column 1: src id .* is not an integer")


def test_the_big_graph_example_says_what_it_needs_where_it_cannot_run():
    """Without the GPU packages the example exits with one line naming the install, not an
    ImportError's traceback; its help gives every option's range and default."""
    import importlib.util
    import subprocess
    import sys

    example = Path(__file__).resolve().parents[1] / "examples" / "big_graph_on_workers.py"
    helped = subprocess.run([sys.executable, str(example), "--help"], capture_output=True, text=True, timeout=120)
    assert helped.returncode == 0 and helped.stdout.count("(default:") == 3, helped.stdout
    if all(importlib.util.find_spec(m) for m in ("cudf", "dask_cuda", "pylibraft")):
        pytest.skip("the GPU packages are installed here")
    ran = subprocess.run([sys.executable, str(example), "--scale", "8"], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 2 and "Traceback" not in ran.stderr, ran.stderr
    assert "needs a CUDA host with pip install 'graphops[gpu,dask]'" in ran.stderr
    assert ran.stderr.strip().count("\n") == 0
