"""Pass 2 of pipeline validation: meaning, checked against the registry and the file system.

Everything knowable without reading the data is checked here, so ``graphops validate``
catches it: graph sources, algorithms, backends, parameters, input slots and kinds, the
algorithm's declared input requirements (``Params.check_declared``: e.g. a directed
graph sent to an algorithm for undirected ones), output suffixes, outputs that would
leave ``output_dir`` or overwrite an input, and an output folder that cannot be written.

Confinement (unless the file says ``allow_outside_output_dir: true``): the file's ``output_dir`` lies
inside the file's folder, and every file a run writes (outputs, pictures, the run summary) inside
the output folder: no absolute path, no ``..`` out of it, no symbolic link on the way (the file
itself included) that leads out of it. :func:`leaves` is the one rule; the run applies it again
as it writes (``graphops.pipeline.run``), since a link can appear after validation.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pydantic

from graphops.errors import ConfigIssue, PluginError, choices, did_you_mean
from graphops.io.outputs import OUTPUT_SUFFIXES, folder_problem, inside, leaving_link, outside
from graphops.host.validation import explain, format_loc
from graphops.pipeline.config import step_crumb

__all__ = ["check_meaning", "step_crumb", "leaves", "output_dir_leaves", "summary_name", "picture_of"]

Found = Iterator[tuple[str, str]]  # (key, message) pairs
_RESULTS = {"frame": "a frame", "array": "an array", "array_or_frame": "an array or a frame"}
_TRUST = "or set 'allow_outside_output_dir: true' at the top of the file if you trust this pipeline to write there"


def leaves(loaded: Any, folder: str | os.PathLike, relative: str, what: str = "path") -> tuple[str, str] | None:
    """Why ``relative`` under ``folder`` would be written outside it, and the fix; ``None`` when it stays
    inside, or when the file allows writing outside (``allow_outside_output_dir: true``)."""
    if loaded.model.allow_outside_output_dir:
        return None
    why = outside(relative)
    if why:
        return why, f"Give a {what} inside it"
    why = leaving_link(folder, relative)
    return (why, f"Remove the link, or give a {what} that does not pass through it") if why else None


def output_dir_leaves(loaded: Any) -> tuple[str, str] | None:
    """Why the file's ``output_dir`` would put the outputs outside the file's folder, and the fix."""
    return leaves(loaded, loaded.base, loaded.model.output_dir, "folder")


def summary_name(loaded: Any) -> str:
    """The run summary's file name in the output folder."""
    return f"{loaded.name}.summary.json"


@dataclass
class _Outputs:
    """Where a run would write: the folder, what messages call it, whether paths under it are checked
    (not when the file's ``output_dir`` already leaves the file's folder: one error says so), and the
    files written so far (normalized path -> what it is)."""

    folder: Path
    called: str = "output_dir"
    checked: bool = True
    written: dict = field(default_factory=dict)

    def leaving(self, loaded: Any, relative: str, what: str) -> str | None:
        """The message when ``relative`` (``what``: an output, a picture) would leave the folder."""
        out = leaves(loaded, self.folder, relative) if self.checked else None
        return out and f"{what}{relative!r} would be written outside {self.called} ({out[0]}). {out[1]}, {_TRUST}"


def _folder_problems(loaded: Any, outs: _Outputs, out: Any) -> Iterator[str]:
    """The file's output folder's problems: outside the file's folder, not writable, a summary that would
    leave it. A folder given to the run (``out``) is the caller's: the run checks it (an OutputError)."""
    if out is not None:
        return
    outside_file = output_dir_leaves(loaded)
    if outside_file:
        outs.checked = False
        yield (f"{loaded.model.output_dir!r} would put the outputs outside the folder of this file "
               f"({outside_file[0]}). {outside_file[1]}, {_TRUST}")
        return
    problem = folder_problem(outs.folder)
    if problem:
        yield f"Cannot write outputs there: {problem}"
    summary = outs.leaving(loaded, summary_name(loaded), "The run summary ")
    if summary:
        yield summary


def check_meaning(loaded: Any, data: Any, out: str | os.PathLike | None = None) -> list[ConfigIssue]:
    """Every meaning problem of a structurally valid pipeline, as breadcrumbed issues; ``out``: the
    folder the run writes to instead of the file's ``output_dir`` (``graphops run --out``)."""
    outs = _Outputs(loaded.output_dir(out), "output_dir" if out is None else "the output folder")
    issues = [ConfigIssue(("At key: output_dir",), problem) for problem in _folder_problems(loaded, outs, out)]
    for name in loaded.model.graphs:
        issues += [ConfigIssue((f"At graphs.{name}", f"At key: {key}"), msg)
                   for key, msg in loaded.sources.problems(name)]
    seen: dict[str, int] = {}
    outs.written = {os.path.normpath(loaded.sources.path(g)): f"the input of graph {g!r}"
                    for g in loaded.model.graphs if loaded.sources.path(g) is not None}
    for i, step in zip(loaded.step_indices, loaded.model.steps):
        crumb = step_crumb(data, i)
        issues += [ConfigIssue((crumb, f"At key: {key}"), msg)
                   for key, msg in _step_problems(loaded, step, i, seen, outs)]
    reads = (loaded.model.bench.reads if loaded.model.bench else None) or {}
    issues += [ConfigIssue((f"At bench.reads.{name}", "At key: graph"), f"Unknown graph {case.graph!r}. Graphs of "
                           f"this file: {choices(loaded.model.graphs)}.{did_you_mean(case.graph, loaded.model.graphs)}")
               for name, case in reads.items() if case.graph not in loaded.model.graphs]
    return issues


def _step_problems(loaded: Any, step: Any, i: int, seen: dict[str, int], outs: _Outputs) -> Found:
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
    params = yield from _param_problems(step, algo)
    inputs_ok = yield from _input_problems(loaded, step, algo)
    if params is not None and inputs_ok:
        yield from _declared_problems(loaded, step, algo, params)
    yield from _output_problems(loaded, step, algo, outs, params)


def _backend_problems(loaded: Any, step: Any, algo: Any) -> Found:
    allowed = ["auto", *algo.backends]
    asked = step.backend if step.backend is not None else loaded.model.device
    if asked in algo.unusable:  # declared by the plugin, left out by the registry
        yield "backend", (f"Backend {asked!r} of {algo.name} is not offered: {algo.unusable[asked]}. Offered: "
                          f"{choices(allowed)}")
    elif step.backend is not None and step.backend not in allowed:
        yield "backend", (f"Unknown backend {step.backend!r} for {algo.name}. Allowed: "
                          f"{choices(allowed)}.{did_you_mean(step.backend, allowed)}")
    elif step.backend is None and loaded.model.device not in allowed:
        yield "backend", (f"The pipeline's device {loaded.model.device!r} is not offered by "
                          f"{algo.name} (offered: {choices(allowed)}); set backend: on this step")


def _param_problems(step: Any, algo: Any) -> Any:
    try:
        return algo.params.model_validate(step.params)
    except pydantic.ValidationError as exc:
        for err in exc.errors():
            yield ".".join(["params", format_loc(err["loc"])][:2 if err["loc"] else 1]), explain(err, algo.params)
    return None


def _graph_refs(loaded: Any, step: Any) -> Found:
    graphs = list(loaded.declared)
    for slot, gname in step.inputs.items():
        if gname not in graphs:
            yield f"inputs.{slot}", (f"Unknown graph {gname!r}. Declared graphs: {choices(graphs)}."
                                     f"{did_you_mean(gname, graphs)}")


def _input_problems(loaded: Any, step: Any, algo: Any) -> Any:
    """Yield the input problems; return whether every input names a usable graph of a fit kind."""
    slots = {s.name: s for s in algo.inputs}
    slots.update({old: s for s in algo.inputs for old in s.renamed_from
                  if old in step.inputs and algo.renamed(old)})  # a former name: taken, with a warning
    ok = True
    for slot, gname in step.inputs.items():
        if slot not in slots:
            ok = False
            yield f"inputs.{slot}", (f"Unknown input slot {slot!r} for {algo.name}. Allowed: "
                                     f"{choices(slots)}.{did_you_mean(slot, slots)}")
    for issue in _graph_refs(loaded, step):
        ok = False
        yield issue
    for slot, gname in step.inputs.items():
        if slot in slots and gname in loaded.model.graphs:
            kind = loaded.sources.kind(gname)
            accepted = slots[slot].source_kinds()
            if kind not in accepted:
                ok = False
                why = ""
                if kind == "daskgraph":
                    why = (f" (partitioned: true, read by Dask; algorithms that take one: "
                           f"{loaded.registry.taking(kind)}; drop partitioned to read it whole)")
                yield f"inputs.{slot}", (f"{algo.name} input {slot!r} takes a "
                                         f"{' or '.join(accepted)}; graph {gname!r} is a {kind}{why}")
    for name in [s.name for s in algo.inputs if s.required and s.name not in step.inputs]:
        ok = False
        yield "inputs", f"Missing input slot {name!r} of {algo.name} (slots: {choices(slots)})"
    return ok


def _declared_problems(loaded: Any, step: Any, algo: Any, params: Any) -> Found:
    if any(g not in loaded.model.graphs for g in step.inputs.values()):
        return  # a graph source with problems of its own (reported there)
    declared = {slot: loaded.sources.declared(g) for slot, g in step.inputs.items()}
    try:
        params.check_declared(**declared)
    except ValueError as exc:
        yield "inputs", str(exc)


def _plot_problems(loaded: Any, step: Any, algo: Any, outs: _Outputs) -> Found:
    from graphops.io.plots import plot_problem

    if step.output is None:
        yield "plot", "plot: true writes a picture beside the step's output; give the step an output"
    elif algo.plot is None:
        drawn = sorted(a.name for a in loaded.registry.algorithms.values() if a.plot)
        yield "plot", f"{algo.name} draws no picture (algorithms that do: {', '.join(drawn) or 'none'})"
    elif plot_problem():
        yield "plot", plot_problem()
    elif any(loaded.sources.kind(g) == "daskgraph" for g in step.inputs.values() if g in loaded.model.graphs):
        yield "plot", ("plot: true draws from the whole result in one process; the result of a partitioned "
                       "graph stays in Dask (written by the workers): drop plot")
    elif not outs.leaving(loaded, step.output, ""):
        picture = outs.leaving(loaded, str(picture_of(step.output)), "The picture ")
        if picture:
            yield "plot", picture


def picture_of(output: str) -> Path:
    """The picture beside an output, relative to the output folder (``graphops.io.plots.picture_path``)."""
    from graphops.io.plots import picture_path

    return picture_path(os.path.normpath(output))


def _output_problems(loaded: Any, step: Any, algo: Any, outs: _Outputs, params: Any = None) -> Found:
    if step.plot:
        yield from _plot_problems(loaded, step, algo, outs)
    if step.output is None:
        return
    result = (params.result_kind() if params is not None else None) or algo.result
    allowed = OUTPUT_SUFFIXES[result] + tuple(algo.writers)
    several = params is not None and params.several_arrays()
    if several:
        allowed = (".npz",)
    path, written = os.path.normpath(inside(outs.folder, step.output)), outs.written
    leaving = outs.leaving(loaded, step.output, "")
    if leaving:
        yield "output", leaving
    elif os.path.splitext(step.output)[1].lower() not in allowed:
        what = "several arrays with these parameters" if several else _RESULTS.get(result, result)
        what += " with these parameters" if result != algo.result else ""
        yield "output", (f"{algo.name} returns {what}; write it to a file ending in "
                         f"{' or '.join(allowed)} (got {step.output!r})")
    elif path in written:
        yield "output", (f"{step.output!r} would overwrite {written[path]}; choose another path")
    written.setdefault(path, f"the output of step {step.id!r}")
