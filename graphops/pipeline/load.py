"""Loading a pipeline file: YAML, then structure (pass 1), then meaning against the registry (pass 2).

Every problem found is collected and raised as one :class:`ConfigError` with a
file -> step -> key trail, the bad value, the allowed values and a did-you-mean.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic

from graphops.errors import ConfigError, ConfigIssue
from graphops.host.registry import Registry, get_registry
from graphops.io.outputs import inside
from graphops.pipeline.sources import Sources
from graphops.version import __version__
from graphops.host.validation import explain
from graphops.pipeline.arguments import check_path, check_registry
from graphops.pipeline.config import config_error, crumbs, read_config
from graphops.pipeline.meaning import check_meaning
from graphops.pipeline.overrides import apply_overrides, check_overrides
from graphops.pipeline.graph_sources import file_loc, validate_source
from graphops.pipeline.schema import SCHEMA_VERSION, Pipeline, Step, path_problem
from graphops.pipeline.yamlfile import load_yaml

__all__ = ["LoadedPipeline", "load_pipeline", "read_config", "load_yaml"]


@dataclass(frozen=True)
class LoadedPipeline:
    """A validated pipeline: the model, where it came from, its graph sources and the registry."""

    model: Pipeline
    file: str
    base: Path
    registry: Registry
    step_indices: tuple[int, ...] = ()  # each step's position in the file
    declared: tuple[str, ...] = ()  # every graph name in the file, valid or not
    # step id -> its Params, built and checked against the graphs' declarations by the meaning pass
    # (they travel with the step into dispatch: a step is checked once)
    params: dict = field(default_factory=dict, compare=False)
    overrides: dict = field(default_factory=dict, compare=False)  # values set from outside (--set), by dotted key

    @functools.cached_property
    def sources(self) -> Sources:
        """The graphs of the file, each loaded once (:class:`graphops.pipeline.sources.Sources`)."""
        return Sources(self.model.graphs, self.base, self.registry, {s.id: s for s in self.model.steps})

    def output_dir(self, out: str | os.PathLike | None = None) -> Path:
        """Where outputs go: ``out`` when given (e.g. ``graphops run --out``), else ``output_dir``."""
        return Path(out) if out is not None else inside(self.base, self.model.output_dir)

    @property
    def name(self) -> str:
        return self.model.name or Path(self.file).stem.replace(".", "_")


def _check_version(file: str, data: Any) -> None:
    if not isinstance(data, dict):
        got = "an empty file" if data is None else f"a {type(data).__name__}"
        raise config_error(file, f"The top level must be a mapping (key: value lines); got {got}")
    version = data.get("version")
    if "version" not in data:
        raise config_error(file, f"Missing required key 'version'. Add 'version: {SCHEMA_VERSION}' at the top",
                    "At key: version")
    if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        raise config_error(file, f"This file uses schema version {version}; graphops {__version__} reads "
                          f"version {SCHEMA_VERSION} and older. Upgrade graphops (pip install -U "
                          f"graphops)", "At key: version")


def _position(issue: ConfigIssue, graphs: tuple[str, ...]) -> tuple[int, int]:
    """Sort key putting issues in file order: top-level keys, then graphs, then steps."""
    head = issue.where[0] if issue.where else ""
    if head.startswith("At steps["):
        return 2, int(head[len("At steps["):].split("]")[0])
    if head.startswith("At graphs."):
        name = head[len("At graphs."):]
        return 1, graphs.index(name) if name in graphs else 0
    return 0, 0


def _valid(model: Any, value: Any) -> Any:
    """``value`` validated by ``model`` (a pydantic model, or a function such as
    :func:`~graphops.pipeline.graph_sources.validate_source`), or ``None``."""
    try:
        return getattr(model, "model_validate", model)(value)
    except pydantic.ValidationError:
        return None


def _partial(data: dict) -> tuple[Pipeline, tuple[int, ...]]:
    """The parts of a structurally invalid file that are valid, so pass 2 can still check them."""
    graphs = data.get("graphs") if isinstance(data.get("graphs"), dict) else {}
    good = {k: g for k, g in ((k, _valid(validate_source, v)) for k, v in graphs.items()) if g is not None}
    raw_steps = data.get("steps") if isinstance(data.get("steps"), list) else []
    steps = [(i, s) for i, s in ((i, _valid(Step, v)) for i, v in enumerate(raw_steps)) if s is not None]
    backend = str(data.get("backend", data.get("device", "auto"))).lower()  # device: its former name
    backend = backend if backend in ("auto", "cpu", "gpu") else "auto"
    output_dir = data.get("output_dir", "out")  # one that is no path is not looked at (check_meaning)
    model = Pipeline.model_construct(version=SCHEMA_VERSION, backend=backend, graphs=good,
                                     steps=[s for _, s in steps], bench=None, name=None,
                                     output_dir=output_dir if path_problem(output_dir) is None else "out",
                                     allow_outside_output_dir=data.get("allow_outside_output_dir") is True)
    return model, tuple(i for i, _ in steps)


def _structure(data: dict) -> tuple[Pipeline, tuple[int, ...], list[ConfigIssue]]:
    """Pass 1: the model (or its valid parts), the steps' indices in the file, and the issues."""
    try:
        model = Pipeline.model_validate(data)
    except pydantic.ValidationError as exc:
        issues = [ConfigIssue(crumbs(data, file_loc(e["loc"])), explain(e, Pipeline)) for e in exc.errors()]
        return (*_partial(data), issues)
    return model, tuple(range(len(model.steps))), []


def load_pipeline(path: str | os.PathLike, registry: Registry | None = None,
                  out: str | os.PathLike | None = None, overrides: dict[str, Any] | None = None) -> LoadedPipeline:
    """Read and validate a pipeline file (both passes); raise one ConfigError listing every problem.

    :param path: the pipeline file (a ``str`` or ``os.PathLike``)
    :param registry: the plugins to check against (default: the installed ones)
    :param out: the folder a run will write to instead of the file's ``output_dir`` (``graphops run
        --out``, your own choice: checked for being writable, not for where it is; every output stays
        inside it, whatever the file says)
    :param overrides: values set over the file's, by dotted key (``{"steps.sim.params.use_weight": True}``,
        ``graphops run --set``: :mod:`graphops.pipeline.overrides`), checked as the file's own are
    :raises TypeError: an argument of the wrong type (naming it); ``ValueError``: an empty path
    """
    check_path("load_pipeline", "path", path, "a pipeline file", "configs/describe_example.yaml", optional=False)
    check_registry("load_pipeline", registry)
    check_path("load_pipeline", "out", out, "a folder", "results")
    check_overrides("load_pipeline", overrides)
    file, data = read_config(path)
    data = apply_overrides(file, data, overrides)
    _check_version(file, data)
    model, indices, issues = _structure(data)
    graphs = data.get("graphs")
    loaded = LoadedPipeline(model, file, Path(path).resolve().parent, registry or get_registry(),
                            indices, tuple(graphs) if isinstance(graphs, dict) else (),
                            overrides=dict(overrides or {}))
    issues += check_meaning(loaded, data, out)
    if issues:
        issues.sort(key=lambda issue: _position(issue, loaded.declared))
        raise ConfigError(file, issues)
    return loaded
