"""Graph sources: where a graph comes from, declared (pydantic) and loaded (cached by name).

A source is a file or TU folder (``path``), a generator (``generate``) or a named data set
(``dataset``). Pipelines, ``graphops bench`` and plugins (e.g. a sweep command) all read
graphs through :class:`Sources`; none of them reaches into another's internals. In YAML::

    graphs:
      karate: {dataset: karate}                      # bundled with graphops (or from GRAPHOPS_DATA)
      web:    {path: data/web.tsv, header: auto}     # relative to the file's folder
      rmat18: {generate: {kind: rmat, scale: 18}}
"""
from __future__ import annotations

import inspect
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

import pydantic

from graphops.base.device import module_available
from graphops.errors import ConfigError, ConfigIssue, InputError, choices, did_you_mean
from graphops.host.algorithm import load_target
from graphops.host.validation import explain, format_loc
from graphops.io import datasets
from graphops.io.files import special_file
from graphops.pipeline.config import config_error, crumbs, read_config
from graphops.pipeline.schema import GraphSource

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

    def __init__(self, sources: Mapping[str, GraphSource], base: Path, registry: Any):
        self.sources = dict(sources)
        self.base = Path(base)
        self.registry = registry
        self.graphs: dict[str, Any] = {}
        self.info: dict[str, dict[str, Any]] = {}

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
                sources[name] = GraphSource.model_validate(given)
            except pydantic.ValidationError as exc:
                issues += [ConfigIssue(crumbs(data, ("graphs", name, *e["loc"])), explain(e, GraphSource))
                           for e in exc.errors()]
        if issues:
            raise ConfigError(file, issues)
        return cls(sources, Path(path).resolve().parent, registry or get_registry())

    # what is known before reading ----------------------------------------------------
    def path(self, name: str) -> Path | None:
        """The file or folder a graph is read from; ``None`` for a generated graph or data set."""
        src = self.sources[name]
        given = src.path if src.path is not None else src.smiles
        return None if given is None else self.base / given

    def format(self, name: str) -> str:
        """``tu``, ``generated``, ``dataset``, a reader's name, or ``""`` when unknown."""
        src = self.sources[name]
        if src.generate is not None:
            return "generated"
        if src.dataset is not None:
            return "dataset"
        if src.smiles is not None:
            return "smiles"
        if src.format:
            return src.format
        path = self.path(name)
        if src.partitioned and path.is_dir():
            return "parquet"
        if path.is_dir():
            return "tu"
        reader = self.registry.reader_for_suffix(path.suffix)
        return reader.name if reader else ""

    def kind(self, name: str) -> str:
        """``graph``, ``graphset`` or ``daskgraph`` (partitioned edge files)."""
        src = self.sources[name]
        if src.partitioned:
            return "daskgraph"
        if src.generate is not None:
            gen = self.registry.generators.get(src.generate["kind"])
            return gen.makes if gen is not None else "graph"
        if src.dataset is not None:
            known = datasets.entry(src.dataset)
            return known.kind if known is not None else "graph"
        return "graphset" if self.format(name) in ("tu", "smiles") else "graph"

    # generated graphs ---------------------------------------------------------------
    def generator(self, name: str) -> tuple[Any, Any]:
        """``(generator, validated parameters)`` of a generated graph; ``(None, None)`` when its
        kind is not registered or its parameters do not validate (:meth:`problems` says why)."""
        spec = dict(self.sources[name].generate or {})
        gen = self.registry.generators.get(spec.pop("kind", None))
        if gen is None:
            return None, None
        try:
            return gen, gen.model.model_validate(spec)
        except pydantic.ValidationError:
            return gen, None

    def _of(self, name: str) -> str | None:
        """The graph of the file a generated graph is made from (its ``of``), if any."""
        spec = self.sources[name].generate
        gen = self.registry.generators.get(spec.get("kind")) if spec is not None else None
        return spec.get("of") if gen is not None and "of" in gen.model.model_fields else None

    def made_from(self, name: str) -> list[str]:
        """``[name, of, of's of, ...]``: the graphs ``name`` is generated from, in order, ending
        where the chain leaves the file, reaches a graph that is read, or closes a cycle (then the
        last name is the first one repeated: ``[a, b, a]``)."""
        chain = [name]
        while True:
            of = self._of(chain[-1])
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
        weighted = None if src.path is None or self.kind(name) == "graphset" else src.weight is not None
        directed = bool(src.directed)
        if src.generate is not None:
            weighted = False  # no generator draws weights (a pattern or symmetric graph drops them too)
            directed = self._generated_directed(name) if src.directed is None else bool(src.directed)
        if src.dataset is not None and src.directed is None:
            known = datasets.entry(src.dataset)
            directed = bool(known and known.directed)
        if src.path is not None and src.directed is None:
            reader = self.registry.readers.get(self.format(name))
            if reader is not None and reader.directed is not None:
                directed = reader.directed  # the format's own (k-mers: arcs)
        return DeclaredGraph(name, self.kind(name), directed, weighted)

    def _generated_directed(self, name: str) -> bool:
        """A generator's ``directed`` (given, or its default); one made from another graph of the
        file without a ``directed`` of its own is directed like that graph."""
        gen, params = self.generator(name)
        if params is not None and "directed" in type(params).model_fields:
            return bool(params.directed)
        of = self._of(name)
        if of in self.sources and self.cycle(name) is None:
            return self.declared(of).directed
        return False

    def problems(self, name: str) -> Iterator[tuple[str, str]]:
        """``(key, message)`` for each problem found without reading the data."""
        src = self.sources[name]
        if src.generate is not None:
            yield from self._generator_problems(name, src.generate)
        if src.dataset is not None:
            problem = datasets.dataset_problem(src.dataset)
            if problem:
                yield "dataset", problem
            return
        path = self.path(name)
        if path is None:
            return
        if src.partitioned:
            yield from self._partitioned_problems(name, src, path)
            return
        key, given = ("smiles", src.smiles) if src.smiles is not None else ("path", src.path)
        if not path.exists():
            yield key, f"File not found: {given!r} (resolved to {str(path)!r})"
            return
        if not os.access(path, os.R_OK):
            yield key, f"Cannot read {given!r}: permission denied"
            return
        special = special_file(path)
        if special:
            yield key, f"{given!r} is {special}, not a regular file; reading it could wait forever or never end"
            return
        if src.smiles is not None:
            yield from _smiles_problems(path, src)
            return
        if src.nodes is not None and not (self.base / src.nodes).is_file():
            yield "nodes", f"File not found: {src.nodes!r} (resolved to {str(self.base / src.nodes)!r})"
        yield from self._format_problems(name, src, path)

    def _generator_problems(self, name: str, spec: dict) -> Iterator[tuple[str, str]]:
        try:
            gen = self.registry.generator(spec["kind"])
        except (ValueError, LookupError) as exc:
            yield "generate.kind", str(exc)
            return
        try:
            gen.model.model_validate({k: v for k, v in spec.items() if k != "kind"})
        except pydantic.ValidationError as exc:
            for err in exc.errors():
                yield f"generate.{format_loc(err['loc'])}" if err["loc"] else "generate", explain(err, gen.model)
        of = self._of(name)
        if of is not None and of not in self.sources:
            yield "generate.of", (f"no graph {of!r} in this file to make the {gen.name} graph from. Graphs: "
                                  f"{choices(self.sources)}.{did_you_mean(of, self.sources)}")
        cycle = self.cycle(name)
        if cycle is not None and cycle[0] == name and name == min(cycle, key=list(self.sources).index):
            yield "generate.of", self._cycle_problem(cycle)

    @staticmethod
    def _cycle_problem(cycle: list[str]) -> str:
        fix = ("from a graph that is read or generated on its own (a path, a data set, or e.g. "
               "{kind: rmat, scale: 10})")
        if len(cycle) == 2:
            return f"graph {cycle[0]!r} is generated from itself ({' -> '.join(cycle)}); make it {fix}"
        return (f"graphs generated from each other in a cycle ({' -> '.join(cycle)}), so none can be made first; "
                f"make one of them {fix}")

    def _partitioned_problems(self, name: str, src: GraphSource, path: Path) -> Iterator[tuple[str, str]]:
        from graphops.io.partitioned import PARTITIONED_FORMATS, edge_files

        fmt = self.format(name)
        if fmt not in PARTITIONED_FORMATS:
            yield "format", (f"partitioned edge files are read as {' or '.join(PARTITIONED_FORMATS)}; "
                             f"{src.path!r} is {fmt or 'of an unknown format'}. Name files *.parquet or *.csv, "
                             f"or set format: to one of {choices(PARTITIONED_FORMATS)}")
        elif not edge_files(path, fmt):
            yield "path", (f"No {fmt} file matches {src.path!r} (resolved to {str(path)!r}); give a pattern "
                           f"such as edges/*.{fmt} or a folder of parquet files")

    def _format_problems(self, name: str, src: GraphSource, path: Path) -> Iterator[tuple[str, str]]:
        formats = ["tu", *self.registry.readers]
        if src.format is not None and src.format not in formats:
            yield "format", (f"Unknown format {src.format!r}. Allowed: {choices(formats)}."
                             f"{did_you_mean(src.format, formats)}")
        elif path.is_dir() != (self.format(name) == "tu"):
            yield "path", (f"{src.path!r} is a folder; a folder is read as a TU dataset (format: tu)"
                           if path.is_dir() else f"format 'tu' needs a folder; {src.path!r} is a file")
        elif not self.format(name):
            yield "format", (f"Cannot tell the format of {src.path!r} from its suffix {path.suffix!r}. "
                             f"Known suffixes: {', '.join(self.registry.suffixes())}; or set format: "
                             f"to one of {choices(formats)}")
        else:
            reader = self.registry.readers.get(self.format(name))
            if reader is not None and reader.directed is not None and src.directed is not None \
                    and src.directed != reader.directed:
                yield "directed", (f"format {reader.name!r} gives {'directed' if reader.directed else 'undirected'} "
                                   f"graphs ({reader.summary}); drop 'directed: {str(src.directed).lower()}'")

    # loading ---------------------------------------------------------------------------
    def get(self, name: str) -> Any:
        """The graph (or GraphSet) called ``name``, read or generated on first use."""
        if name not in self.graphs:
            start = time.perf_counter()
            self.graphs[name] = self._load(name)
            src = self.sources[name]
            self.info[name] = {
                "path": str(self.path(name) or ""), "dataset": src.dataset,
                "generate": dict(src.generate) if src.generate is not None else None,
                "format": self.format(name), "load_seconds": time.perf_counter() - start,
                "repr": repr(self.graphs[name])}
        return self.graphs[name]

    def _generate(self, name: str, device: str) -> Any:
        """A generated graph, drawn on the GPU when it lives there and its generator can, else on the
        host and then moved; one made from another graph gets that graph on the same terms."""
        gen, params = self.generator(name)
        if gen is None or params is None:  # a file not validated first (e.g. read by a command)
            spec = dict(self.sources[name].generate)
            gen = self.registry.generator(spec.pop("kind"))
            params = gen.model.model_validate(spec)
        on_gpu = device == "gpu" and gen.gpu is not None and all(module_available(m) for m in gen.gpu)
        fn = load_target(gen.target)
        takes = inspect.signature(fn).parameters  # fields it does not take (a fixed directed: true) describe it
        given = params.model_dump()
        of = given.pop("of", None)
        args = {k: v for k, v in given.items() if k in takes}
        if on_gpu and "device" in takes:
            args["device"] = "gpu"
        made = fn(**args) if of is None else fn(self.get(of).to(device if on_gpu else "cpu"), **args)
        return made.to(device)

    def _device(self, name: str) -> str:
        from graphops.base.device import rapids_available

        device = self.sources[name].device
        if device == "auto":
            device = "gpu" if rapids_available() else "cpu"
        return device

    def _load(self, name: str) -> Any:
        cycle = self.cycle(name)
        if cycle is not None:
            raise InputError(f"graph {name!r}: {self._cycle_problem(cycle)}")
        src, device = self.sources[name], self._device(name)
        if src.generate is not None:
            return self._generate(name, device)
        if src.dataset is not None:
            return datasets.load(src.dataset, device=device, registry=self.registry, **_read_options(src))
        if src.partitioned:
            from graphops.io.partitioned import read_edge_files

            return read_edge_files(self.path(name), self.format(name), src=src.src, dst=src.dst,
                                   columns=src.columns, header=src.header, directed=bool(src.directed),
                                   device=device)
        if src.smiles is not None:
            from graphops.io.molecules import read_smiles

            return read_smiles(self.path(name), src.column or "smiles", src.label, device)
        if self.format(name) == "tu":
            from graphops.io.tu import read_tu

            return read_tu(self.path(name)).to(device)
        from graphops.io import read_graph

        return read_graph(self.path(name), src.format, src=src.src, dst=src.dst, weight=src.weight,
                          columns=src.columns, header=src.header, ids=src.ids, device=device,
                          registry=self.registry, nodes=None if src.nodes is None else self.base / src.nodes,
                          **_read_options(src))


def _smiles_problems(path: Path, src: GraphSource) -> Iterator[tuple[str, str]]:
    """The SMILES file's header names the columns asked for (read before any molecule is)."""
    from graphops.base.device import module_available

    if not module_available("rdkit"):
        yield "smiles", "reading SMILES needs RDKit: pip install 'graphops[chem]' (or rdkit)"
        return
    try:
        with open(path, encoding="utf-8") as fh:
            header = fh.readline().rstrip("\r\n").split("\t" if path.suffix.lower() == ".tsv" else ",")
    except (OSError, UnicodeDecodeError) as exc:
        yield "smiles", f"Cannot read {src.smiles!r}: {exc}"
        return
    header = [h.strip().strip('"') for h in header]
    for key, name in (("column", src.column or "smiles"), ("label", src.label)):
        if name is not None and name not in header:
            yield key, (f"{src.smiles!r} has no column {name!r}; its header: {', '.join(map(repr, header))}."
                        f"{did_you_mean(name, header)}")


def _read_options(src: GraphSource) -> dict[str, Any]:
    """``directed``/``dedupe`` when the file says them (a data set has its own defaults)."""
    return {k: getattr(src, k) for k in ("directed", "dedupe") if getattr(src, k) is not None}
