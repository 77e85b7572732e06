"""Peak device memory per Dask worker (graphops.engine.devmem), on a one-worker CPU LocalCluster:
CPU workers report None; the GPU path's logic (start, samples, stop, the maximum) runs with a fake
reader put in place of ``device_bytes_in_use`` on the worker."""
from __future__ import annotations

import re
import subprocess
import sys
import threading
import time

import pytest

from graphops.engine import devmem
from graphops.engine.devmem import peak_device_memory

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    """One CPU worker process, no GPU visible to it (also on a GPU host)."""
    from tests.clusters import cpu_client

    yield from cpu_client(1)


class _FakeReader:
    """Returns ``readings`` one per call, then 0; counts its calls."""

    def __init__(self, readings: list[int]) -> None:
        self.readings, self.calls = list(readings), 0

    def __call__(self, device):
        self.calls += 1
        return self.readings.pop(0) if self.readings else 0


_REAL: dict = {}  # on the worker: the real reader while a fake stands in


def _use_fake_reader(readings: list[int]) -> None:  # on a worker
    _REAL.setdefault("reader", devmem.device_bytes_in_use)
    devmem.device_bytes_in_use = _FakeReader(readings)


def _fake_calls() -> int:  # on a worker
    return devmem.device_bytes_in_use.calls


def _use_real_reader() -> None:  # on a worker
    if "reader" in _REAL:
        devmem.device_bytes_in_use = _REAL.pop("reader")


def _samplers() -> list[tuple[bool, bool]]:  # on a worker: (alive, daemon) of each sampler thread
    return [(t.is_alive(), t.daemon) for t in threading.enumerate() if t.name == devmem.THREAD_NAME]


@pytest.fixture
def fake_reader(client):
    """``fake_reader(readings)`` puts a fake reader on the worker; the real one comes back after."""
    yield lambda readings: client.run(_use_fake_reader, readings)
    client.run(_use_real_reader)


def _only(values: dict):
    assert len(values) == 1
    return next(iter(values.values()))


def _wait_for_calls(client, n: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while _only(client.run(_fake_calls)) < n:
        assert time.monotonic() < deadline, "the sampler stopped reading"
        time.sleep(0.01)


def test_cpu_workers_have_no_peak(client):
    with peak_device_memory(client) as peaks:
        assert peaks == {}  # filled on exit
        assert _only(client.run(_samplers)) == [(True, True)]  # one sampler, a daemon thread
    assert set(peaks) == set(client.scheduler_info()["workers"])
    assert list(peaks.values()) == [None]
    assert _only(client.run(_samplers)) == []  # stopped and joined


def test_the_peak_is_the_highest_reading(client, fake_reader):
    readings = [3 << 30, 50 << 30, 7 << 30, 20 << 30, 4 << 30]
    fake_reader(readings)
    with peak_device_memory(client, interval=0.001) as peaks:
        _wait_for_calls(client, len(readings) + 1)  # all of them, and one more (0) after
    assert _only(peaks) == 50 << 30


@pytest.mark.parametrize("readings", [[9, 2], [2, 9]])
def test_a_short_block_gets_the_readings_at_start_and_stop(client, fake_reader, readings):
    fake_reader(readings)
    t0 = time.perf_counter()
    with peak_device_memory(client, interval=30) as peaks:
        pass
    assert time.perf_counter() - t0 < 10  # stop wakes the sampler; it does not sleep out its interval
    assert _only(peaks) == 9
    assert _only(client.run(_fake_calls)) == 2  # no sample in between: start, stop


def test_a_second_block_starts_afresh(client, fake_reader):
    fake_reader([5 << 20])
    with peak_device_memory(client, interval=30) as first:
        pass
    fake_reader([3 << 20])
    with peak_device_memory(client, interval=30) as second:
        pass
    assert (_only(first), _only(second)) == (5 << 20, 3 << 20)


def test_a_block_that_raises_still_stops_the_samplers(client, fake_reader):
    fake_reader([7])
    with pytest.raises(KeyError), peak_device_memory(client, interval=30) as peaks:
        raise KeyError("inside")
    assert _only(peaks) == 7
    assert _only(client.run(_samplers)) == []


def test_start_twice_keeps_one_sampler_and_stop_without_start_is_none(client):
    assert _only(client.run(devmem.stop_sampling)) is None
    client.run(devmem.start_sampling, 0.01)
    client.run(devmem.start_sampling, 0.01)
    assert _only(client.run(_samplers)) == [(True, True)]
    client.run(devmem.stop_sampling)
    assert _only(client.run(_samplers)) == []
    assert _only(client.run(devmem.stop_sampling)) is None


@pytest.mark.parametrize("interval", [0, -1, float("nan"), float("inf"), "0.1", True])
def test_a_bad_interval_is_refused_before_any_work(interval):
    class NoClient:
        def run(self, *args, **kwargs):
            raise AssertionError("called the cluster")

    with pytest.raises(ValueError, match="interval must be a finite number of seconds > 0"), \
            peak_device_memory(NoClient(), interval=interval):
        pass


def test_the_reader_without_a_device_is_none():
    assert devmem.device_bytes_in_use(None) is None


def test_a_cpu_worker_has_no_bus_id(client):
    assert list(client.run(devmem.device_bus_id).values()) == [None]


def _hold_on_gpu(nbytes: int) -> int:  # on a worker: allocate, touch, hold a while, free; the bytes it held
    import cupy

    block = cupy.ones(nbytes, dtype=cupy.uint8)
    cupy.cuda.runtime.deviceSynchronize()
    time.sleep(0.2)  # many samples' time
    held = int(block.nbytes)
    del block
    cupy.get_default_memory_pool().free_all_blocks()
    return held


@pytest.mark.gpu
def test_a_gpu_worker_reports_what_it_held():
    """The real reader: a GPU worker's peak covers 1 GiB allocated and freed inside the block."""
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        with peak_device_memory(c, interval=0.001) as idle:
            pass
        with peak_device_memory(c, interval=0.001) as peaks:
            c.run(_hold_on_gpu, 1 << 30)
        buses = c.run(devmem.device_bus_id)
    assert isinstance(_only(idle), int) and _only(idle) > 0
    assert _only(buses) == devmem.device_bus_id() and re.fullmatch(r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:.+", _only(buses))
    assert _only(peaks) >= _only(idle) + (1 << 30) - (64 << 20)  # its GiB, give or take what else came and went


def test_importing_it_imports_neither_dask_nor_cupy():
    code = ("import sys, graphops.engine.devmem\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'dask', 'distributed', 'cupy', 'cudf'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
