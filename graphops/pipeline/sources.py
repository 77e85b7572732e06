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

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Iterator, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from graphops.io import datasets
from graphops.base.device import module_available
from graphops.errors import InputError, choices, did_you_mean

__all__ = ["GraphSource", "RMat", "Gnm", "Pattern", "Grid2D", "GnpSet", "RandomCycles", "Symmetric", "DeBruijn",
           "Sources", "DeclaredGraph", "SOURCE_KINDS"]

SOURCE_KINDS = ("path", "generate", "dataset")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RMat(_Model):
    """An R-MAT graph (:func:`graphops.io.generate.rmat`)."""

    kind: Literal["rmat"]
    scale: int = Field(ge=1, le=32)
    edge_factor: int = Field(16, ge=1)
    a: float = Field(0.57, ge=0, le=1)
    b: float = Field(0.19, ge=0, le=1)
    c: float = Field(0.19, ge=0, le=1)
    seed: int = 42
    scramble: bool = True
    directed: bool = False
    node_features: int = Field(0, ge=0)
    edge_features: int = Field(0, ge=0)


class Gnm(_Model):
    """``m`` uniform random edges among ``n`` vertices, with features (:func:`graphops.io.generate.gnm`)."""

    kind: Literal["gnm"]
    n: int = Field(ge=1)
    m: int = Field(ge=0)
    directed: bool = True
    seed: int = 42
    node_features: int = Field(0, ge=0)
    edge_features: int = Field(0, ge=0)


class Pattern(_Model):
    """A pattern sampled from another graph of the file (:func:`graphops.io.generate.sample_pattern`)."""

    kind: Literal["pattern"]
    of: str = Field(min_length=1)
    max_nodes: int = Field(9, ge=1)
    seed: int = 42


class RandomCycles(_Model):
    """A union of connected random closed walks, Eulerian (:func:`graphops.io.generate.random_cycles`)."""

    kind: Literal["random_cycles"]
    n: int = Field(ge=1)
    cycles: int = Field(ge=1)
    length: int = Field(ge=1)
    directed: bool = True
    seed: int = 42


class Symmetric(_Model):
    """Every edge of another graph of the file both ways (:func:`graphops.io.generate.symmetric`)."""

    kind: Literal["symmetric"]
    of: str = Field(min_length=1)
    directed: Literal[True] = True


class DeBruijn(_Model):
    """The de Bruijn graph of a string's k-mers (:func:`graphops.io.generate.de_bruijn`)."""

    kind: Literal["de_bruijn"]
    sequence: str | None = Field(None, min_length=2)
    k: int = Field(21, ge=2)
    length: int = Field(1000, ge=2)
    seed: int = 42
    shuffle: bool = True
    directed: Literal[True] = True


class Grid2D(_Model):
    """A 4-neighbour grid (:func:`graphops.io.generate.grid2d`)."""

    kind: Literal["grid2d"]
    rows: int = Field(ge=1)
    cols: int = Field(ge=1)


class GnpSet(_Model):
    """A GraphSet of G(n, p) graphs with labels and attributes (:func:`graphops.io.generate.gnp_set`)."""

    kind: Literal["gnp_set"]
    sizes: dict[int, int] = Field(min_length=1)  # nodes per graph -> number of such graphs
    p: float = Field(0.5, ge=0, le=1)
    n_labels: int = Field(4, ge=1)
    n_attrs: int = Field(2, ge=0)
    seed: int = 42


Generator = Annotated[RMat | Gnm | Pattern | Grid2D | GnpSet | RandomCycles | Symmetric | DeBruijn,
                      Field(discriminator="kind")]
_OF_KINDS = ("pattern", "symmetric")  # generators made from another graph of the file


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


class GraphSource(_Model):
    """Where a graph comes from (a file, a generator or a named data set) and how to read it."""

    path: str | None = Field(None, min_length=1)
    nodes: str | None = Field(None, min_length=1)  # a node file beside a path: id + feature columns
    generate: Generator | None = None
    dataset: str | None = Field(None, min_length=1)
    format: str | None = None
    src: str | int | None = None
    dst: str | int | None = None
    weight: str | int | None = None
    columns: list[str] | None = None
    header: Literal["auto", True, False] = "auto"
    ids: Literal["auto", "integer", "string"] = "auto"
    directed: bool | None = None
    dedupe: bool | None = None
    device: Literal["auto", "cpu", "gpu"] = "cpu"
    partitioned: bool = False  # path is files read by a Dask cluster (a DaskGraph), never in one place

    _lower_device = field_validator("device", mode="before")(_lower)

    @model_validator(mode="after")
    def _one_source(self) -> "GraphSource":
        given = [k for k in SOURCE_KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of 'path' (a file or TU folder), 'generate' (e.g. "
                             "{kind: rmat, scale: 18}) and 'dataset' (e.g. karate)")
        if self.nodes is not None and self.path is None:
            raise ValueError("'nodes' (a node file) goes with 'path' (the edge file)")
        if self.partitioned:
            if self.path is None:
                raise ValueError("partitioned: true reads edge files with Dask; give path: a file pattern "
                                 "(edges/*.parquet) or a folder of parquet files")
            unfit = [k for k, v in (("nodes", self.nodes), ("weight", self.weight), ("dedupe", self.dedupe))
                     if v is not None] + (["ids: string"] if self.ids == "string" else [])
            if unfit:
                raise ValueError(f"a partitioned graph (a Dask edge frame) has integer ids, no weights, no node "
                                 f"file and keeps repeated edges (jaccard counts each once); drop {', '.join(unfit)}")
        return self

    @property
    def is_directed(self) -> bool:
        if self.directed is None and self.generate is not None:
            return bool(getattr(self.generate, "directed", False))
        return bool(self.directed)


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
        from graphops.pipeline.load import load_yaml
        from graphops.host.registry import get_registry

        data = load_yaml(Path(path).read_text(encoding="utf-8")) or {}
        graphs = {k: GraphSource.model_validate(v) for k, v in (data.get("graphs") or {}).items()}
        return cls(graphs, Path(path).resolve().parent, registry or get_registry())

    # what is known before reading ----------------------------------------------------
    def path(self, name: str) -> Path | None:
        """The file or folder a graph is read from; ``None`` for a generated graph or data set."""
        src = self.sources[name]
        return None if src.path is None else self.base / src.path

    def format(self, name: str) -> str:
        """``tu``, ``generated``, ``dataset``, a reader's name, or ``""`` when unknown."""
        src = self.sources[name]
        if src.generate is not None:
            return "generated"
        if src.dataset is not None:
            return "dataset"
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
            return "graphset" if src.generate.kind == "gnp_set" else "graph"
        if src.dataset is not None:
            known = datasets.entry(src.dataset)
            return known.kind if known is not None else "graph"
        return "graphset" if self.format(name) == "tu" else "graph"

    def made_from(self, name: str) -> list[str]:
        """``[name, of, of's of, ...]``: the graphs ``name`` is generated from, in order, ending
        where the chain leaves the file, reaches a graph that is read, or closes a cycle (then the
        last name is the first one repeated: ``[a, b, a]``)."""
        chain = [name]
        while True:
            gen = self.sources[chain[-1]].generate
            of = getattr(gen, "of", None) if gen is not None and gen.kind in _OF_KINDS else None
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
        if src.generate is not None:
            weighted = False  # no generator draws weights (a pattern or symmetric graph drops them too)
        directed = src.is_directed
        gen = src.generate
        if gen is not None and gen.kind == "pattern" and src.directed is None and gen.of in self.sources \
                and self.cycle(name) is None:
            directed = self.declared(gen.of).directed  # a pattern is directed like its graph
        if src.dataset is not None and src.directed is None:
            known = datasets.entry(src.dataset)
            directed = bool(known and known.directed)
        if src.path is not None and src.directed is None:
            reader = self.registry.readers.get(self.format(name))
            if reader is not None and reader.directed is not None:
                directed = reader.directed  # the format's own (k-mers: arcs)
        return DeclaredGraph(name, self.kind(name), directed, weighted)

    def problems(self, name: str) -> Iterator[tuple[str, str]]:
        """``(key, message)`` for each problem found without reading the data."""
        src = self.sources[name]
        if src.generate is not None and src.generate.kind in _OF_KINDS and src.generate.of not in self.sources:
            yield "generate.of", (f"no graph {src.generate.of!r} in this file to make the {src.generate.kind} "
                                  f"graph from. Graphs: {choices(self.sources)}."
                                  f"{did_you_mean(src.generate.of, self.sources)}")
        cycle = self.cycle(name) if src.generate is not None else None
        if cycle is not None and cycle[0] == name and name == min(cycle, key=list(self.sources).index):
            yield "generate.of", self._cycle_problem(cycle)
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
        if not path.exists():
            yield "path", f"File not found: {src.path!r} (resolved to {str(path)!r})"
            return
        if not os.access(path, os.R_OK):
            yield "path", f"Cannot read {src.path!r}: permission denied"
            return
        if src.nodes is not None and not (self.base / src.nodes).is_file():
            yield "nodes", f"File not found: {src.nodes!r} (resolved to {str(self.base / src.nodes)!r})"
        yield from self._format_problems(name, src, path)

    @staticmethod
    def _cycle_problem(cycle: list[str]) -> str:
        fix = ("from a graph that is read or generated on its own (a path, a data set, or e.g. "
               "{kind: rmat, scale: 10})")
        if len(cycle) == 2:
            return f"graph {cycle[0]!r} is generated from itself ({' -> '.join(cycle)}); make it {fix}"
        return (f"graphs generated from each other in a cycle ({' -> '.join(cycle)}), so none can be made first; "
                f"make one of them {fix}")

    def _partitioned_problems(self, name: str, src: GraphSource, path: Path) -> Iterator[tuple[str, str]]:
        from graphops.model.daskgraph import PARTITIONED_FORMATS, edge_files

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
                "generate": src.generate.model_dump() if src.generate is not None else None,
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
            raise InputError(f"graph {name!r}: {self._cycle_problem(cycle)}")
        src, device = self.sources[name], self._device(name)
        if src.generate is not None:
            from graphops.io import generate

            spec = src.generate.model_dump()
            kind = spec.pop("kind")
            if kind == "pattern":
                return generate.sample_pattern(self.get(spec.pop("of")).to("cpu"), **spec).to(device)
            if kind == "symmetric":
                return generate.symmetric(self.get(spec.pop("of")).to(device))
            if kind == "de_bruijn":
                spec.pop("directed")
            if kind == "random_cycles" and device == "gpu":
                return generate.random_cycles(**spec, device="gpu")  # drawn on the GPU
            if kind == "rmat" and device == "gpu" and module_available("pylibraft.random"):
                return generate.rmat(**spec, device="gpu")  # drawn on the GPU, never on the host
            return getattr(generate, kind)(**spec).to(device)
        if src.dataset is not None:
            return datasets.load(src.dataset, device=device, **_read_options(src))
        if src.partitioned:
            from graphops.model.daskgraph import read_edge_files

            return read_edge_files(self.path(name), self.format(name), src=src.src, dst=src.dst,
                                   columns=src.columns, header=src.header, directed=bool(src.directed),
                                   device=device)
        if self.format(name) == "tu":
            from graphops.io.tu import read_tu

            return read_tu(self.path(name)).to(device)
        from graphops.io import read_graph

        return read_graph(self.path(name), src.format, src=src.src, dst=src.dst, weight=src.weight,
                          columns=src.columns, header=src.header, ids=src.ids, device=device,
                          registry=self.registry, nodes=None if src.nodes is None else self.base / src.nodes,
                          **_read_options(src))


def _read_options(src: GraphSource) -> dict[str, Any]:
    """``directed``/``dedupe`` when the file says them (a data set has its own defaults)."""
    return {k: getattr(src, k) for k in ("directed", "dedupe") if getattr(src, k) is not None}
