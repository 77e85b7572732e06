"""Graph sources: where a graph comes from, declared (pydantic, one class a kind:
:mod:`graphops.pipeline.graph_sources`) and loaded (cached by name).

A source is a file or TU folder (``path``), edge files for a cluster (``partitioned: true``), a
generator (``generate``), a named data set (``dataset``), a SMILES file (``smiles``) or an earlier
step's result (``from_step``: its frame's rows as edges, or the result itself).
Pipelines, ``graphops bench`` and plugins (e.g. a sweep command) all read
graphs through :class:`Sources`; none of them reaches into another's internals. In YAML::

    graphs:
      karate: {dataset: karate}                      # bundled with graphops (or from GRAPHOPS_DATA)
      web:    {path: data/web.tsv, header: auto}     # relative to the file's folder
      rmat18: {generate: {kind: rmat, scale: 18}}
"""
from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

import pydantic

from graphops.errors import ConfigError, ConfigIssue, InputError
from graphops.host.validation import explain
from graphops.pipeline.config import config_error, crumbs, read_config
from graphops.pipeline.graph_sources import GeneratedSource, GraphSource, untagged, validate_source

__all__ = ["Sources", "DeclaredGraph"]


@dataclass(frozen=True)
class DeclaredGraph:
    """What a pipeline file says about a graph before it is read: for checks at validate time.

    ``weighted`` is ``None`` when the file does not say (a TU folder, a data set).
    """

    name: str
    kind: str
    directed: bool
    weighted: bool | None


class Sources:
    """Named graph sources, paths relative to ``base``; each graph loaded at most once."""

    def __init__(self, sources: Mapping[str, Any], base: Path, registry: Any, steps: Mapping[str, Any] | None = None):
        self.sources = dict(sources)
        self.base = Path(base)
        self.registry = registry
        self.steps = None if steps is None else dict(steps)  # step id -> step (None: a graphs: section alone)
        self.graphs: dict[str, Any] = {}
        self.info: dict[str, dict[str, Any]] = {}
        self.results: dict[str, Any] = {}  # step id -> its result, for the graphs made from it
        self.produce: Any = None  # step id -> its result, made on demand (graphops bench); None: a run's order

    def result(self, step: str, graph: str) -> Any:
        """The result of ``step`` that graph ``graph`` is made from: kept by the run, or made now."""
        if step not in self.results and self.produce is not None:
            self.results[step] = self.produce(step)
        if step not in self.results:
            raise InputError(f"graph {graph!r} is made from the result of step {step!r}, which is not there (the "
                             f"step has not run or did not finish)")
        return self.results[step]

    def steps_of(self, name: str) -> list[str]:
        """The steps whose results graph ``name`` is made from (through the graphs it is generated from)."""
        return [s for s in (self.sources[g].step_of() for g in self.made_from(name) if g in self.sources)
                if s is not None]

    @classmethod
    def from_file(cls, path: str | os.PathLike, registry: Any = None) -> "Sources":
        """The ``graphs:`` section of a pipeline file (nothing else of it is checked)."""
        from graphops.host.registry import get_registry

        file, data = read_config(path)
        graphs = data.get("graphs") if isinstance(data, dict) else None
        if not isinstance(graphs, dict) or not graphs:
            raise config_error(file, "A graphs: section naming at least one graph is needed here", "At key: graphs")
        sources, issues = {}, []
        for name, given in graphs.items():
            try:
                sources[name] = validate_source(given)
            except pydantic.ValidationError as exc:
                issues += [ConfigIssue(crumbs(data, ("graphs", name, *untagged(e["loc"]))), explain(e, GraphSource))
                           for e in exc.errors()]
        if issues:
            raise ConfigError(file, issues)
        return cls(sources, Path(path).resolve().parent, registry or get_registry())

    # what is known before reading (each kind says: graphops.pipeline.graph_sources) ------------
    def path(self, name: str) -> Path | None:
        """The file or folder a graph is read from; ``None`` for a generated graph or data set."""
        given = self.sources[name].file()
        return None if given is None else self.base / given

    def format(self, name: str) -> str:
        """``tu``, ``generated``, ``dataset``, ``smiles``, a reader's name, or ``""`` when unknown."""
        return self.sources[name].reader_format(self, name)

    def kind(self, name: str) -> str:
        """``graph``, ``graphset``, ``daskgraph`` (partitioned edge files) or ``matrix`` (a step's result)."""
        return self.sources[name].graph_kind(self, name)

    def generator(self, name: str) -> tuple[Any, Any]:
        """``(generator, validated parameters)`` of a generated graph; ``(None, None)`` when it is not
        one, or its kind is not registered; ``(generator, None)`` when its parameters do not validate."""
        src = self.sources[name]
        return src.generator(self) if isinstance(src, GeneratedSource) else (None, None)

    def made_from(self, name: str) -> list[str]:
        """``[name, of, of's of, ...]``: the graphs ``name`` is generated from, in order, ending
        where the chain leaves the file, reaches a graph that is read, or closes a cycle (then the
        last name is the first one repeated: ``[a, b, a]``)."""
        chain = [name]
        while True:
            of = self.sources[chain[-1]].made_of(self)
            if of is None or of not in self.sources:
                return chain
            chain.append(of)
            if of in chain[:-1]:
                return chain[chain.index(of):]

    def cycle(self, name: str) -> list[str] | None:
        """The cycle of generated graphs that ``name`` leads into, if any (``[a, b, a]``)."""
        chain = self.made_from(name)
        return chain if len(chain) > 1 and chain[0] == chain[-1] else None

    def declared(self, name: str) -> DeclaredGraph:
        src = self.sources[name]
        return DeclaredGraph(name, src.graph_kind(self, name), src.is_directed(self, name), src.is_weighted(self, name))

    def problems(self, name: str) -> Iterator[tuple[str, str]]:
        """``(key, message)`` for each problem found without reading the data."""
        return self.sources[name].problems(self, name)

    @staticmethod
    def cycle_problem(cycle: list[str]) -> str:
        fix = ("from a graph that is read or generated on its own (a path, a data set, or e.g. "
               "{kind: rmat, scale: 10})")
        if len(cycle) == 2:
            return f"graph {cycle[0]!r} is generated from itself ({' -> '.join(cycle)}); make it {fix}"
        return (f"graphs generated from each other in a cycle ({' -> '.join(cycle)}), so none can be made first; "
                f"make one of them {fix}")

    # loading ---------------------------------------------------------------------------
    def get(self, name: str) -> Any:
        """The graph (or GraphSet) called ``name``, read or generated on first use."""
        if name not in self.graphs:
            start = time.perf_counter()
            self.graphs[name] = self._load(name)
            path = self.path(name)
            with contextlib.suppress(AttributeError):  # how a message names it (e.g. read as the pairs of a step)
                self.graphs[name].named = f"{name!r}" + (f" ({path})" if path is not None else "")
            self.info[name] = {"path": str(path or ""), **self.sources[name].info(),
                               "format": self.format(name), "load_seconds": time.perf_counter() - start,
                               "repr": repr(self.graphs[name])}
        return self.graphs[name]

    def _device(self, name: str) -> str:
        from graphops.base.device import rapids_available

        device = self.sources[name].device
        if device == "auto":
            device = "gpu" if rapids_available() else "cpu"
        return device

    def _load(self, name: str) -> Any:
        cycle = self.cycle(name)
        if cycle is not None:
            raise InputError(f"graph {name!r}: {self.cycle_problem(cycle)}")
        return self.sources[name].load(self, name, self._device(name))
