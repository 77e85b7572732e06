"""Chunked, interruptible work: ranges cover the work once, sizes follow time and cost, and
Ctrl-C stops a long CPU step within about a second with one line, exit 130 and a summary."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphops.base.work import chunks, even_ranges


def _covers(ranges, total):
    assert ranges[0][0] == 0 and ranges[-1][1] == total
    assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(ranges, ranges[1:]))


def test_chunks_cover_the_work_once_and_grow_by_measured_time():
    ranges = []
    for lo, hi in chunks(100_000, first=10, target=0.01):
        ranges.append((lo, hi))
        time.sleep(1e-5 * (hi - lo) ** 0.5)  # cheap per item: chunks should grow
    _covers(ranges, 100_000)
    sizes = [hi - lo for lo, hi in ranges]
    assert sizes[0] == 10 and sizes[1] == 40 and max(sizes) > 1000  # at most 4x per step, then big


def test_slow_work_gets_small_chunks():
    ranges = []
    for lo, hi in chunks(1000, first=100, target=0.01):
        ranges.append((lo, hi))
        time.sleep(0.001 * (hi - lo))  # 1 ms per item: 10 items make the 10 ms target
        if len(ranges) > 4:
            break
    assert all(7 <= hi - lo <= 10 for lo, hi in ranges[2:])  # sleeps overshoot a little


def test_chunks_cut_by_cost_and_respect_max_items():
    cost = np.concatenate([[0], np.cumsum([1] * 50 + [1000] * 5 + [1] * 50)])
    ranges = list(chunks(105, cost=cost, first=1000, target=1e9, max_items=30))  # time never limits
    _covers(ranges, 105)
    assert all(hi - lo <= 30 for lo, hi in ranges)
    assert (50, 51) in ranges  # a heavy item is a chunk of its own when the first budget is one item's cost


def test_sync_waits_for_every_chunk_but_the_last():
    """The GPU's queue is waited for to size the next chunk; after the last one nothing is sized,
    so the caller goes on (building the result) while the device finishes."""
    synced = []
    ranges = []
    for lo, hi in chunks(10, first=3, target=1e9, max_items=3, sync=lambda: synced.append(len(ranges))):
        ranges.append((lo, hi))
    _covers(ranges, 10)
    assert len(ranges) == 4 and synced == [1, 2, 3]
    one = []
    assert list(chunks(5, first=5, sync=lambda: one.append(1))) == [(0, 5)] and one == []


def test_even_ranges_by_cost():
    cost = np.concatenate([[0], np.cumsum([1] * 90 + [90] * 10)])
    ranges = even_ranges(100, 2, cost)
    _covers(ranges, 100)
    assert ranges[0][1] > 90  # half the cost is the 90 light items and a few heavy ones
    assert even_ranges(0, 3) == [] and even_ranges(5, 10) == [(i, i + 1) for i in range(5)]


@settings(max_examples=200, deadline=None)
@given(costs=st.lists(st.integers(0, 50), min_size=1, max_size=60),
       shares=st.lists(st.floats(1e-6, 1e3), min_size=1, max_size=9))
def test_even_ranges_by_shares_cover_the_items_once(costs, shares):
    """Ranges of costs about in proportion to the shares: never empty, end to end over every item."""
    cost = np.concatenate([[0], np.cumsum(costs)])
    ranges = even_ranges(len(costs), len(shares), cost, shares)
    _covers(ranges, len(costs))
    assert 1 <= len(ranges) <= len(shares) and all(a < b for a, b in ranges)


def test_even_ranges_refuse_shares_that_are_not_positive_numbers():
    cost = np.arange(11.0)
    for bad in ([0, 0], [1, float("nan")], [1, -1], [1, float("inf")]):
        with pytest.raises(ValueError, match="finite and positive"):
            even_ranges(10, 2, cost, bad)


def test_a_taper_outside_its_range_is_refused(monkeypatch):
    from graphops.engine import gram

    for bad in (0, -0.5, 1.5, float("nan")):
        monkeypatch.setattr(gram, "TAPER", bad)
        with pytest.raises(ValueError, match="TAPER must be in"):
            gram.tapered(2, 4)
    monkeypatch.setattr(gram, "TAPER", 1e-9)  # shares that underflow are kept above zero
    assert min(gram.tapered(2, 4)) > 0


LONG = """\
version: 1
name: long
graphs:
  g: {generate: {kind: gnp_set, sizes: {60: 400}, seed: 1}}
steps:
  - {id: first, algorithm: describe, inputs: {graph: g}, backend: cpu, output: first.csv}
  - id: gram
    algorithm: sp_kernel
    inputs: {graphs: g}
    backend: cpu
    params: {node_kernel: {gaussian: {gamma: 0.5}}, length_kernel: {gaussian: {gamma: 1.0}}, fcsp_form: walk}
    output: gram.npy
  - {id: after, algorithm: describe, inputs: {graph: g}, backend: cpu}
"""


@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
@pytest.mark.parametrize("backend, size", [("cpu", 400), pytest.param("gpu", 3000, marks=pytest.mark.gpu)])
def test_ctrl_c_stops_a_long_step_within_a_second(tmp_path, backend, size):
    """A job of minutes (CPU: 80 k graph pairs of 3,540 paths each, Gaussian walk; GPU: 4.5 M)."""
    long = LONG.replace("sizes: {60: 400}", f"sizes: {{60: {size}}}").replace(
        "algorithm: sp_kernel\n    inputs: {graphs: g}\n    backend: cpu", f"algorithm: sp_kernel\n    inputs: {{graphs: g}}\n    backend: {backend}")
    (tmp_path / "long.yaml").write_text(long)
    env = {**os.environ, "GRAPHOPS_CACHE_DIR": str(tmp_path / "cache")}
    warm = long.replace(f"sizes: {{60: {size}}}", "sizes: {6: 24}")  # compile the same kernels first (cached)
    (tmp_path / "warm.yaml").write_text(warm)
    subprocess.run([sys.executable, "-m", "graphops.cli", "run", str(tmp_path / "warm.yaml"), "--out",
                    str(tmp_path / "w")], env=env, check=True, capture_output=True)
    # the CLI as a terminal starts it: Ctrl-C not ignored (a test run started in the background
    # by a shell without job control has SIGINT ignored, and children inherit that)
    with subprocess.Popen([sys.executable, "-m", "graphops.cli", "-v", "run", str(tmp_path / "long.yaml"),
                           "--out", str(tmp_path / "o")], env=env, stderr=subprocess.PIPE,
                          stdout=subprocess.DEVNULL, text=True,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)) as proc:
        try:
            for line in proc.stderr:  # the step has started computing
                if f"sp_kernel: backend '{backend}'" in line:
                    break
            time.sleep(1.5)
            rest, stopped = _interrupt(proc)  # the step stops, the summary is written, the CLI says so
        finally:
            proc.kill()
    err = "".join(rest)
    assert proc.returncode == 130, err
    assert stopped is not None and stopped < 1.0, f"stopped {stopped} s after Ctrl-C"
    last = [line for line in err.splitlines() if line.strip()][-1]
    assert last.startswith("graphops: interrupted (interrupted during step 'gram' after ")
    assert "Traceback" not in err
    summary = json.loads((tmp_path / "o" / "long.summary.json").read_text())
    assert [s["status"] for s in summary["steps"]] == ["ok", "interrupted", "not run"]
    assert summary["status"] == "interrupted" and summary["steps"][0]["output"].endswith("first.csv")
    assert not (tmp_path / "o" / "gram.npy").exists() and not list((tmp_path / "o").glob(".gram*"))


@pytest.fixture
def python_sigint():
    """Python's own Ctrl-C handler during the test, also when the test run was started with
    SIGINT ignored (a shell without job control ignores it for background commands)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_is_held_until_the_chunk_ends_and_a_second_one_raises_at_once(python_sigint):
    import signal as sig

    from graphops.base.work import holding_interrupts

    done = []
    with pytest.raises(KeyboardInterrupt):
        with holding_interrupts():
            for lo, hi in chunks(10, first=1, target=1e9):
                os.kill(os.getpid(), sig.SIGINT)  # arrives mid-chunk (e.g. while Numba compiles): held
                time.sleep(0.01)
                done.append(lo)  # the chunk still finishes; the next boundary raises
    assert done == [0] and sig.getsignal(sig.SIGINT) is sig.default_int_handler
    with pytest.raises(KeyboardInterrupt):
        with holding_interrupts():
            os.kill(os.getpid(), sig.SIGINT)
            time.sleep(0.01)
            done.append("end of the call")  # no chunk boundary: raised when the block ends
    assert done == [0, "end of the call"]
    with pytest.raises(KeyboardInterrupt):
        with holding_interrupts():
            os.kill(os.getpid(), sig.SIGINT)
            time.sleep(0.01)
            os.kill(os.getpid(), sig.SIGINT)  # second press: raised here, at once
            time.sleep(0.01)
            done.append("not reached")
    assert done == [0, "end of the call"] and sig.getsignal(sig.SIGINT) is sig.default_int_handler


GENERATE = """\
version: 1
name: gen
graphs: {big: {generate: {kind: rmat, scale: SCALE, edge_factor: 16}}}
steps: [{id: stats, algorithm: describe, inputs: {graph: big}, backend: cpu}]
"""


def _interrupt(proc):
    """Ctrl-C to the CLI: its stderr lines, and the seconds until it said it stopped (``None``:
    it never did); the process has exited."""
    sent, lines, stopped = time.perf_counter(), [], None
    proc.send_signal(signal.SIGINT)
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("graphops: interrupted"):
            stopped = time.perf_counter() - sent
    proc.wait(timeout=30)
    return lines, stopped


@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
@pytest.mark.parametrize("after", [2.5, 4.0])
def test_ctrl_c_stops_graph_generation_within_a_second(tmp_path, after):
    """R-MAT scale 20 (16 M samples): drawing is chunked; the dedupe and renumbering that follow are
    NumPy calls of well under a second each (np.unique alone took 19 s on 16 M values: one call)."""
    env = {**os.environ, "GRAPHOPS_CACHE_DIR": str(tmp_path / "cache")}
    (tmp_path / "warm.yaml").write_text(GENERATE.replace("SCALE", "8"))
    subprocess.run([sys.executable, "-m", "graphops.cli", "run", str(tmp_path / "warm.yaml"), "--out",
                    str(tmp_path / "w")], env=env, check=True, capture_output=True)
    (tmp_path / "gen.yaml").write_text(GENERATE.replace("SCALE", "20"))
    with subprocess.Popen([sys.executable, "-m", "graphops.cli", "run", str(tmp_path / "gen.yaml"), "--out",
                           str(tmp_path / "o")], env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                          text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)) as proc:
        try:
            time.sleep(after)
            lines, stopped = _interrupt(proc)
        finally:
            proc.kill()
    err = "".join(lines)
    if proc.returncode == 0:
        pytest.skip(f"the run ended within {after} s, before the Ctrl-C")
    assert proc.returncode == 130, err
    assert stopped is not None and stopped < 1.0, f"stopped {stopped} s after Ctrl-C"
    assert err.startswith("graphops: interrupted (interrupted during step 'stats' after ")


def _slow_job(total=40):
    for lo, hi in chunks(total, what="a slow job", first=1, target=0.01):
        time.sleep(0.005 * (hi - lo))


def test_work_off_a_terminal_prints_plain_progress_lines(capsys, monkeypatch):
    monkeypatch.setattr("graphops.base.work._PLAIN_AFTER", 0.02)
    monkeypatch.setattr("graphops.base.work._PLAIN_EVERY", 0.05)
    _slow_job()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 3 and lines[-1].startswith("graphops: a slow job: done in 0:00")
    import re

    assert all(re.fullmatch(r"graphops: a slow job: \d+/40 \(\d+%\), [\d,.]+/s, (ETA \d+:\d\d|finishing), "
                            r"\d+:\d\d so far", line) for line in lines[:-1]), lines


def test_quiet_and_the_environment_switch_silence_progress(capsys, monkeypatch):
    from graphops.base.work import quiet

    monkeypatch.setattr("graphops.base.work._PLAIN_AFTER", 0.0)
    with quiet():
        _slow_job(10)
    monkeypatch.setenv("GRAPHOPS_PROGRESS", "off")
    _slow_job(10)
    assert capsys.readouterr().err == ""


def test_the_cli_prints_progress_lines_unless_quiet(tmp_path, capsys, monkeypatch):
    from graphops.cli import main

    monkeypatch.setattr("graphops.base.work._PLAIN_AFTER", 0.0)
    monkeypatch.setattr("graphops.base.work._PLAIN_EVERY", 0.0)
    (tmp_path / "p.yaml").write_text(LONG.replace("sizes: {60: 400}", "sizes: {12: 40}"))
    assert main(["run", str(tmp_path / "p.yaml"), "--out", str(tmp_path / "o")]) == 0
    assert "graphops: sp_kernel" in capsys.readouterr().err
    assert main(["run", str(tmp_path / "p.yaml"), "--out", str(tmp_path / "o"), "--quiet"]) == 0
    assert main(["-q", "run", str(tmp_path / "p.yaml"), "--out", str(tmp_path / "o")]) == 0
    assert "graphops: sp_kernel" not in capsys.readouterr().err


@pytest.mark.parametrize("threads", [1, 8])
def test_mirror_rows_in_any_cut_fills_the_lower_triangle_from_the_upper(threads, monkeypatch):
    """On one thread or on several (blocks of rows at once), each cut's rows as tiles arrive."""
    import graphops.engine.gram as gram
    from graphops.engine.gram import mirror_rows, mirror_upper

    monkeypatch.setattr(gram, "MIRROR_THREADS", threads)
    monkeypatch.setattr(gram.os, "cpu_count", lambda: 8)

    rng = np.random.default_rng(3)
    for n in (1, 7, 600):
        A = rng.random((n, n))
        want = np.triu(A) + np.triu(A, 1).T
        upper = np.triu(A) + np.tril(rng.random((n, n)), -1)  # anything below the diagonal
        assert np.array_equal(mirror_upper(upper.copy()), want)
        K = upper.copy()
        cuts = sorted({0, n, *rng.integers(0, n, 4).tolist()})
        for a, b in zip(cuts, cuts[1:]):  # in order, as tiles reach the host
            mirror_rows(K, a, b, block=5)
        assert np.array_equal(K, want)


@pytest.mark.gpu
@pytest.mark.parametrize("square", [True, False])
@pytest.mark.parametrize("dest", ["pinned", "pageable", "device"])
def test_gram_rows_fills_every_tile(dest, square, monkeypatch):
    """Rows in many small tiles, to a page-locked host result, to an ordinary one filled through
    page-locked staging tiles (results over ``PINNED_RESULT_BYTES``), or on the device; a square
    matrix's lower triangle mirrored by the host tile by tile while the GPU fills a later one."""
    import cupy as cp

    import graphops.engine.gram as gram

    n, m = 203, 203 if square else 157
    A = np.random.default_rng(4).random((n, m))
    want = np.triu(A) + np.triu(A, 1).T if square else A
    dA = cp.asarray(A)
    monkeypatch.setattr(gram, "PINNED_RESULT_BYTES", 0 if dest == "pageable" else 1 << 31)

    def fill(r0, r1, out):  # square: only j >= i is written; the rest holds what the buffer held
        out[...] = -1.0
        upper = cp.arange(m)[None, :] >= cp.arange(r0, r1)[:, None]
        out[...] = cp.where(upper | (not square), dA[r0:r1], out)

    K = gram.gram_rows(n, m, fill, what="test", tile=9, mirror=square, to_host=dest != "device", progress=False)
    assert isinstance(K, cp.ndarray if dest == "device" else np.ndarray)
    assert np.array_equal(K.get() if dest == "device" else K, want)


def test_phases_add_up_by_name_and_nest_within_their_parent():
    """A part's phases: blocks of one name add up, a block within another is named under it, and
    nothing is recorded (or synchronized) outside :func:`phases`."""
    from graphops.base.timing import phase, phases

    with phase("ignored"):
        pass
    with phases() as spent:
        for _ in range(2):
            with phase("compute"):
                with phase("solve"):
                    time.sleep(0.01)
                with phase("solve"):
                    pass
        with phase("slice"):
            pass
    assert set(spent) == {"compute", "compute > solve", "slice"}
    assert spent["compute"] >= spent["compute > solve"] >= 0.02
    with phases() as again:
        pass
    assert again == {}


def test_a_phase_whose_wait_fails_is_still_closed(monkeypatch):
    """A GPU wait that raises at a phase's end: the error goes on, the phase is recorded, and the
    next phase is not named under it."""
    import graphops.base.timing as timing

    def broken() -> None:
        raise RuntimeError("device lost")

    monkeypatch.setattr(timing, "synchronize", broken)
    with timing.phases() as spent:
        with pytest.raises(RuntimeError, match="device lost"):
            with timing.phase("solve", sync=True):
                pass
        with timing.phase("after"):
            pass
    assert set(spent) == {"solve", "after"}
