"""Benchmark runner: time the steps of benchmark pipelines side by side in one process.

Each step runs ``warmup`` times untimed (building CSR views, compiling kernels,
converting inputs for peers), then ``repeat`` times timed, each call's result dropped before
the next (as a loop over calls drops it, so pooled memory is reused); the median is reported
with the speed-up over the case's baseline and, where the algorithm declares its
least memory traffic, the distance from the memory-bandwidth floor measured here (a row on N GPU
workers: that floor over N, one GPU a worker).

A file's ``bench.commands`` are programs the file names: they run only when asked
(``graphops bench --commands``, ``run_bench(..., commands=True)``); otherwise their rows say so
and show each command line.

A file with a ``cluster:`` section is a scale-out case: its steps whose algorithm splits its
work run on that Dask cluster (started once for the file), beside steps saying
``cluster: false`` that run on this process's device; the rows say how many workers ran them.
"""
from __future__ import annotations

import contextlib
import functools
import datetime as _dt
import errno
import json
import os
import platform
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from graphops.host.algorithm import load_target
from graphops.base.device import Device, gpu_available
from graphops.engine.dispatch import execute
from graphops.errors import BackendUnavailableError, ConfigError, GraphopsError, error_line
from graphops.pipeline.load import LoadedPipeline, load_pipeline
from graphops.pipeline.run import cluster_settings, on_cluster, open_cluster, step_backend
from graphops.pipeline.schema import BenchSettings
from graphops.base.timing import timed
from graphops.cli.benchreads import time_reads
from graphops.host.registry import Registry

__all__ = ["BenchRow", "BenchReport", "run_bench", "bench_files", "measure_bandwidth", "markdown"]


@dataclass
class BenchRow:
    """One timed step."""

    file: str
    case: str
    step: str
    backend: str
    peer: bool
    device: str
    times: list[float] = field(default_factory=list)
    median: float | None = None
    speedup: float | None = None
    baseline: str | None = None
    floor: float | None = None
    work_floor: float | None = None  # seconds: the least lookups (cost's "probes") at the random-read rate
    rates: dict[str, float] = field(default_factory=dict)
    note: str = ""
    workers: int = 0  # Dask workers that ran it (0: this process)
    efficiency: float | None = None  # speed-up over the baseline per worker (a row run on workers)
    peak_device_bytes: int | None = None  # the most device memory in use on one worker during the timed calls
    # each worker's peak (bytes), and the workers whose GPU this process uses too (their readings
    # count its memory, so the row's peak leaves them out where another worker gives a figure)
    worker_peaks: dict[str, int] = field(default_factory=dict)
    sharing_this_gpu: list[str] = field(default_factory=list)
    moved_bytes: int | None = None  # bytes between this process and the workers, median call
    # the median call's tasks, seconds and phases on each worker (the JSON's; the table shows the busiest)
    per_worker: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class BenchReport:
    """All rows plus where and when they were measured."""

    machine: dict[str, Any]
    date: str
    rows: list[BenchRow] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)  # the whole error of each file that did not load

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


def bench_files(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """YAML files named, or found (sorted) in named folders; a missing one is an error."""
    out: list[Path] = []
    for p in map(Path, paths):
        if not p.exists():
            raise FileNotFoundError(errno.ENOENT, "no such benchmark file or folder (run graphops bench "
                                    "from the repository root, or name the files)", str(p))
        out += sorted([*p.glob("*.yaml"), *p.glob("*.yml")]) if p.is_dir() else [p]
    return out


def _copy_rate(device: Device) -> float:
    xp = device.xp
    a = xp.ones(1 << 25, dtype=xp.float64)  # 256 MiB
    b = xp.empty_like(a)
    return 2 * a.nbytes / timed(lambda: xp.copyto(b, a), repeat=3).best


def measure_bandwidth(devices: Iterable[str]) -> dict[str, float]:
    """Bytes/s of a large copy (read + write) on each device: the memory floor's rate."""
    return {d: _copy_rate(Device(d)) for d in sorted(set(devices))}


def measure_random_reads() -> dict[str, float]:
    """4-byte random reads per second within an L2-sized table on the GPU, the work floor's rate
    (``graphops.base.cuda.random_read_rate``); none without a GPU."""
    if not gpu_available():
        return {}
    from graphops.base.cuda import random_read_rate

    return {"gpu": random_read_rate()}


def _machine() -> dict[str, Any]:
    info: dict[str, Any] = {"cpu": platform.processor() or platform.machine(),
                            "cores": os.cpu_count(), "python": platform.python_version()}
    if gpu_available():
        import cupy

        name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
        info["gpu"] = name.decode() if isinstance(name, bytes) else str(name)
    return info


def _case(step: Any) -> str:
    inputs = ",".join(f"{k}={v}" for k, v in sorted(step.inputs.items()))
    params = json.dumps(step.params, sort_keys=True) if step.params else ""
    return f"{step.algorithm}({inputs}{', ' + params if params else ''})"


def _skip_reason(exc: BaseException) -> str:
    text = str(exc).split(". To remedy this")[0]
    return text.split(": ", 1)[-1] if isinstance(exc, BackendUnavailableError) else text


def _time_step(loaded: LoadedPipeline, step: Any, settings: BenchSettings, repeat: int | None,
               warmup: int | None, client: Any = None) -> BenchRow:
    """One row: the step timed (on ``client``'s workers when given), or skipped (cannot run
    here) or failed, with the reason."""
    algo = loaded.registry.algorithm(step.algorithm)
    name = step_backend(loaded, step, None)
    spec = algo.backends.get(name)
    row = BenchRow(loaded.file, _case(step), step.id, name, bool(spec and spec.peer),
                   spec.device if spec else "?")
    planned: list[Any] = []
    try:
        inputs = {slot: loaded.sources.get(g) for slot, g in step.inputs.items()}
        params, checked = _params(loaded, step)
        ran_here = False
        for _ in range(settings.warmup if warmup is None else warmup):
            said = execute(algo, inputs, name, params, loaded.registry, client=client, started=planned.append,
                           declared_checked=checked).details.get("cluster", "")  # (its result not kept)
            ran_here = str(said).startswith("cluster not used")
        # a call the estimate keeps here is timed without the workers' memory samplers (each reads
        # its GPU every 10 ms, and the first worker's GPU is this process's)
        with _peaks(None if ran_here else client) as peaks:
            timings = [_timed_call(algo, inputs, name, step, loaded, client, planned)
                       for _ in range(settings.repeat if repeat is None else repeat)]
    except (GraphopsError, OSError) as exc:  # data, packages or a device this machine lacks
        if not planned:
            row.note = "skipped: " + _skip_reason(exc)
            return row
        row.note = f"failed: {error_line(exc)}"
        return row
    except MemoryError as exc:
        row.note = f"failed: {error_line(exc)}"
        return row
    row.backend, row.device, row.workers = planned[0].backend, algo.backends[planned[0].backend].device, \
        planned[0].workers
    row.times = [seconds for seconds, _ in timings]
    row.median = statistics.median(row.times)
    median_details = timings[len(timings) // 2][1]
    row.note = details_text({k: v for k, v in median_details.items() if not k.endswith("workers_bytes")})
    cluster = str(median_details.get("cluster", ""))  # "cluster not used: ..." (it ran here) or "cluster used: ..."
    if cluster:
        row.note = "; ".join(filter(None, (cluster, row.note)))
        row.workers = 0 if cluster.startswith("cluster not used") else row.workers
    if row.workers:  # (a call that ran here instead leaves the workers' figures out)
        row.worker_peaks = {str(w): int(p) for w, p in sorted(peaks.items()) if p is not None}
        row.sharing_this_gpu = sorted(_sharing_this_gpu(client, row.worker_peaks))
        row.peak_device_bytes, said = _worker_peak(row.worker_peaks, row.sharing_this_gpu)
        row.note = "; ".join(filter(None, (row.note, said)))
        row.per_worker = {str(where): {"tasks": int(w.get("tasks", 0)), "seconds": float(w.get("seconds", 0.0)),
                                       "phases_s": {str(k): float(v) for k, v in w.get("phases_s", {}).items()}}
                          for where, w in sorted(median_details.get("workers", {}).items())}
    if client is not None and "gathered_from_workers_bytes" in median_details:
        row.moved_bytes = int(median_details["gathered_from_workers_bytes"] + median_details["sent_to_workers_bytes"])
    if algo.cost and not any(_on_workers(v) for v in inputs.values()):  # (a floor would gather a Dask frame)
        cost = load_target(algo.cost)(inputs, planned[0].params)
        row.floor = cost.get("bytes")
        row.work_floor = cost.get("probes")
        row.rates = {k: v / row.median for k, v in cost.get("counts", {}).items() if row.median}
    return row


def _on_workers(value: Any) -> bool:
    """Whether an input lives on Dask workers (a Dask edge frame, or its graph)."""
    from graphops.model.daskgraph import DaskGraph, is_dask_frame

    return isinstance(value, DaskGraph) or is_dask_frame(value)


@contextlib.contextmanager
def _peaks(client: Any) -> Any:
    """Each worker's peak device memory while the block runs ({} without a cluster)."""
    if client is None:
        yield {}
        return
    from graphops.engine.devmem import peak_device_memory

    sampling = peak_device_memory(client)
    peaks = sampling.__enter__()
    try:
        yield peaks
    finally:
        try:
            sampling.__exit__(None, None, None)
        except OSError:  # a worker gone meanwhile: no figure, and the block's own error (if any) goes on
            peaks.clear()


def _sharing_this_gpu(client: Any, peaks: dict[str, int]) -> set[str]:
    """The workers (addresses) whose GPU this process uses too (a local GPU cluster's first worker
    shares this process's device); none without a reading, a GPU here, or an answer."""
    from graphops.engine.devmem import device_bus_id

    here = device_bus_id() if peaks else None  # (None without a usable GPU here)
    if here is None:
        return set()
    try:
        buses = client.run(device_bus_id)
    except OSError:  # a worker gone meanwhile: no worker is known to share it
        return set()
    return {str(w) for w, bus in buses.items() if bus == here}


def _worker_peak(peaks: dict[str, int], sharing: Iterable[str]) -> tuple[int | None, str]:
    """A row's peak device memory per worker, and what its note says of it: the highest peak of
    the workers whose GPU this process does not use (a reading on a shared GPU counts this
    process's memory too: the graph it holds, the results landing here); when every worker shares
    it, the highest of theirs, said so."""
    sharing = set(sharing)
    apart = [p for w, p in peaks.items() if w not in sharing]
    shared = [p for w, p in peaks.items() if w in sharing]
    if not shared:
        return max(apart, default=None), ""
    if apart:
        return max(apart), (f"peak GiB/worker leaves out the worker on this process's GPU "
                            f"({max(shared) / 2 ** 30:.1f} GiB there, this process's memory included)")
    return max(shared), "peak GiB/worker: the worker shares this process's GPU, and counts its memory too"


def _params(loaded: LoadedPipeline, step: Any) -> tuple[Any, bool]:
    """A step's Params as the meaning pass built and checked them (or its raw dict), and which."""
    checked = loaded.params.get(step.id)
    return (step.params, False) if checked is None else (checked, True)


def _timed_call(algo: Any, inputs: dict, name: str, step: Any, loaded: LoadedPipeline, client: Any,
                planned: list) -> tuple[float, dict]:
    """One timed call: its seconds and details. Its result is dropped before the next call, as a
    loop over calls drops it, so a call may reuse the memory the last one freed (device pools,
    page-locked host buffers) instead of every call getting new memory."""
    params, checked = _params(loaded, step)
    outcome = execute(algo, inputs, name, params, loaded.registry, client=client, started=planned.append,
                      declared_checked=checked)
    return outcome.seconds, outcome.details


def _ratios(rows: list[BenchRow], settings: BenchSettings, rates: dict[str, float],
            probe_rates: dict[str, float] | None = None) -> None:
    timed = [r for r in rows if r.median]
    named = sorted((r for r in timed if r.backend == settings.baseline), key=lambda r: r.workers)
    base = (named or timed or [None])[0]
    for r in timed:
        r.baseline = base.backend
        r.speedup = base.median / r.median
        r.efficiency = r.speedup / r.workers if r.workers and not base.workers else None
        devices = r.workers if r.workers and r.device == "gpu" else 1  # one GPU a worker: their rates add up
        if r.floor is not None and r.device in rates:
            r.floor = r.floor / rates[r.device] / devices
        r.work_floor = r.work_floor / probe_rates[r.device] / devices \
            if r.work_floor and r.device in (probe_rates or {}) else None


def _check_counts(repeat: int | None, warmup: int | None) -> None:
    """``repeat`` and ``warmup`` within the ranges of the file keys they override (``bench.repeat``, ...)."""
    from graphops.host.validation import validated

    validated("run_bench", BenchSettings, {k: v for k, v in (("repeat", repeat), ("warmup", warmup)) if v is not None})


def run_bench(paths: Iterable[str | os.PathLike], repeat: int | None = None, warmup: int | None = None,
              registry: Registry | None = None, commands: bool = False,
              workers: Sequence[int] | None = None) -> BenchReport:
    """Time every step of every benchmark pipeline; rows are grouped by case.

    :param repeat: timed runs per step (1 to 1000), instead of each file's ``bench.repeat``
    :param warmup: untimed runs first (0 to 100), instead of each file's ``bench.warmup``
    :param commands: also run each file's ``bench.commands`` (programs the file names; only for files
        you trust); otherwise their rows say they were skipped and why
    :param workers: the cluster sizes to sweep (e.g. ``[1, 2, 4]``), instead of each file's
        ``cluster.workers``: a file with a local cluster starts one of each size in turn and times its
        cluster steps on it; its other steps (one device, no Dask) run once, as the baseline
    :raises ValueError: ``repeat`` or ``warmup`` out of range
    """
    _check_counts(repeat, warmup)
    workers = _check_workers(workers)
    if not isinstance(commands, bool):
        from graphops.errors import InputTypeError

        raise InputTypeError(f"run_bench: commands must be True (run the files' bench.commands) or False; got "
                             f"{commands!r} ({type(commands).__name__})")
    report = BenchReport(_machine(), _dt.datetime.now().isoformat(timespec="seconds"))
    rates = measure_bandwidth(["cpu", "gpu"] if gpu_available() else ["cpu"])
    report.machine["copy_GBps"] = {d: round(r / 1e9, 1) for d, r in rates.items()}
    probe_rates = measure_random_reads()
    if probe_rates:
        report.machine["random_reads_G_per_s"] = {d: round(r / 1e9, 1) for d, r in probe_rates.items()}
    for file in bench_files(paths):
        try:
            loaded = load_pipeline(file, registry)
        except ConfigError as exc:  # the other files still run; the command says why and exits 1
            report.rows.append(BenchRow(str(file), "-", "-", "-", False, "-",
                                        note=f"skipped: {str(exc).splitlines()[0]} (graphops validate {file})"))
            report.invalid.append(str(exc))
            continue
        settings = loaded.model.bench or BenchSettings()
        rows = _time_file(loaded, settings, repeat, warmup, workers) + \
            _time_commands(loaded, settings, repeat, warmup, commands)
        rows += time_reads(loaded, settings, settings.repeat if repeat is None else repeat,
                           settings.warmup if warmup is None else warmup, BenchRow)
        for case in dict.fromkeys(r.case for r in rows):
            _ratios([r for r in rows if r.case == case], settings, rates, probe_rates)
        report.rows += rows
    return report


def _time_file(loaded: LoadedPipeline, settings: BenchSettings, repeat: int | None, warmup: int | None,
               workers: list[int] | None = None) -> list[BenchRow]:
    """Every step of a file; with a ``cluster:`` section, the steps that split their work on it,
    on a cluster of each size of the sweep (``workers``, else the file's ``cluster.workers``) in turn,
    after the steps that run here."""
    cluster = cluster_settings(loaded)
    steps = loaded.model.steps
    loaded.sources.produce = functools.partial(_produce, loaded)  # a graph made from a step: its result, once
    if cluster is None or not any(on_cluster(loaded, s) for s in steps):
        rows = [_time_step(loaded, s, settings, repeat, warmup) for s in steps]
        if workers:  # asked to sweep: say why this file was not
            why = "no cluster: section" if cluster is None else "no step that runs on its cluster"
            for r in rows:
                r.note = f"not swept (--workers): the file has {why}" + (f"; {r.note}" if r.note else "")
        return rows
    sizes = workers or (cluster["workers"] if isinstance(cluster.get("workers"), list) else [cluster.get("workers")])
    rows = [_time_step(loaded, s, settings, repeat, warmup) for s in steps if not on_cluster(loaded, s)]
    if "address" in cluster and workers:  # the steps that run here are timed all the same
        return rows + [_skipped(loaded, s, "--workers sweeps clusters started here; this file names a running "
                                           "scheduler's address") for s in steps if on_cluster(loaded, s)]
    if len(rows) < len(steps):
        for size in sizes:
            rows += _time_on_cluster(loaded, settings, repeat, warmup, {**cluster, "workers": size} if size else cluster,
                                     f"--workers {size}" if workers else "the file's cluster")
    return rows


def _produce(loaded: LoadedPipeline, step_id: str) -> Any:
    """The result of step ``step_id``, made once (untimed) for the graphs made from it."""
    step = next(s for s in loaded.model.steps if s.id == step_id)
    params, checked = _params(loaded, step)
    inputs = {slot: loaded.sources.get(g) for slot, g in step.inputs.items()}
    return execute(loaded.registry.algorithm(step.algorithm), inputs, step_backend(loaded, step, None), params,
                   loaded.registry, declared_checked=checked).result


def _time_on_cluster(loaded: LoadedPipeline, settings: BenchSettings, repeat: int | None, warmup: int | None,
                     cluster: dict, named: str = "the file's cluster") -> list[BenchRow]:
    """The steps that split their work, timed on one cluster started (or reached) for them
    (``named``: where its size came from, as a skipped row says: the file, or ``--workers N``)."""
    steps = [s for s in loaded.model.steps if on_cluster(loaded, s)]
    with contextlib.ExitStack() as stack:
        try:
            client, _ = open_cluster(stack, loaded, cluster)
        except (GraphopsError, OSError) as exc:  # no Dask here, or no scheduler answering
            return [_skipped(loaded, s, f"{named}: {str(exc).splitlines()[0]}") for s in steps]
        return [_time_step(loaded, s, settings, repeat, warmup, client) for s in steps]


def _skipped(loaded: LoadedPipeline, step: Any, why: str) -> BenchRow:
    return BenchRow(loaded.file, _case(step), step.id, step_backend(loaded, step, None), False, "-",
                    note=f"skipped: {why}")


def _check_workers(workers: Any) -> list[int] | None:
    """``workers`` (cluster sizes to sweep) checked as the file key ``cluster.workers`` is."""
    if workers is None:
        return None
    if isinstance(workers, (str, bytes)) or not isinstance(workers, (int, list, tuple)):
        from graphops.errors import InputTypeError

        raise InputTypeError(f"run_bench: workers must be the cluster sizes to sweep, a list of counts (e.g. "
                             f"[1, 2, 4]) or one count; got {workers!r} ({type(workers).__name__})")
    from graphops.host.validation import validated
    from graphops.pipeline.schema import ClusterSettings

    sizes = workers if isinstance(workers, (list, tuple)) else [workers]
    return list(validated("run_bench", ClusterSettings, {"kind": "local", "workers": list(sizes)}).workers)


SKIPPED_COMMAND = ("skipped: the file's bench.commands run programs it names on this machine; pass --commands to "
                   "run them (graphops bench FILE --commands) if you trust the file")


def _time_commands(loaded: LoadedPipeline, settings: BenchSettings, repeat: int | None,
                   warmup: int | None, run: bool = False) -> list[BenchRow]:
    """The file's ``bench.commands``, each run ``warmup`` times untimed (so disk caches are warm, as
    for a user's second call) and then ``repeat`` times in a fresh process: wall time from start to
    exit. ``graphops ...`` runs with this interpreter (``python -m graphops``). The file's ``setup``
    lines run first, once, untimed, with ``{data}`` a folder kept until the commands are done (a
    setup that fails is every row's note). Without ``run``, nothing runs: each row shows its
    command line and says it was skipped (:data:`SKIPPED_COMMAND`)."""
    import shlex
    import subprocess
    import sys
    import tempfile
    import time

    untimed = warmup if warmup is not None else settings.warmup
    timed = repeat if repeat is not None else settings.repeat
    rows: list[BenchRow] = []
    if not run:
        for name, line in (settings.commands or {}).items():
            row = BenchRow(loaded.file, f"cold start: {line}", name, "cli", False, "cpu")
            row.note = SKIPPED_COMMAND
            rows.append(row)
        return rows
    with tempfile.TemporaryDirectory(prefix="graphops-bench-data-") as data:
        def run_line(line: str, tmp: str) -> subprocess.CompletedProcess:
            words = shlex.split(line)
            if words and words[0] == "graphops":
                words = [sys.executable, "-m", "graphops", *words[1:]]
            try:
                return subprocess.run([w.replace("{tmp}", tmp).replace("{data}", data) for w in words],
                                      cwd=loaded.base, capture_output=True, text=True)
            except OSError as exc:  # no such program, not executable: a failed line, said in its row
                why = "not found" if isinstance(exc, FileNotFoundError) else exc.strerror or str(exc)
                return subprocess.CompletedProcess(words, 127, "", f"program {words[0]!r}: {why}")

        setup_failed = None
        for line in settings.setup or []:
            done = run_line(line, data)
            if done.returncode != 0:
                setup_failed = f"failed: the setup command {line!r}: {_last_line(done)}"
                break
        for name, line in (settings.commands or {}).items():
            row = BenchRow(loaded.file, f"cold start: {line}", name, "cli", False, "cpu")
            if setup_failed is not None:
                row.note = setup_failed
                rows.append(row)
                continue
            times, failed = [], None
            for k in range(untimed + timed):
                with tempfile.TemporaryDirectory(prefix="graphops-bench-") as tmp:
                    start = time.perf_counter()
                    done = run_line(line, tmp)
                    wall = time.perf_counter() - start
                if done.returncode != 0:
                    failed = _last_line(done)
                    break
                if k >= untimed:
                    times.append(wall)
            if failed is not None:
                row.note = f"failed: {failed}"
            else:
                row.times, row.median = times, statistics.median(times)
                row.note = "fresh process each run"
            rows.append(row)
    return rows


def _last_line(done: Any) -> str:
    """What a failed command said last (its exit code when it said nothing)."""
    return (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]


def details_text(details: Any) -> str:
    """What a backend reported that a reader of the table wants: its phases' times
    (``phases_s``), schedule, a one-line ``note`` and memory (``*_bytes``)."""
    parts = [f"{k} {v * 1e3:.1f} ms" for k, v in dict(details.get("phases_s", {})).items()]
    workers = details.get("workers")
    if isinstance(workers, dict) and workers:  # a cluster call: the busiest worker's parts, phase by phase
        busiest = max(workers.values(), key=lambda w: w.get("seconds", 0.0))
        own = ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in busiest.get("phases_s", {}).items())
        parts.append(f"busiest worker: {busiest.get('tasks', 0)} part(s)" + (f" ({own})" if own else ""))
    for key in ("schedule", "note"):
        if key in details:
            parts.append(str(details[key]))
    parts += [f"{k.removesuffix('_bytes').replace('_', ' ')} {v / 2 ** 30:.2f} GiB"
              for k, v in details.items() if k.endswith("_bytes")]
    return "; ".join(parts)


def median_ms(row: BenchRow) -> str:
    return "-" if row.median is None else f"{row.median * 1e3:.3f}"


def floor_text(row: BenchRow, floor: float | None) -> str:
    """``floor`` (seconds: the row's memory or work floor) and how many times the median is over it."""
    if not floor or row.median is None:
        return "-"
    over = row.median / floor
    return f"{floor * 1e3:.3f} ms ({over:.0f}x)" if over >= 9.95 else f"{floor * 1e3:.3f} ms ({over:.1f}x)"


def _si(x: float) -> str:
    for scale, unit in ((1e12, " T"), (1e9, " G"), (1e6, " M"), (1e3, " k")):
        if x >= scale:
            return f"{x / scale:.3g}{unit}"
    return f"{x:.3g}"


def rates_text(row: BenchRow) -> str:
    """Counts per second, e.g. ``31.2 M pairs/s``."""
    return "; ".join(f"{_si(v)} {k}/s" for k, v in row.rates.items()) or "-"


def markdown(report: BenchReport) -> str:
    """The table as Markdown, with the machine and date, for a README."""
    machine = ", ".join(f"{k}: {v}" for k, v in report.machine.items())
    rows = rows_as_table(report)
    lines = [f"Measured {report.date} on {machine}.", "",
             "| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(cell.replace("|", "/") for cell in row) + " |" for row in rows[1:]]
    return "\n".join(lines)


def rows_as_table(report: BenchReport) -> list[list[str]]:
    """Header + one list of cells per row, for printing."""
    scaled = any(r.workers for r in report.rows)  # a scale-out table: efficiency, memory per worker, bytes moved
    head = ["case", "backend", "median ms", "speed-up", *(["efficiency", "peak GiB/worker", "moved GB"] if scaled
                                                           else []),
            "memory floor (x over)", "work floor (x over)", "rates", "note"]
    body = []
    for r in report.rows:
        speed = "-" if r.speedup is None else f"{r.speedup:.2f}x vs {r.baseline}"
        where = f", Dask {r.workers} worker{'s' if r.workers > 1 else ''}" if r.workers else ""
        scale = [_or_dash(r.efficiency, "{:.0%}"), _or_dash(r.peak_device_bytes and r.peak_device_bytes / 2 ** 30,
                                                            "{:.1f}"),
                 _or_dash(r.moved_bytes if r.moved_bytes is None else r.moved_bytes / 1e9, "{:.3f}")] if scaled else []
        body.append([r.case, r.backend + (" (peer" + where + ")" if r.peer else f" ({where[2:]})" if where else ""),
                     median_ms(r), speed, *scale,
                     floor_text(r, r.floor), floor_text(r, r.work_floor), rates_text(r), r.note])
    return [head, *body]


def _or_dash(value: float | None, form: str) -> str:
    return "-" if value is None else form.format(value)
