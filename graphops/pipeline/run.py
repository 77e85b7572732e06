"""Executing a validated pipeline: load graphs once, run steps in order, write outputs atomically."""
from __future__ import annotations

import datetime as _dt
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..device import rapids_available
from ..dispatch import Outcome, execute_plan, plan
from ..plugins import call_hook
from ..io import atomic_path, read_graph, write_result
from ..registry import Registry
from ..tu import read_tu
from .load import LoadedPipeline, load_pipeline

__all__ = ["run_pipeline", "RunSummary", "StepRecord", "GraphCache", "step_backend"]


@dataclass
class StepRecord:
    """What one step did."""

    id: str
    algorithm: str
    backend: str
    device: str
    seconds: float
    prepare_seconds: float
    reason: str
    output: str | None
    shape: list[int]


@dataclass
class RunSummary:
    """What a pipeline run did; also written as JSON next to the outputs."""

    pipeline: str
    file: str
    started: str
    seconds: float = 0.0
    graphs: dict[str, dict[str, Any]] = field(default_factory=dict)
    steps: list[StepRecord] = field(default_factory=list)
    summary_path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class GraphCache:
    """Graphs of a pipeline, each read at most once, with its load time."""

    def __init__(self, loaded: LoadedPipeline):
        self.loaded = loaded
        self.graphs: dict[str, Any] = {}
        self.info: dict[str, dict[str, Any]] = {}

    def get(self, name: str) -> Any:
        if name not in self.graphs:
            start = time.perf_counter()
            self.graphs[name] = self._read(name)
            gen = self.loaded.model.graphs[name].generate
            self.info[name] = {"path": str(self.loaded.graph_path(name) or ""),
                               "generate": gen.model_dump() if gen is not None else None,
                               "format": self.loaded.graph_format(name),
                               "load_seconds": time.perf_counter() - start,
                               "repr": repr(self.graphs[name])}
        return self.graphs[name]

    def _read(self, name: str) -> Any:
        src, path = self.loaded.model.graphs[name], self.loaded.graph_path(name)
        device = src.device
        if device == "auto":
            device = "gpu" if rapids_available() else "cpu"
        if src.generate is not None:
            from .. import generate

            spec = src.generate.model_dump()
            return getattr(generate, spec.pop("kind"))(**spec).to(device)
        if self.loaded.graph_format(name) == "tu":
            return read_tu(path).to(device)
        return read_graph(path, src.format, src=src.src, dst=src.dst, weight=src.weight,
                          directed=src.directed, dedupe=src.dedupe, columns=src.columns,
                          device=device, registry=self.loaded.registry)


def step_backend(loaded: LoadedPipeline, step: Any, override: str | None) -> str:
    """The backend a step asks for: the override, else its own, else the pipeline's device."""
    return override or step.backend or loaded.model.device


def _shape(result: Any) -> list[int]:
    return [int(x) for x in getattr(result, "shape", (len(result),))]


def _output_path(loaded: LoadedPipeline, output: str, out: str | os.PathLike | None) -> Path:
    return loaded.output_dir(out) / output


def _run_step(loaded: LoadedPipeline, cache: GraphCache, step: Any, backend: str | None,
              out: Any) -> StepRecord:
    pm = loaded.registry.pm
    algo = loaded.registry.algorithm(step.algorithm)
    inputs = {slot: cache.get(gname) for slot, gname in step.inputs.items()}
    planned = plan(algo, inputs, step_backend(loaded, step, backend), step.params, loaded.registry)
    call_hook(pm, "graphops_step_start", pipeline=loaded.model, step=step, backend=planned.backend)
    done: Outcome = execute_plan(planned)
    call_hook(pm, "graphops_step_end", pipeline=loaded.model, step=step, backend=done.backend,
              result=done.result, seconds=done.seconds)
    written = None
    if step.output:
        written = str(write_result(done.result, _output_path(loaded, step.output, out)))
    return StepRecord(step.id, algo.name, done.backend, done.device, done.seconds,
                      done.prepare_seconds, done.reason, written, _shape(done.result))


def run_pipeline(pipeline: str | os.PathLike | LoadedPipeline, backend: str | None = None,
                 out: str | os.PathLike | None = None, registry: Registry | None = None) -> RunSummary:
    """Validate (if given a path) and run a pipeline; return and write its :class:`RunSummary`.

    :param backend: override every step's backend (``cpu``, ``gpu``, ``auto``, ...)
    :param out: folder that outputs and the summary are written under, instead of the
        file's ``output_dir`` (default ``out`` beside the pipeline file)
    """
    loaded = pipeline if isinstance(pipeline, LoadedPipeline) else load_pipeline(pipeline, registry)
    summary = RunSummary(loaded.name, loaded.file, _dt.datetime.now().isoformat(timespec="seconds"))
    start = time.perf_counter()
    cache = GraphCache(loaded)
    for step in loaded.model.steps:
        summary.steps.append(_run_step(loaded, cache, step, backend, out))
    summary.seconds = time.perf_counter() - start
    summary.graphs = cache.info
    path = _output_path(loaded, f"{loaded.name}.summary.json", out)
    summary.summary_path = str(path)
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(summary.to_dict(), indent=2))
    return summary
