"""Pass 2 of pipeline validation: meaning, checked against the registry and the file system."""
from __future__ import annotations

import os
from typing import Any, Iterator

import pydantic

from ..errors import ConfigIssue, PluginError, choices, did_you_mean
from ..io import OUTPUT_SUFFIXES
from ..validation import explain, format_loc

__all__ = ["check_meaning", "step_crumb"]

Found = Iterator[tuple[str, str]]  # (key, message) pairs


def check_meaning(loaded: Any, data: Any) -> list[ConfigIssue]:
    """Every meaning problem of a structurally valid pipeline, as breadcrumbed issues."""
    issues = []
    for name in loaded.model.graphs:
        issues += [ConfigIssue((f"At graphs.{name}", f"At key: {key}"), msg)
                   for key, msg in _graph_problems(loaded, name)]
    seen: dict[str, int] = {}
    written = {os.path.normpath(loaded.graph_path(g)): f"the input of graph {g!r}"
               for g in loaded.model.graphs if loaded.graph_path(g) is not None}
    for i, step in zip(loaded.step_indices, loaded.model.steps):
        crumb = step_crumb(data, i)
        issues += [ConfigIssue((crumb, f"At key: {key}"), msg)
                   for key, msg in _step_problems(loaded, step, i, seen, written)]
    return issues


def step_crumb(data: Any, index: int) -> str:
    steps = data.get("steps") if isinstance(data, dict) else None
    step = steps[index] if isinstance(steps, list) and index < len(steps) else None
    if not isinstance(step, dict):
        return f"At steps[{index}]"
    named = [f"{k}={step[k]!r}" for k in ("id", "algorithm") if k in step]
    return f"At steps[{index}]" + (f" ({', '.join(named)})" if named else "")


def _graph_problems(loaded: Any, name: str) -> Found:
    src = loaded.model.graphs[name]
    path = loaded.graph_path(name)
    if path is None:
        return  # generated: its parameters were checked with the structure
    if not path.exists():
        yield "path", f"File not found: {src.path!r} (resolved to {str(path)!r})"
        return
    if not os.access(path, os.R_OK):
        yield "path", f"Cannot read {src.path!r}: permission denied"
        return
    formats = ["tu", *loaded.registry.readers]
    if src.format is not None and src.format not in formats:
        yield "format", (f"Unknown format {src.format!r}. Allowed: {choices(formats)}."
                         f"{did_you_mean(src.format, formats)}")
    elif path.is_dir() != (loaded.graph_format(name) == "tu"):
        yield "path", (f"{src.path!r} is a folder; a folder is read as a TU dataset (format: tu)"
                       if path.is_dir() else f"format 'tu' needs a folder; {src.path!r} is a file")
    elif not loaded.graph_format(name):
        yield "format", (f"Cannot tell the format of {src.path!r} from its suffix {path.suffix!r}. "
                         f"Known suffixes: {', '.join(loaded.registry.suffixes())}; or set format: "
                         f"to one of {choices(formats)}")


def _step_problems(loaded: Any, step: Any, i: int, seen: dict[str, int], written: dict) -> Found:
    if step.id in seen:
        yield "id", f"Duplicate step id {step.id!r} (also used by steps[{seen[step.id]}])"
    seen.setdefault(step.id, i)
    try:
        algo = loaded.registry.algorithm(step.algorithm)
    except (ValueError, PluginError) as exc:
        yield "algorithm", str(exc)
        yield from _graph_refs(loaded, step)
        return
    yield from _backend_problems(loaded, step, algo)
    yield from _param_problems(step, algo)
    yield from _input_problems(loaded, step, algo)
    yield from _output_problems(loaded, step, algo, written)


def _backend_problems(loaded: Any, step: Any, algo: Any) -> Found:
    allowed = ["auto", *algo.backends]
    if step.backend is not None and step.backend not in allowed:
        yield "backend", (f"Unknown backend {step.backend!r} for {algo.name}. Allowed: "
                          f"{choices(allowed)}.{did_you_mean(step.backend, allowed)}")
    elif step.backend is None and loaded.model.device not in allowed:
        yield "backend", (f"The pipeline's device {loaded.model.device!r} is not offered by "
                          f"{algo.name} (offered: {choices(allowed)}); set backend: on this step")


def _param_problems(step: Any, algo: Any) -> Found:
    try:
        algo.params.model_validate(step.params)
    except pydantic.ValidationError as exc:
        for err in exc.errors():
            yield f"params.{format_loc(err['loc'])}", explain(err, algo.params)


def _graph_refs(loaded: Any, step: Any) -> Found:
    graphs = list(loaded.declared)
    for slot, gname in step.inputs.items():
        if gname not in graphs:
            yield f"inputs.{slot}", (f"Unknown graph {gname!r}. Declared graphs: {choices(graphs)}."
                                     f"{did_you_mean(gname, graphs)}")


def _input_problems(loaded: Any, step: Any, algo: Any) -> Found:
    slots = {s.name: s for s in algo.inputs}
    for slot, gname in step.inputs.items():
        if slot not in slots:
            yield f"inputs.{slot}", (f"Unknown input slot {slot!r} for {algo.name}. Allowed: "
                                     f"{choices(slots)}.{did_you_mean(slot, slots)}")
    yield from _graph_refs(loaded, step)
    for slot, gname in step.inputs.items():
        if slot in slots and gname in loaded.model.graphs:
            kind = loaded.graph_kind(gname)
            if kind not in slots[slot].kinds:
                yield f"inputs.{slot}", (f"{algo.name} input {slot!r} takes a "
                                         f"{' or '.join(slots[slot].kinds)}; graph {gname!r} is a {kind}")
    missing = [s.name for s in algo.inputs if s.required and s.name not in step.inputs]
    for name in missing:
        yield "inputs", f"Missing input slot {name!r} of {algo.name} (slots: {choices(slots)})"


def _output_problems(loaded: Any, step: Any, algo: Any, written: dict) -> Found:
    if step.output is None:
        return
    allowed = OUTPUT_SUFFIXES[algo.result]
    path = os.path.normpath(loaded.output_dir() / step.output)
    if os.path.splitext(step.output)[1].lower() not in allowed:
        yield "output", (f"{algo.name} returns a {algo.result}; write it to a file ending in "
                         f"{' or '.join(allowed)} (got {step.output!r})")
    elif path in written:
        yield "output", (f"{step.output!r} would overwrite {written[path]}; choose another path")
    written.setdefault(path, f"the output of step {step.id!r}")
