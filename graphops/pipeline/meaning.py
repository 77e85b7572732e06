"""Pass 2 of pipeline validation: meaning, checked against the registry and the file system.

Everything knowable without reading the data is checked here, so ``graphops validate``
catches it: graph sources, algorithms, backends, parameters, input slots and kinds, the
algorithm's declared input requirements (``Params.check_declared``: e.g. a directed
graph sent to an algorithm for undirected ones), output suffixes, outputs that would
leave ``output_dir`` or overwrite an input or each other (by real path, links followed), an
output that cannot be written there (a folder in its place, a name too long), and an output
folder that cannot be written. Where a run may write is :mod:`graphops.pipeline.confine`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pydantic

from graphops.errors import ConfigIssue, PluginError, choices, did_you_mean
from graphops.io.outputs import OUTPUT_SUFFIXES, folder_problem, inside
from graphops.host.validation import explain, format_loc
from graphops.pipeline.config import step_crumb
from graphops.pipeline.confine import (OWN_FOLDER, TRUST, Claims, folder_output, leaves, output_dir_leaves, picture_of,
                                       summary_name, write_problem)
from graphops.pipeline.schema import path_problem

__all__ = ["check_meaning", "step_crumb"]

Found = Iterator[tuple[str, str]]  # (key, message) pairs
_RESULTS = {"frame": "a frame", "array": "an array", "array_or_frame": "an array or a frame"}


@dataclass
class _Outputs:
    """Where a run would write: the folder, what messages call it, the run's own folder (``out``, or
    ``None``), whether paths under it are checked (not when the file's ``output_dir`` already leaves the
    file's folder or is no path: one error says so), whether files in it are (not when the folder
    itself cannot take them), and the files of the run by real path."""

    folder: Path
    claims: Claims
    out: Any = None
    checked: bool = True
    files: bool = True

    @property
    def called(self) -> str:
        return "output_dir" if self.out is None else "the output folder"

    def leaving(self, loaded: Any, relative: str, what: str) -> str | None:
        """The message when ``relative`` (``what``: an output, a picture) would leave the folder."""
        found = leaves(loaded, self.folder, relative, out=self.out) if self.checked else None
        if not found:
            return None
        fix = f"{found[1]}, {TRUST}" if self.out is None else f"{found[1]}: {OWN_FOLDER}"
        return f"{what}{relative!r} would be written outside {self.called} ({found[0]}). {fix}"

    def unwritable(self, relative: str, what: str, folder_ok: bool = False) -> str | None:
        """Why the file ``relative`` (``what``: the output) could not be written (a folder there, a name too
        long), if checked."""
        if not (self.checked and self.files):
            return None
        problem = write_problem(inside(self.folder, relative), folder_ok)
        return problem and f"Cannot write {what} there: {problem}"


def _folder_problems(loaded: Any, outs: _Outputs, data: Any) -> Iterator[str]:
    """The file's output folder's problems: outside the file's folder, not writable, a summary that would
    leave it or cannot be written. A folder given to the run (``out``) is the caller's: the run checks it
    (an OutputError); only files in it are checked here."""
    if outs.out is not None:
        outs.files = folder_problem(outs.folder) is None
        return
    given = data.get("output_dir", "out") if isinstance(data, dict) else "out"
    if path_problem(given) is not None:  # reported by the structure pass
        outs.checked = False
        return
    outside_file = output_dir_leaves(loaded)
    if outside_file:
        outs.checked = False
        yield (f"{loaded.model.output_dir!r} would put the outputs outside the folder of this file "
               f"({outside_file[0]}). {outside_file[1]}, {TRUST}")
        return
    problem = folder_problem(outs.folder)
    if problem:
        outs.files = False
        yield f"Cannot write outputs there: {problem}"
    summary = outs.leaving(loaded, summary_name(loaded), "The run summary ") or outs.unwritable(summary_name(loaded), "the run summary")
    if summary:
        yield summary


def check_meaning(loaded: Any, data: Any, out: str | os.PathLike | None = None) -> list[ConfigIssue]:
    """Every meaning problem of a structurally valid pipeline, as breadcrumbed issues; ``out``: the
    folder the run writes to instead of the file's ``output_dir`` (``graphops run --out``)."""
    outs = _Outputs(loaded.output_dir(out), Claims(loaded), out)
    issues = [ConfigIssue(("At key: output_dir",), problem) for problem in _folder_problems(loaded, outs, data)]
    for name in loaded.model.graphs:
        issues += [ConfigIssue((f"At graphs.{name}", f"At key: {key}"), msg)
                   for key, msg in loaded.sources.problems(name)]
    seen: dict[str, int] = {}
    for i, step in zip(loaded.step_indices, loaded.model.steps):
        crumb = step_crumb(data, i)
        issues += [ConfigIssue((crumb, f"At key: {key}"), msg)
                   for key, msg in _step_problems(loaded, step, i, seen, outs)]
    issues += _cycle_issues(loaded, data)
    reads = (loaded.model.bench.reads if loaded.model.bench else None) or {}
    issues += [ConfigIssue((f"At bench.reads.{name}", "At key: graph"), f"Unknown graph {case.graph!r}. Graphs of "
                           f"this file: {choices(loaded.model.graphs)}.{did_you_mean(case.graph, loaded.model.graphs)}")
               for name, case in reads.items() if case.graph not in loaded.model.graphs]
    return issues


def _cycle_issues(loaded: Any, data: Any) -> list[ConfigIssue]:
    """Steps that feed each other through graphs made from their results: one issue, at the first of
    them in the file."""
    from graphops.pipeline.flow import cycle, cycle_problem

    links = cycle(loaded)
    if links is None:
        return []
    first = [s.id for s in loaded.model.steps].index(links[0][0])
    return [ConfigIssue((step_crumb(data, loaded.step_indices[first]), "At key: inputs"), cycle_problem(links))]


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
        fine = yield from _declared_problems(loaded, step, algo, params)
        if fine and seen.get(step.id) == i:  # built and checked here: dispatch takes them as they are
            loaded.params[step.id] = params
    yield from _output_problems(loaded, step, algo, outs, params)


def _backend_problems(loaded: Any, step: Any, algo: Any) -> Found:
    allowed = ["auto", *algo.backends]
    asked = step.backend if step.backend is not None else loaded.model.backend
    if asked in algo.unusable:  # declared by the plugin, left out by the registry
        yield "backend", (f"Backend {asked!r} of {algo.name} is not offered: {algo.unusable[asked]}. Offered: "
                          f"{choices(allowed)}")
    elif step.backend is not None and step.backend not in allowed:
        yield "backend", (f"Unknown backend {step.backend!r} for {algo.name}. Allowed: "
                          f"{choices(allowed)}.{did_you_mean(step.backend, allowed)}")
    elif step.backend is None and loaded.model.backend not in allowed:
        yield "backend", (f"The pipeline's backend {loaded.model.backend!r} is not offered by "
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
    parted = [g for g in step.inputs.values() if g in loaded.model.graphs and loaded.sources.kind(g) == "daskgraph"]
    if not step.cluster and parted:
        ok = False
        yield "cluster", (f"cluster: false runs the step in this process, but graph {parted[0]!r} is partitioned "
                          f"(partitioned: true: read and scored by the cluster's workers); drop the step's "
                          f"cluster: false, or drop partitioned: true to read the files whole here")
    return ok


def _declared_problems(loaded: Any, step: Any, algo: Any, params: Any) -> Any:
    """Yield what the graphs' declarations refuse; return whether they were checked and passed."""
    if any(g not in loaded.model.graphs for g in step.inputs.values()):
        return False  # a graph source with problems of its own (reported there)
    declared = {slot: loaded.sources.declared(g) for slot, g in step.inputs.items()}
    try:
        params.check_declared(**declared)
    except ValueError as exc:
        yield "inputs", str(exc)
        return False
    return True


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
        picture = str(picture_of(step.output))
        problem = outs.leaving(loaded, picture, "The picture ") or outs.unwritable(picture, "the picture")
        taken = outs.claims.claim(inside(outs.folder, picture), f"the picture of step {step.id!r}")
        if problem or taken:
            yield "plot", problem or f"The picture {picture!r} would overwrite {taken}; choose another output name"


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
    leaving = outs.leaving(loaded, step.output, "")
    if leaving:
        yield "output", leaving
        return
    taken = outs.claims.claim(inside(outs.folder, step.output), f"the output of step {step.id!r}",
                              folder_output(loaded, step))
    if os.path.splitext(step.output)[1].lower() not in allowed:
        what = "several arrays with these parameters" if several else _RESULTS.get(result, result)
        what += " with these parameters" if result != algo.result else ""
        yield "output", (f"{algo.name} returns {what}; write it to a file ending in "
                         f"{' or '.join(allowed)} (got {step.output!r})")
    elif taken:
        yield "output", (f"{step.output!r} would overwrite {taken}; choose another path")
    else:
        problem = outs.unwritable(step.output, "the output", folder_output(loaded, step))
        if problem:
            yield "output", problem
