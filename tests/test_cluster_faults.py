"""Faults of a call on a Dask cluster, each said in one line with its fix: a part out of memory on
its worker (DeviceMemoryError, raised there and sent back), a worker lost for good (Dask gave up
on a task: ClusterWorkerLostError); a worker lost once changes nothing."""
from __future__ import annotations

import os
import pickle
import re
import time

import numpy as np
import pandas as pd
import pytest

import graphops as go
from graphops.engine.faults import describe_part, is_out_of_memory, memory_error, reported_memory, worker_lost
from graphops.errors import ClusterWorkerLostError, DeviceMemoryError
from graphops.plugin import Params

distributed = pytest.importorskip("distributed")

WORKER = "tcp://10.0.0.7:40123"
RMM_TEXT = ("std::bad_alloc: out_of_memory: CUDA error at: /opt/rmm/include/rmm/mr/device/cuda_memory_resource.hpp:60:"
            " cudaErrorMemoryAllocation out of memory")


class OutOfMemoryError(MemoryError):
    """CuPy's ``cupy.cuda.memory.OutOfMemoryError``, as CuPy words it (and as unpicklable: its
    ``__init__`` wants the sizes, its ``args`` hold the text)."""

    def __init__(self, size: int, total: int, limit: int = 0):
        super().__init__(f"Out of memory allocating {size:,} bytes (allocated so far: {total:,} bytes).")


def _fault(kind: str) -> Exception:
    return {"cupy": lambda: OutOfMemoryError(2**30, 4096), "rmm": lambda: MemoryError(RMM_TEXT),
            "plain": MemoryError}[kind]()


def test_the_three_out_of_memory_messages_in_one_line():
    """CuPy's text (the bytes asked for), RMM's std::bad_alloc (GPU, no size), a plain MemoryError."""
    got = memory_error(_fault("cupy"), "jaccard", "pairs 1,000,000:2,000,000", WORKER)
    assert str(got) == (
        "jaccard ran out of GPU memory on Dask worker tcp://10.0.0.7:40123 computing pairs 1,000,000:2,000,000 "
        "(OutOfMemoryError, asked for 1,073,741,824 bytes (1.00 GiB)). Give the call more workers, which cuts it "
        "into smaller parts (a pipeline's cluster: {workers: N}, or a cluster with more GPUs: local-cuda starts one "
        "worker per GPU), or workers with more memory")
    assert (got.algorithm, got.part, got.worker, got.requested) == ("jaccard", "pairs 1,000,000:2,000,000", WORKER,
                                                                   2**30)
    rmm = memory_error(_fault("rmm"), "mg_kernel", "Gram rows 0:250", WORKER)
    assert str(rmm).startswith("mg_kernel ran out of GPU memory on Dask worker tcp://10.0.0.7:40123 computing "
                               "Gram rows 0:250 (MemoryError std::bad_alloc). Give the call more workers")
    assert rmm.requested is None and "asked for" not in str(rmm)
    plain = memory_error(MemoryError(), "sp_kernel", "Gram columns 8:16", WORKER)
    assert str(plain).startswith("sp_kernel ran out of memory on Dask worker tcp://10.0.0.7:40123 computing "
                                 "Gram columns 8:16 (MemoryError). Give")
    numpy = memory_error(MemoryError("Unable to allocate 7.45 GiB for an array with shape (1000000000,) and data "
                                     "type float64"), "jaccard", "part 0:5", WORKER)
    assert "ran out of memory" in str(numpy) and "(MemoryError, asked for 7.45 GiB)" in str(numpy)
    for err in (got, rmm, plain, numpy):
        assert "\n" not in str(err) and isinstance(err, MemoryError)


def test_what_counts_as_out_of_memory():
    assert is_out_of_memory(_fault("cupy")) and is_out_of_memory(MemoryError())
    assert is_out_of_memory(RuntimeError("cudaErrorMemoryAllocation: out of memory"))  # CuPy's runtime calls
    assert is_out_of_memory(RuntimeError("[2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY"))  # Numba
    assert not is_out_of_memory(RuntimeError("CUDA error: an illegal memory access was encountered"))
    assert not is_out_of_memory(ValueError("bad value")) and not is_out_of_memory(KeyboardInterrupt())
    with pytest.raises(ValueError, match="bad value"), reported_memory("jaccard", "part 0:1", WORKER):
        raise ValueError("bad value")  # anything else passes unchanged


def test_parts_are_named_for_people():
    from graphops.host.registry import get_registry

    jaccard = get_registry().algorithm("jaccard")
    assert describe_part((1_000_000, 2_000_000), jaccard) == "pairs 1,000,000:2,000,000"
    assert describe_part(("rows", "train", ((0, 250),))) == "Gram rows 0:250"
    assert describe_part(("cols", "train", ((16, 32), (96, 128)))) == "Gram columns 16:32, 96:128"
    dealt = tuple((a, a + 32) for a in range(0, 6400, 128))
    assert describe_part(("cols", "train", dealt)) == "Gram columns 0:32, 128:160, ... (50 ranges, 1,600 graphs)"
    assert describe_part(("diagonal", "graphs", ((0, 10),))) == "Gram diagonal of 'graphs' 0:10"
    assert describe_part((0, 5)) == "part 0:5"
    assert describe_part({"block": 3}) == "part {'block': 3}"


def test_the_errors_survive_pickling():
    """Dask sends a worker's error back pickled: message and attributes arrive."""
    err = memory_error(_fault("cupy"), "jaccard", "pairs 0:10", WORKER)
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is DeviceMemoryError and str(back) == str(err)
    assert (back.algorithm, back.part, back.worker, back.requested) == ("jaccard", "pairs 0:10", WORKER, 2**30)
    lost = ClusterWorkerLostError("gone", task="_run_part-1", worker=WORKER)
    again = pickle.loads(pickle.dumps(lost))
    assert type(again) is ClusterWorkerLostError and str(again) == "gone" and again.worker == WORKER
    with pytest.raises(TypeError):  # why the worker must not send CuPy's own
        pickle.loads(pickle.dumps(_fault("cupy")))


def test_a_killed_worker_in_one_line():
    from distributed.scheduler import KilledWorker

    class Last:
        address = WORKER

    err = worker_lost(KilledWorker("_run_part-abc", Last(), 0), "jaccard on 2 Dask worker(s)")
    assert str(err).startswith("jaccard on 2 Dask worker(s) failed: Dask gave up on task '_run_part-abc' after the 1 "
                               "worker(s) that ran it died (the last: tcp://10.0.0.7:40123). A task that kills")
    assert "{workers: N}" in str(err) and "allowed-failures" in str(err) and "\n" not in str(err)
    assert (err.task, err.worker) == ("_run_part-abc", WORKER)
    assert worker_lost(ValueError("x"), "jaccard") is None


def test_a_task_dask_dropped_in_one_line():
    """Dask cancels a task on its own when what it needs is gone with every worker that held it
    ("already forgotten"): one line, saying whether any worker is left, and the fix."""
    from distributed.client import FutureCancelledError

    from graphops.engine.faults import dropped_by_dask

    forgot = FutureCancelledError("_run_part-abc", "already forgotten")
    gone = dropped_by_dask(forgot, "mg_kernel on 2 Dask worker(s)", lambda: 0)
    assert str(gone).startswith("mg_kernel on 2 Dask worker(s) failed: Dask dropped task '_run_part-abc' (already "
                                "forgotten): every worker of the Dask cluster died while it ran")
    left = dropped_by_dask(FutureCancelledError("k", None), "jaccard", lambda: 3)
    assert "(unknown)" in str(left) and "the workers that held its inputs died" in str(left)
    assert "\n" not in str(gone) + str(left) and gone.task == "_run_part-abc"

    def not_asked() -> int:
        raise AssertionError("the scheduler is asked only for a task Dask dropped")

    assert dropped_by_dask(ValueError("x"), "jaccard", not_asked) is None


# A test algorithm cut into two parts (0:5 and 5:10); its part 5:10 fails as asked on the worker.
class FaultParams(Params):
    fault: str = "cupy"


def _two_parts(inputs, params, workers):
    from graphops.plugin import Part, Split

    data = params.fault == "exit-data"  # parts with data of their own (sent to one worker each)
    return Split([Part((0, 5), data=np.arange(5) if data else None), Part((5, 10), data=np.arange(5) if data else None)],
                 _part, lambda values: np.concatenate(values), keep_with=inputs["graph"])


def _part(algorithm, inputs, params, backend, select, data=None):
    if params.fault in ("exit", "exit-data"):
        os._exit(1)  # the part kills its worker process
    if select == (5, 10):
        raise _fault(params.fault)
    return np.zeros(1)


def _local(csr, params):
    return np.zeros(2)


def _fault_registry():
    from graphops.host.manager import make_plugin_manager
    from graphops.host.registry import Registry
    from graphops.plugin import Algorithm, hookimpl

    class Plugin:
        @staticmethod
        @hookimpl
        def graphops_register_algorithms():
            return [Algorithm(name="faulty", params=FaultParams, inputs=("graph",), result="array",
                              split="tests.test_cluster_faults:_two_parts",
                              backends={"cpu": "tests.test_cluster_faults:_local"})]

    pm = make_plugin_manager(autoload=False, plugins=[])
    pm.register(Plugin(), name="faulty")
    return Registry(pm)



@pytest.mark.parametrize("fault, said", [("cupy", "GPU memory .* asked for 1,073,741,824 bytes"),
                                         ("rmm", "GPU memory .*std::bad_alloc"),
                                         ("plain", r"ran out of memory .*\(MemoryError\)")])
def test_a_part_out_of_memory_on_a_worker_says_which_where_and_the_fix(client, fault, said):
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [0, 1, 2], "dst": [1, 2, 0]}))
    with pytest.raises(DeviceMemoryError) as caught:
        go.run("faulty", g, backend="cpu", client=client, registry=_fault_registry(), fault=fault)
    text = str(caught.value)
    assert "\n" not in text and re.search(said, text), text
    where = re.search(r"^faulty ran out of .*on Dask worker (tcp://\S+) computing part 5:10 \(", text)
    assert where and where.group(1) in client.scheduler_info()["workers"], text
    assert caught.value.worker == where.group(1) and "0:5" not in text
    assert "Give the call more workers, which cuts it into smaller parts" in text and "{workers: N}" in text


def _cupy_oom():
    raise OutOfMemoryError(3 * 2**20, 0)


def test_a_distributed_task_out_of_memory_names_its_task_and_worker(client):
    """A Distributed split's tasks (submitted through stoppable): the part is the task's key."""
    from graphops.engine.parts import stoppable

    fut = client.submit(stoppable, "graphops-stop-faults", _cupy_oom, key="stoppable-faulty-7", pure=False)
    with pytest.raises(DeviceMemoryError) as caught:
        fut.result()
    text = str(caught.value)
    assert re.fullmatch(r"(tests\.)?test_cluster_faults\._cupy_oom ran out of GPU memory on Dask worker (tcp://\S+) "
                        r"computing task 'stoppable-faulty-7' \(_cupy_oom\) \(OutOfMemoryError, asked for 3,145,728 "
                        r"bytes \(3\.00 MiB\)\)\. Give the call more workers.*", text), text
    assert caught.value.worker in client.scheduler_info()["workers"]


# distributed leaves a socket of the killed worker's connection to be collected: its affair
@pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_part_that_kills_its_worker_fails_in_one_line():
    """With no retries allowed, the first worker a part kills ends the call: the lost worker, the
    task and the fix, raised on the client."""
    import dask

    g = go.Graph.from_edgelist(pd.DataFrame({"src": [0, 1], "dst": [1, 2]}))
    t0 = time.perf_counter()
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0",
                                     env={"CUDA_VISIBLE_DEVICES": ""}) as cl, distributed.Client(cl) as c:
        (victim,) = c.scheduler_info()["workers"]
        with pytest.raises(ClusterWorkerLostError) as caught:
            go.run("faulty", g, backend="cpu", client=c, registry=_fault_registry(), fault="exit")
    text = str(caught.value)
    assert "\n" not in text and text.startswith("faulty on 1 Dask worker(s) failed: Dask gave up on task '_run_part-")
    assert f"after the 1 worker(s) that ran it died (the last: {victim})" in text and "{workers: N}" in text
    assert caught.value.worker == victim and str(caught.value.task).startswith("_run_part-")
    assert time.perf_counter() - t0 < 30


# distributed leaves a socket of the killed worker's connection to be collected: its affair
@pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning")
def test_parts_whose_data_dies_with_their_workers_twice_fail_in_one_line():
    """Parts with data of their own on one worker each: when they kill their workers, the data
    is lost and Dask cancels them (no retries of its own to count); the call sends the data again
    and runs once more, and when that dies too, one line names the workers and the fix."""
    g = go.Graph.from_edgelist(pd.DataFrame({"src": [0, 1], "dst": [1, 2]}))
    t0 = time.perf_counter()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  env={"CUDA_VISIBLE_DEVICES": ""}) as cl, distributed.Client(cl) as c:
        with pytest.raises(ClusterWorkerLostError) as caught:
            go.run("faulty", g, backend="cpu", client=c, registry=_fault_registry(), fault="exit-data")
    text = str(caught.value)
    assert "\n" not in text and text.startswith("faulty on 2 Dask worker(s) failed: the workers holding its parts' "
                                                "data died twice (the last: "), text
    assert "{workers: N}" in text and time.perf_counter() - t0 < 60


class _DieOnce(distributed.WorkerPlugin):
    """The first worker to start a part of a call (a task ``_run_part-...``) dies there, once: it
    writes its address to ``marker`` and exits."""

    def __init__(self, marker: str):
        self.marker, self.address = marker, None

    def setup(self, worker):
        self.address = worker.address

    def transition(self, key, start, finish, **kwargs):
        if finish != "executing" or not str(key).startswith("_run_part"):
            return
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return
        os.write(fd, self.address.encode())
        os.close(fd)
        os._exit(1)


@pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_worker_lost_during_jaccard_on_a_graph_changes_nothing(tmp_path):
    """jaccard on a plain Graph: a worker dies as it starts a part; Dask runs that part (and the
    others it was given) elsewhere, and the result is one process's, bit for bit."""
    rng = np.random.default_rng(7)
    g = go.Graph.from_edgelist(pd.DataFrame({"src": rng.integers(0, 400, 3000), "dst": rng.integers(0, 400, 3000)}))
    ref = go.run("jaccard", g, backend="cpu")
    marker = tmp_path / "victim"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  env={"CUDA_VISIBLE_DEVICES": ""}) as cl, distributed.Client(cl) as c:
        c.register_plugin(_DieOnce(str(marker)))
        out = go.execute_call("jaccard", g, backend="cpu", client=c)
        victim = marker.read_text()  # a worker did die, running a part of this call
        deadline = time.perf_counter() + 30
        while victim in c.scheduler_info()["workers"] and time.perf_counter() < deadline:
            time.sleep(0.1)
        assert victim not in c.scheduler_info()["workers"]
    assert victim not in out.details["workers"]  # its part ran elsewhere
    assert sum(w["tasks"] for w in out.details["workers"].values()) == out.details["parts"]
    pd.testing.assert_frame_equal(out.result, ref)


class _DyingClient:
    """A client whose worker ``gone`` dies between the listing of the workers and the scatter."""

    id = "fake"

    def __init__(self, gone: str | None, always: bool = False):
        self.gone, self.always, self.workers = gone, always, ["w0", "w1"]

    def scheduler_info(self, n_workers=-1):
        return {"workers": dict.fromkeys(self.workers)}

    def scatter(self, data, workers, hash):
        if self.always:  # every worker chosen dies (the nannies start new ones under the same names)
            raise KeyError(workers[0])
        if workers[0] == self.gone:
            self.workers = [w for w in self.workers if w != self.gone]
            raise KeyError(self.gone)  # what the scheduler raises for a worker it no longer has

        class Done:
            status = "finished"

        return [Done() for _ in data]


def test_a_worker_dying_while_part_data_is_sent_is_replaced_or_named():
    """Part data goes to the other workers when one dies during the scatter; when the chosen
    workers keep dying, one line names the last and the fix."""
    from graphops.engine.placing import place_data
    from graphops.engine.parts import Part, Split

    class Keep:  # the split's keep_with (weak-referenceable)
        pass

    keep = Keep()
    split = Split([Part((0, 1), 2.0, data=np.zeros(3)), Part((1, 2), 1.0, data=np.zeros(3))], None, None,
                  keep_with=keep)
    placed = place_data(_DyingClient("w0"), split, {"to_workers": 0})
    assert sorted(placed) == [0, 1] and {where for _, where in placed.values()} == {"w1"}
    with pytest.raises(ClusterWorkerLostError, match=r"died 3 times while it was being sent \(the last: w[01]\); check the workers' logs"):
        place_data(_DyingClient("w0", always=True), Split(split.parts, None, None, keep_with=Keep()),
                   {"to_workers": 0})


def _die_on(handler: str, dask_worker=None) -> None:
    """This worker exits when next asked ``handler``: ``update_data`` is a scatter reaching it,
    ``gather`` the scheduler copying a broadcast value to it (``scatter(broadcast=True)``)."""

    def die(*args, **kwargs):
        os._exit(1)

    dask_worker.handlers[handler] = die


@pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning")
def test_an_input_sent_to_every_worker_as_one_dies_receiving_it_does_not_hang():
    """An input goes to every worker; one dies as its copy arrives (and any copy made from worker to
    worker kills the worker asked, which is how Dask's own broadcast reaches them: its scheduler then
    retried the dead one for ever, and the call hung). The send returns the input's future from the
    two that have it, counts their bytes, and every worker, the dead one's replacement too, computes
    with it."""
    import threading

    from graphops.engine.placing import running, send

    obj = np.arange(10_000)
    with distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  env={"CUDA_VISIBLE_DEVICES": ""}) as cl, distributed.Client(cl) as c:
        workers = sorted(c.scheduler_info()["workers"])
        c.run(_die_on, "gather", workers=workers)
        c.run(_die_on, "update_data", workers=workers[:1])
        moved, sent = {"to_workers": 0}, []
        thread = threading.Thread(target=lambda: sent.append(send(c, {"x": obj}, moved)), daemon=True)
        thread.start()
        thread.join(60)
        assert sent, "sending one input to 3 workers, one of which died, did not end in 60 s"
        assert moved["to_workers"] == 2 * obj.nbytes
        c.wait_for_workers(3, timeout=30)
        deadline = time.perf_counter() + 30
        while workers[0] in c.scheduler_info()["workers"] and time.perf_counter() < deadline:
            time.sleep(0.1)
        live = running(c)
        assert workers[0] not in live and len(live) == 3
        sums = [c.submit(np.sum, sent[0]["x"], workers=[w], allow_other_workers=False, pure=False) for w in live]
        assert c.gather(sums) == [obj.sum()] * 3


class _UnreachableClient:
    """Every worker's copy of a broadcast input fails: gone (KeyError) or its connection closed."""

    id = "unreachable"

    def scheduler_info(self, n_workers=-1):
        return {"workers": {"tcp://w0:1": {"status": "running"}, "tcp://w1:1": {"status": "running"},
                            "tcp://w2:1": {"status": "paused"}}}

    async def scatter(self, data, workers, hash, timeout, asynchronous):
        if workers == ["tcp://w2:1"]:
            raise AssertionError("a paused worker is not sent to")
        raise KeyError(workers[0]) if workers == ["tcp://w0:1"] else OSError("Stream is closed")

    def sync(self, func, *args):
        import asyncio

        return asyncio.run(func(*args))

    def run_on_scheduler(self, func):
        return "kept"


def test_an_input_no_worker_takes_fails_in_one_line():
    from graphops.engine.placing import PLACING_TRIES, send

    with pytest.raises(ClusterWorkerLostError) as err:
        send(_UnreachableClient(), {"x": np.zeros(3)})
    said = str(err.value)
    assert said.startswith(f"an input could not be sent to any Dask worker, {PLACING_TRIES} times (the last: "
                           "tcp://w0:1 (KeyError: 'tcp://w0:1'); tcp://w1:1 (OSError: Stream is closed)); check the")
    assert "\n" not in said and err.value.worker == "tcp://w1:1"


class _SilentClient(_UnreachableClient):
    """One worker takes its copy, one never answers (stopped, not yet dead), one is gone."""

    async def scatter(self, data, workers, hash, timeout, asynchronous):
        import asyncio

        if workers == ["tcp://w1:1"]:
            await asyncio.sleep(3600)
        if workers == ["tcp://w2:1"]:
            raise KeyError(workers[0])

        class Done:
            status = "finished"

        return {k: Done() for k in data}

    def scheduler_info(self, n_workers=-1):
        return {"workers": {f"tcp://w{k}:1": {"status": "running"} for k in range(3)}}


def test_a_worker_that_never_takes_its_copy_is_skipped_after_the_deadline(monkeypatch):
    """A worker stopped but not yet removed by the scheduler took the send with it for as long as
    it stayed (for ever without a worker TTL): its copy has a deadline, then it is skipped."""
    from graphops.engine import placing

    monkeypatch.setattr(placing, "SEND_DEADLINE", 0.2)
    moved = {"to_workers": 0}
    t0 = time.perf_counter()
    sent = placing.send(_SilentClient(), {"x": np.zeros(8)}, moved)
    assert time.perf_counter() - t0 < 5 and sent["x"].status == "finished"
    assert moved["to_workers"] == 64  # one worker reached
    assert placing.send_deadline(10**9) == pytest.approx(0.2 + 10.0)


def test_workers_that_are_all_paused_are_said_to_be(monkeypatch):
    from graphops.engine import placing

    class Paused(_UnreachableClient):
        def scheduler_info(self, n_workers=-1):
            return {"workers": {"tcp://w0:1": {"status": "paused"}, "tcp://w1:1": {"status": "paused"}}}

        def wait_for_workers(self, n, timeout):
            raise TimeoutError

    with pytest.raises(go.InputError, match=r"none of the Dask cluster's 2 worker\(s\) took work within 30 s: all are "
                                            r"paused .*free their memory"):
        placing.send(Paused(), {"x": np.zeros(3)})


def _dies_on(address, dask_worker=None):
    if dask_worker.address == address:
        os._exit(1)
    return dask_worker.address


def test_a_worker_dying_while_every_worker_is_asked_something_is_left_out():
    """What a call asks of every worker (their devices, their free memory for a Dask edge frame's
    slices) is the answers of the workers alive: one that dies meanwhile was a CommClosedError
    out of the call (seen killing a worker as jaccard built a frame's slices)."""
    from graphops.engine.placing import answers

    with distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  env={"CUDA_VISIBLE_DEVICES": ""}) as cl, distributed.Client(cl) as c:
        c.wait_for_workers(3)
        workers = sorted(c.scheduler_info()["workers"])
        got = answers(c, _dies_on, workers[0])
        assert sorted(got) == workers[1:] and all(got[a] == a for a in got)
        with pytest.raises(Exception):  # what Dask's own run does
            c.run(_dies_on, workers[1])
        with pytest.raises(ZeroDivisionError):  # the function's own error is not a lost worker
            answers(c, _divides, 0)


def _divides(by):
    return 1 / by
