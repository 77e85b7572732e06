"""Executing a validated pipeline: graphs loaded once, steps in dependency order (a step after the
steps whose results its input graphs are made from: :mod:`graphops.pipeline.flow`, else file order),
outputs written atomically.

Failure semantics: the output folder is checked (created, written to) before any step
computes, and so is every path the run will write (``graphops.pipeline.confine``): inside the
output folder, through no symbolic link that leads out of it, not a file the run reads or writes
already (by real path), and a file that can be written there; each path is checked again as it
is written, since a link can appear meanwhile (an :class:`OutputError`: the step fails). A file
trusted to write outside (``allow_outside_output_dir: true``) is named with every path it will
write outside, on the ``graphops`` logger at WARNING before any step runs and in the summary's
``warnings``; with a folder of the run's own (``out``) the flag does not apply, which is said
the same way. A step that raises is ``failed`` and, unless ``keep_going``, the steps after it are
``not run``; Ctrl-C marks the running step ``interrupted``. Whatever happens, the run summary
JSON is written (unless its own path has come to lead out of the folder: an OutputError then),
with every step's status, its error text and the outputs that completed steps wrote; then
:class:`PipelineError` (a failure) or :class:`Interrupted` (Ctrl-C) is raised, carrying the summary.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import json
import logging
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from graphops.engine.dispatch import execute
from graphops.errors import GraphopsError, InputError, InputTypeError, Interrupted, OutputError, PipelineError, error_line
from graphops.io.outputs import atomic_path, inside, prepare_folder, write_result
from graphops.host.registry import Registry
from graphops.pipeline.arguments import check_path, check_run_arguments
from graphops.pipeline.confine import (OWN_FOLDER, Claims, folder_output, leaves, output_dir_leaves, picture_of,
                                       summary_name, trust_note, write_problem, writes)
from graphops.pipeline import cache as runcache
from graphops.pipeline import flow, provenance
from graphops.pipeline.load import LoadedPipeline, load_pipeline
from graphops.pipeline.overrides import check_overrides

__all__ = ["run_pipeline", "RunSummary", "StepRecord", "step_backend", "STATUSES"]

STATUSES = ("ok", "cached", "failed", "interrupted", "not run")


@dataclass
class StepRecord:
    """What one step did (``status`` is one of :data:`STATUSES`)."""

    id: str
    algorithm: str
    status: str = "not run"
    backend: str = ""
    device: str = ""
    seconds: float = 0.0
    prepare_seconds: float = 0.0
    reason: str = ""
    output: str | None = None
    picture: str | None = None
    shape: list[int] = field(default_factory=list)
    error: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    cache_key: str | None = None  # the run cache's key of the step (None: not cached, details["cache"] says why)


@dataclass
class RunSummary:
    """What a pipeline run did; also written as JSON next to the outputs."""

    pipeline: str
    file: str
    started: str
    status: str = "ok"
    seconds: float = 0.0
    output_dir: str = ""
    graphs: dict[str, dict[str, Any]] = field(default_factory=dict)
    steps: list[StepRecord] = field(default_factory=list)
    summary_path: str | None = None
    cluster: str = ""  # where the steps that split their work ran, or why no cluster was used
    error: str | None = None  # what stopped the run before its steps (e.g. an unreachable scheduler)
    warnings: list[str] = field(default_factory=list)  # said before the steps ran (a file writing outside)
    order: list[str] = field(default_factory=list)  # the steps' ids in the order they were taken
    provenance: dict[str, Any] = field(default_factory=dict)  # versions, GPU, command line, inputs' digests
    overrides: dict[str, Any] = field(default_factory=dict)  # values set over the file's (--set), by dotted key

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def step(self, status: str) -> StepRecord | None:
        """The first step with ``status``, if any."""
        return next((s for s in self.steps if s.status == status), None)


def step_backend(loaded: LoadedPipeline, step: Any, override: str | None) -> str:
    """The backend a step asks for: the override, else its own, else the pipeline's backend."""
    return (override or step.backend or loaded.model.backend).lower()


def _shape(result: Any) -> list[int]:
    from graphops.model.daskgraph import is_dask_frame

    if is_dask_frame(result):  # rows counted on the workers
        return [int(result.shape[0].compute()), len(result.columns)]
    return [int(x) for x in getattr(result, "shape", (len(result),))]


Place = Callable[..., Path]  # (a path relative to the output folder, what it is[, whose]) -> where it is written


def _run_step(loaded: LoadedPipeline, step: Any, backend: str | None, place: Place, rec: StepRecord,
              client: Any = None, keep: bool = False, keys: dict | None = None) -> str:
    """Run one step into its record (``ok``), or read its result from the run cache (``cached``);
    with ``keep``, its result stays for the graphs made from it. ``keys``: the cache keys of the steps
    run so far (None: no cache)."""
    algo = loaded.registry.algorithm(step.algorithm)
    inputs = {slot: loaded.sources.get(gname) for slot, gname in step.inputs.items()}
    here = client is not None and not on_cluster(loaded, step)
    validated: dict[str, Any] = {}
    checked = loaded.params.get(step.id)  # built and checked by the meaning pass: not again
    asked = step_backend(loaded, step, backend)
    key = None if keys is None else _cache_key(loaded, step, algo, checked, asked, inputs, keys, rec)
    if key is not None:
        hit = runcache.load(key.key)
        if hit is not None and not _has_outputs(algo, hit[0]):  # a result that is not this algorithm's
            runcache.discard(key.key, "its result lacks the algorithm's columns")
            hit = None
        if hit is not None:
            result, entry = hit
            rec.backend, rec.device, rec.seconds = entry.get("backend", ""), entry.get("device", ""), 0.0
            rec.reason = f"cached: computed {entry.get('created')} in {float(entry.get('seconds', 0)):.4f} s"
            rec.details = {"cache": "read"}
            params = checked if checked is not None else algo.params.model_validate(step.params)
            _keep_and_write(loaded, step, algo, result, inputs, params, place, rec, keep)
            return "cached"

    def started(planned: Any) -> None:  # the backend is chosen: the step is about to run
        validated["params"] = planned.params
        rec.backend, rec.device, rec.reason = planned.backend, algo.backends[planned.backend].device, planned.reason
        if here:
            rec.reason += ("; here, not on the cluster: " + ("the step says cluster: false" if algo.distributes
                                                             else "the algorithm does not split its work"))
        loaded.registry.pm.hook.graphops_step_start(pipeline=loaded.model, step=step, backend=planned.backend)

    done = execute(algo, inputs, asked, step.params if checked is None else checked,
                   loaded.registry, client=None if here else client, started=started,
                   declared_checked=checked is not None)
    loaded.registry.pm.hook.graphops_step_end(pipeline=loaded.model, step=step, backend=done.backend,
                                              result=done.result, seconds=done.seconds)
    rec.seconds, rec.prepare_seconds = done.seconds, done.prepare_seconds
    rec.details = {**rec.details, **dict(done.details)}
    if done.details.get("cluster"):  # whether the cluster paid: "cluster not used: ..." or "cluster used: ..."
        rec.reason += f"; {done.details['cluster']}"
    if key is not None:
        why = runcache.store(key, done.result, {"backend": rec.backend, "device": rec.device, "seconds": done.seconds})
        rec.details["cache"] = "written" if why is None else f"not cached: {why}"
    _keep_and_write(loaded, step, algo, done.result, inputs, validated["params"], place, rec, keep)
    return "ok"


def _has_outputs(algo: Any, result: Any) -> bool:
    """A frame result has every column the algorithm always returns (an array: nothing to check)."""
    if not hasattr(result, "columns"):
        return True
    return set(algo.outputs or ()) - set(algo.optional_outputs or ()) <= {str(c) for c in result.columns}


def _cache_key(loaded: LoadedPipeline, step: Any, algo: Any, params: Any, asked: str, inputs: dict, keys: dict,
               rec: StepRecord) -> Any:
    """The step's run-cache key (its inputs: their content, or a from_step graph's step key), kept in
    ``keys`` and the record; ``None`` with the reason in the record when it has none."""
    from graphops.engine.digest import Undigestible, digest

    digests = {}
    try:
        for slot, gname in step.inputs.items():
            source = loaded.sources.sources[gname]
            made_from = source.step_of()
            if made_from is not None:
                if made_from not in keys:
                    raise Undigestible(f"its graph {gname!r} is made from step {made_from!r}, which has no key")
                digests[slot] = runcache.source_key(keys[made_from].key, source)
            else:
                digests[slot] = digest(inputs[slot])
    except Undigestible as exc:
        rec.details["cache"] = f"not cached: {exc}"
        return None
    key = runcache.step_key(algo, params if params is not None else step.params, asked, digests)
    if isinstance(key, str):
        rec.details["cache"] = f"not cached: {key}"
        return None
    keys[step.id] = key
    rec.cache_key = key.key
    return key


def _keep_and_write(loaded: LoadedPipeline, step: Any, algo: Any, result: Any, inputs: dict, params: Any,
                    place: Place, rec: StepRecord, keep: bool) -> None:
    """A step's result: its shape recorded, kept for the graphs made from it, written, drawn."""
    rec.shape = _shape(result)
    if keep:
        loaded.sources.results[step.id] = result
    if step.output:
        target = place(step.output, f"step {step.id!r}: output", f"the output of step {step.id!r}",
                       folder_output(loaded, step))
        about = {"step": step.id, "algorithm": algo.name, "cache_key": rec.cache_key, **provenance.versions(loaded),
                 "inputs": provenance.inputs(loaded, list(step.inputs.values()))}
        rec.output = str(write_result(result, target, algo.writers, metadata=about))
    if step.plot and step.output:
        from graphops.host.algorithm import load_target

        picture = place(str(picture_of(step.output)), f"step {step.id!r}: picture",
                        f"the picture of step {step.id!r}")
        load_target(algo.plot)(result, inputs, params, picture)
        rec.picture = str(picture)


def _placer(loaded: LoadedPipeline, out: Any) -> tuple[Path, Place]:
    """The output folder, and where a path relative to it is written: an :class:`OutputError` when
    it would leave the folder, or the file's ``output_dir`` the file's folder (``out`` is the caller's own),
    or when it is a file the run reads or has written (each placer keeps its own claims)."""
    folder, claims = loaded.output_dir(out), Claims(loaded)

    def place(relative: str, what: str, owner: str | None = None, parts: bool = False) -> Path:
        if out is None:
            _refuse(loaded, output_dir_leaves(loaded), f"output_dir {loaded.model.output_dir!r}",
                    f"the folder of {loaded.file}", out)
        _refuse(loaded, leaves(loaded, folder, relative, out=out), f"{what} {relative!r}",
                f"the output folder {str(folder)!r}", out)
        path = inside(folder, relative)
        taken = claims.claim(path, owner or what, parts)  # parts: it may be a folder of part files
        if taken:
            raise OutputError(f"{what} {relative!r} would overwrite {taken}; nothing was written there. Choose "
                              f"another path")
        return path
    return folder, place


def _refuse(loaded: LoadedPipeline, why: tuple[str, str] | None, what: str, where: str, out: Any) -> None:
    if why:
        fix = (f"or set allow_outside_output_dir: true in {loaded.file} if you trust it to write there" if out is None
               else f"{OWN_FOLDER}")
        raise OutputError(f"{what} would be outside {where} ({why[0]}); nothing was written there. {why[1]}, {fix}")


def _check_outputs(loaded: LoadedPipeline, place: Place) -> None:
    """Every path the run will write, checked before any step runs (and again as each is written)."""
    for write in writes(loaded):
        place(write.relative, write.what, write.owner, write.folder_ok)


def _check_files(loaded: LoadedPipeline, folder: Path) -> None:
    """Every file the run will write can be written there (no folder in its place, names the file
    system takes): asked once the folder exists, before any step runs."""
    for write in writes(loaded):
        problem = write_problem(inside(folder, write.relative), write.folder_ok)
        if problem:
            raise OutputError(f"{write.what}: cannot write it there: {problem}; nothing was run")


def _write_summary(summary: RunSummary, path: Path) -> None:
    summary.summary_path = str(path)
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(summary.to_dict(), indent=2, default=str))


def run_pipeline(pipeline: str | os.PathLike | LoadedPipeline, backend: str | None = None,
                 out: str | os.PathLike | None = None, registry: Registry | None = None,
                 keep_going: bool = False, cluster: str | None = None,
                 cluster_timeout: float | None = None, overrides: dict[str, Any] | None = None,
                 cache: bool = True) -> RunSummary:
    """Validate (if given a path) and run a pipeline; return and write its :class:`RunSummary`.

    :param backend: override every step's backend (``cpu``, ``gpu``, ``auto``, ...)
    :param out: folder that outputs and the summary are written under, instead of the
        file's ``output_dir`` (default ``out`` beside the pipeline file); your own choice, so it may
        be anywhere (a pipeline file's ``output_dir`` must lie inside the file's folder unless the
        file says ``allow_outside_output_dir: true``); outputs stay inside it all the same
    :param keep_going: run the remaining steps after one fails (a step whose input graph is made from
        a failed step's result is ``not run``, its reason naming that step)
    :param cluster: a Dask scheduler's address, instead of the file's ``cluster:`` section; it is
        connected to only when a step splits its work (else the summary says why not)
    :param cluster_timeout: seconds that scheduler has to answer (default 10)
    :param overrides: values set over the file's by dotted key (``{"steps.sim.params.use_weight": True}``;
        ``graphops run --set``), validated as the file's own; with a ``LoadedPipeline``, give them to
        ``load_pipeline`` instead
    :param cache: read a step's result from the run cache when nothing that made it changed, and keep
        each new one there (:mod:`graphops.pipeline.cache`); ``False`` (``--no-cache``) computes every step
        and keeps nothing
    :param registry: the plugins to run with (default: the installed ones; unused for a ``LoadedPipeline``)
    :raises TypeError: an argument of the wrong type; ``ValueError``: a wrong value (an empty ``out``,
        a ``cluster_timeout`` out of range); each names the parameter, before anything is read
    :raises PipelineError: a step failed, or the cluster could not be reached (the summary is
        written first)
    :raises Interrupted: Ctrl-C (a ``KeyboardInterrupt``; the summary is written first)
    """
    if not isinstance(pipeline, LoadedPipeline):
        check_path("run_pipeline", "pipeline", pipeline, "a pipeline file", "configs/describe_example.yaml",
                   optional=False, other="a LoadedPipeline (from load_pipeline)")
    check_run_arguments(backend, out, registry, keep_going, cluster, cluster_timeout)
    check_overrides("run_pipeline", overrides)
    if not isinstance(cache, bool):
        raise InputTypeError(f"run_pipeline: cache must be True or False; got {cache!r}")
    if overrides and isinstance(pipeline, LoadedPipeline):
        raise InputError("run_pipeline: overrides are set when the file is read: pass them to load_pipeline(path, "
                         "overrides=...), or give run_pipeline the file's path")
    loaded = pipeline if isinstance(pipeline, LoadedPipeline) else load_pipeline(pipeline, registry, out, overrides)
    settings = cluster_settings(loaded, cluster, cluster_timeout)
    if settings is None:
        need_no_cluster(loaded)
    elif isinstance(settings.get("workers"), list):
        sizes = settings["workers"]
        raise InputError(f"{loaded.file}: cluster.workers: {sizes} is a list of cluster sizes, which graphops bench "
                         f"sweeps; a run uses one cluster: give one count (workers: {max(sizes)}), or time the "
                         f"sizes with graphops bench {loaded.file}")
    return _run_all(loaded, backend, out, keep_going, settings, cache)


def on_cluster(loaded: LoadedPipeline, step: Any) -> bool:
    """Whether a step runs on the file's cluster (when it has one): its algorithm splits its work
    and the step does not say ``cluster: false``."""
    return step.cluster and loaded.registry.algorithm(step.algorithm).distributes


def open_cluster(stack: contextlib.ExitStack, loaded: LoadedPipeline, settings: dict | None) -> tuple[Any, str]:
    """A client when a step runs on the cluster asked for (connected here and closed with
    ``stack``), else ``None``; and a line saying which it was (a run's ``summary.cluster``)."""
    if settings is None:
        return None, ""
    where = settings.get("address") or f"a {settings.get('kind', 'local')} cluster started for the run"
    users = [s.id for s in loaded.model.steps if on_cluster(loaded, s)]
    if not users:
        return None, f"not used: no step splits its work (asked for {where})"
    from graphops.engine.cluster import connect

    client = stack.enter_context(connect(**settings))
    return client, f"{where}, for steps {', '.join(users)}"


def cluster_settings(loaded: LoadedPipeline, address: str | None = None,
                     timeout: float | None = None) -> dict | None:
    """The cluster a run uses: ``address`` (the command line's ``--cluster``) or the file's
    ``cluster:`` section, with ``timeout`` when given; ``None`` for none."""
    settings = {"address": address} if address is not None else (
        loaded.model.cluster.model_dump(exclude_none=True) if loaded.model.cluster else None)
    if timeout is not None and (settings or {}).get("address") is None:
        from graphops.errors import InputError

        has = (f"{loaded.file}'s cluster: section starts a local cluster (kind: {settings['kind']}), which has none"
               if settings else f"{loaded.file} has no cluster: section and no --cluster ADDRESS was given")
        raise InputError(f"cluster_timeout (graphops run --cluster-timeout) is how long a running scheduler has to "
                         f"answer; {has}. Drop the timeout, or give the scheduler's address (--cluster ADDRESS)")
    if settings is not None and (timeout is not None or address is not None):
        if timeout is not None:
            settings["timeout"] = timeout
        settings = _checked_cluster(settings)
    return settings


def _checked_cluster(settings: dict) -> dict:
    """A Python caller's ``cluster`` and ``cluster_timeout`` checked as the file keys they override are
    (``cluster.address``, ``cluster.timeout``); the settings as that check gave them."""
    import pydantic

    from graphops.errors import InputError
    from graphops.host.validation import explain
    from graphops.pipeline.schema import ClusterSettings

    try:
        return ClusterSettings.model_validate(settings).model_dump(exclude_none=True)
    except pydantic.ValidationError as exc:
        err = exc.errors()[0]
        key = err["loc"][0] if err["loc"] else "timeout"
        name = {"address": "cluster (graphops run --cluster)", "timeout": "cluster_timeout (graphops run "
                "--cluster-timeout)"}.get(key, "cluster_timeout (graphops run --cluster-timeout)")
        raise InputError(f"run_pipeline: {name}: {explain(err, ClusterSettings)} (checked as the file key "
                         f"cluster.{key} is)") from None


def need_no_cluster(loaded: LoadedPipeline) -> None:
    """Partitioned graphs are read by a Dask cluster's workers: without one, say so before any step."""
    from graphops.errors import ConfigError, ConfigIssue

    used = {g for step in loaded.model.steps for g in step.inputs.values()}
    issues = [ConfigIssue((f"At graphs.{name}", "At key: partitioned"),
                          "a partitioned graph is read and scored by a Dask cluster's workers; add a cluster: "
                          "section ({kind: local-cuda}, {kind: local, workers: 4} or {address: tcp://host:8786}) "
                          "or run with --cluster ADDRESS, or drop partitioned: true to read the files whole")
              for name in loaded.model.graphs if loaded.sources.kind(name) == "daskgraph" and name in used]
    if issues:
        raise ConfigError(loaded.file, issues)


def _run_all(loaded: LoadedPipeline, backend: str | None, out: Any, keep_going: bool,
             settings: dict | None, use_cache: bool = True) -> RunSummary:
    _check_outputs(loaded, _placer(loaded, out)[1])
    folder, place = _placer(loaded, out)
    prepare_folder(folder)
    _check_files(loaded, folder)
    summary = RunSummary(loaded.name, loaded.file, _dt.datetime.now().isoformat(timespec="seconds"),
                         output_dir=str(folder), steps=[StepRecord(s.id, s.algorithm) for s in loaded.model.steps],
                         overrides=dict(loaded.overrides))
    note = trust_note(loaded, out)
    if note:
        logging.getLogger("graphops").warning("%s", note)
        summary.warnings.append(note)
    start = t0 = time.perf_counter()
    rec = summary.steps[0]
    failure: tuple[StepRecord | None, BaseException] | None = None
    needs = flow.reads(loaded)
    kept = {s for pairs in needs.values() for _, s in pairs}  # the steps whose results graphs are made from
    status: dict[str, str] = {}
    keys: dict | None = {} if use_cache else None  # step id -> its run-cache key
    try:
        with contextlib.ExitStack() as stack:
            client, summary.cluster = open_cluster(stack, loaded, settings)
            for i in flow.order(loaded):  # dependencies first, else file order
                step, rec = loaded.model.steps[i], summary.steps[i]
                if failure is not None and not keep_going:
                    break
                summary.order.append(step.id)
                why = flow.blocked(needs[step.id], status)
                if why:  # keep_going past a failure: what reads the failed step's result cannot run
                    rec.reason, status[step.id] = why, rec.status
                    continue
                t0 = time.perf_counter()
                failure = _step(loaded, step, backend, place, rec, client, t0, step.id in kept, keys) or failure
                status[step.id] = rec.status
    except KeyboardInterrupt:
        rec.status, rec.seconds, rec.error = "interrupted", time.perf_counter() - t0, "interrupted (Ctrl-C)"
        summary.status = "interrupted"
    except GraphopsError as exc:  # before any step: the cluster asked for cannot be used
        summary.error, failure = error_line(exc), (None, exc)
    finally:
        summary.seconds = time.perf_counter() - start
        summary.graphs = loaded.sources.info
        try:
            summary.provenance = {**provenance.versions(loaded), "inputs": provenance.inputs(loaded)}
        except Exception as exc:  # what made the run is said where it can be; the summary is written regardless
            summary.provenance = {"error": f"{type(exc).__name__}: {exc}"}
        if summary.status != "interrupted" and failure is not None:
            summary.status = "failed"
        _write_summary(summary, place(summary_name(loaded), "the run summary"))
    if summary.status == "interrupted":
        raise Interrupted(f"interrupted during step {rec.id!r} after {rec.seconds:.1f} s", summary=summary)
    if failure is not None:
        rec, exc = failure
        failed = [r for r in summary.steps if r.status == "failed"]
        what = summary.error if rec is None else f"step {rec.id!r} ({rec.algorithm}) failed: {rec.error}"
        if len(failed) > 1:  # keep_going: every failure, one line each
            what = f"{len(failed)} steps failed:" + "".join(f"\n  step {r.id!r} ({r.algorithm}): {r.error}"
                                                           for r in failed)
        raise PipelineError(what, summary=summary, step=None if rec is None else rec.id,
                            failed=[r.id for r in failed]) from exc
    return summary


def _step(loaded: LoadedPipeline, step: Any, backend: str | None, place: Place, rec: StepRecord, client: Any,
          t0: float, keep: bool = False, keys: dict | None = None) -> tuple[StepRecord, BaseException] | None:
    """Run one step into its record; its failure, if any (reported after the summary is written)."""
    try:
        rec.status = _run_step(loaded, step, backend, place, rec, client, keep, keys)
    except Exception as exc:  # recorded, reported after the summary is written
        rec.status, rec.seconds = "failed", time.perf_counter() - t0
        rec.error = error_line(exc)
        return rec, exc
    return None
