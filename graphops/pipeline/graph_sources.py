"""A pipeline file's graph sources, one class a kind (a discriminated union): a file or TU folder
(``path``), edge files a Dask cluster reads (``path`` with ``partitioned: true``), a generated graph
(``generate``), a named data set (``dataset``) and molecules from SMILES strings (``smiles``).

Each kind owns its keys (a key another kind takes is refused, naming the keys this one takes), the
problems found before reading (:meth:`problems`), what is known of the graph before it is read
(:meth:`reader_format`, :meth:`graph_kind`, :meth:`is_directed`, :meth:`is_weighted`) and its loading
(:meth:`load`); a new kind is one class here and its tag in :data:`SOURCE_KINDS`. The methods take
the file's :class:`graphops.pipeline.sources.Sources` (``ctx``: its folder, its registry, the other
graphs) and the graph's name.
"""
from __future__ import annotations

import inspect
import operator
import os
from pathlib import Path
from typing import Annotated, Any, ClassVar, Iterator, Literal, Union

from pydantic import Discriminator, Field, Tag, TypeAdapter, field_validator, model_validator

from graphops.errors import choices, did_you_mean
from graphops.pipeline.fields import PathText, _lower, _Model

__all__ = ["SOURCE_KINDS", "SOURCE_TAGS", "GraphSource", "PathSource", "PartitionedSource", "GeneratedSource",
           "DatasetSource", "SmilesSource", "FromStepSource", "validate_source", "untagged"]

SOURCE_KINDS = ("path", "generate", "dataset", "smiles", "from_step")  # the keys that say where a graph comes from
SOURCE_TAGS = ("path", "partitioned", "generate", "dataset", "smiles", "from_step")  # the union's tags (a kind each)
ONE_SOURCE = ("give exactly one of 'path' (a file or TU folder), 'generate' (e.g. {kind: rmat, scale: 18}), "
              "'dataset' (e.g. karate), 'smiles' (a CSV of SMILES strings) and 'from_step' (an earlier step's "
              "result, e.g. {from_step: sim, src: first, dst: second})")


def _tag(value: Any) -> str | None:
    """The kind a graph's mapping (or source object) is: the one source key it gives (a path with
    ``partitioned: true``: edge files for a cluster); ``None`` when it gives none or several."""
    if isinstance(value, _Source):
        return value.tag
    if not isinstance(value, dict):
        return None
    given = [k for k in SOURCE_KINDS if value.get(k) is not None]
    if len(given) != 1:
        return None
    return "partitioned" if given[0] == "path" and value.get("partitioned") is True else given[0]


def _foreign(cls: Any, data: Any, mine: str) -> Any:
    """Keys that belong to another kind, refused with what they go with (before the generic
    'Unknown key', which would not say so); a key of another kind given as null is taken as absent
    (as before the kinds had keys of their own)."""
    if not isinstance(data, dict):
        return data
    data = {k: v for k, v in data.items() if v is not None or k in cls.model_fields}
    if mine != "from_step" and data.get("where") is not None:
        raise ValueError("'where' filters the rows of an earlier step's result: it goes with 'from_step'")
    if mine != "smiles" and any(data.get(k) is not None for k in ("column", "label")):
        raise ValueError("'column' and 'label' name columns of a SMILES file: they go with 'smiles'")
    if mine not in ("path", "partitioned") and data.get("nodes") is not None:
        raise ValueError("'nodes' (a node file) goes with 'path' (the edge file)")
    if mine not in ("path", "partitioned") and data.get("partitioned") is True:
        raise ValueError("partitioned: true reads edge files with Dask; give path: a file pattern "
                         "(edges/*.parquet) or a folder of parquet files")
    return data


def _file_problems(key: str, given: str, path: Path) -> Iterator[tuple[str, str]]:
    """A file the graph is read from: there, readable, a regular file (a FIFO could wait forever)."""
    from graphops.io.files import special_file

    if not path.exists():
        yield key, f"File not found: {given!r} (resolved to {str(path)!r})"
        return
    if not os.access(path, os.R_OK):
        yield key, f"Cannot read {given!r}: permission denied"
        return
    special = special_file(path)
    if special:
        yield key, f"{given!r} is {special}, not a regular file; reading it could wait forever or never end"


class _Source(_Model):
    """What every kind says: where the graph lives once read."""

    tag: ClassVar[str]
    device: Literal["auto", "cpu", "gpu"] = "cpu"
    partitioned: bool = False  # true: a path's edge files for a cluster (PartitionedSource)

    _lower_device = field_validator("device", mode="before")(_lower)

    def file(self) -> str | None:
        """The file or folder the graph is read from, as the pipeline file gives it."""
        return None

    def reader_format(self, ctx: Any, name: str) -> str:
        return self.tag

    def graph_kind(self, ctx: Any, name: str) -> str:
        """``graph``, ``graphset`` or ``daskgraph``."""
        return "graph"

    def is_directed(self, ctx: Any, name: str) -> bool:
        return False

    def is_weighted(self, ctx: Any, name: str) -> bool | None:
        """Whether the graph has edge weights; ``None`` when the file does not say."""
        return None

    def made_of(self, ctx: Any) -> str | None:
        """The graph of the file this one is made from, if any."""
        return None

    def step_of(self) -> str | None:
        """The step of the file whose result this graph is made from, if any."""
        return None

    def problems(self, ctx: Any, name: str) -> Iterator[tuple[str, str]]:
        """``(key, message)`` for each problem found without reading the data."""
        return iter(())

    def load(self, ctx: Any, name: str, device: str) -> Any:
        raise NotImplementedError

    def info(self) -> dict[str, Any]:
        """What the run summary says of the source beside its path and format."""
        return {"dataset": None, "generate": None}


def _position(value: Any) -> Any:
    if isinstance(value, int) and value < 0:
        raise ValueError(f"a column is a name or a position counted from 0 (the first column is 0); got {value!r}")
    return value


class _EdgeFile(_Source):
    """Keys of edge files (read here or by a cluster's workers)."""

    path: PathText
    format: str | None = None
    src: str | int | None = None
    dst: str | int | None = None
    columns: list[str] | None = None
    header: Literal["auto", True, False] = "auto"
    ids: Literal["auto", "integer", "string"] = "auto"
    directed: bool | None = None

    _columns_from_0 = field_validator("src", "dst", mode="after")(_position)

    folder_format: ClassVar[str]  # what a folder given as path is read as

    def file(self) -> str | None:
        return self.path

    def reader_format(self, ctx: Any, name: str) -> str:
        """``format`` when given, else a folder's kind or the reader of the file's suffix (``""``: none)."""
        if self.format:
            return self.format
        path = ctx.base / self.path
        if path.is_dir():
            return self.folder_format
        reader = ctx.registry.reader_for_suffix(path.suffix)
        return reader.name if reader else ""

    def is_directed(self, ctx: Any, name: str) -> bool:
        if self.directed is not None:
            return bool(self.directed)
        reader = ctx.registry.readers.get(self.reader_format(ctx, name))
        return bool(reader is not None and reader.directed)  # the format's own (k-mers: arcs)


# The keys of an edge file that a TU folder (read whole) does not take.
_EDGE_FILE_KEYS = ("nodes", "src", "dst", "weight", "columns", "ids", "directed", "dedupe")


class PathSource(_EdgeFile):
    """``path``: an edge file (its reader by ``format`` or suffix) or a TU folder, read here."""

    tag: ClassVar[str] = "path"
    folder_format: ClassVar[str] = "tu"  # a TU data set's folder
    nodes: PathText | None = None  # a node file beside a path: id + feature columns
    weight: str | int | None = None
    dedupe: bool | None = None

    _weight_from_0 = field_validator("weight", mode="after")(_position)

    @model_validator(mode="before")
    @classmethod
    def _keys_of_others(cls, data: Any) -> Any:
        return _foreign(cls, data, "path")

    def graph_kind(self, ctx: Any, name: str) -> str:
        return "graphset" if self.reader_format(ctx, name) == "tu" else "graph"

    def is_weighted(self, ctx: Any, name: str) -> bool | None:
        return None if self.graph_kind(ctx, name) == "graphset" else self.weight is not None

    def problems(self, ctx: Any, name: str) -> Iterator[tuple[str, str]]:
        path = ctx.base / self.path
        found = list(_file_problems("path", self.path, path))
        if found:
            yield from found
            return
        if self.nodes is not None:  # the node file: the same checks as the edge file's, and not a folder
            where = ctx.base / self.nodes
            if where.is_dir():
                yield "nodes", f"{self.nodes!r} is a folder; give the node file"
            else:
                yield from _file_problems("nodes", self.nodes, where)
        yield from self._format_problems(ctx, name, path)
        if self.reader_format(ctx, name) == "tu" and path.is_dir():
            from graphops.io.tu import tu_problem

            found = tu_problem(path)
            if found:
                yield "path", found[0]
            for key in _EDGE_FILE_KEYS:
                if getattr(self, key) is not None and key in self.model_fields_set:
                    yield key, (f"a TU folder is read whole (its own files say the edges, labels and graphs); "
                                f"{key!r} does not apply to it: drop it (a TU graph set takes path, format, device)")

    def _format_problems(self, ctx: Any, name: str, path: Path) -> Iterator[tuple[str, str]]:
        formats = ["tu", *ctx.registry.readers]
        fmt = self.reader_format(ctx, name)
        if self.format is not None and self.format not in formats:
            yield "format", (f"Unknown format {self.format!r}. Allowed: {choices(formats)}."
                             f"{did_you_mean(self.format, formats)}")
        elif path.is_dir() != (fmt == "tu"):
            yield "path", (f"{self.path!r} is a folder; a folder is read as a TU dataset (format: tu)"
                           if path.is_dir() else f"format 'tu' needs a folder; {self.path!r} is a file")
        elif not fmt:
            yield "format", (f"Cannot tell the format of {self.path!r} from its suffix {path.suffix!r}. "
                             f"Known suffixes: {', '.join(ctx.registry.suffixes())}; or set format: "
                             f"to one of {choices(formats)}")
        else:
            reader = ctx.registry.readers.get(fmt)
            if reader is not None and reader.directed is not None and self.directed is not None \
                    and self.directed != reader.directed:
                yield "directed", (f"format {reader.name!r} gives {'directed' if reader.directed else 'undirected'} "
                                   f"graphs ({reader.summary}); drop 'directed: {str(self.directed).lower()}'")

    def load(self, ctx: Any, name: str, device: str) -> Any:
        path = ctx.base / self.path
        if self.reader_format(ctx, name) == "tu":
            from graphops.io.tu import read_tu

            return read_tu(path).to(device)
        from graphops.io import read_graph

        return read_graph(path, self.format, src=self.src, dst=self.dst, weight=self.weight, columns=self.columns,
                          header=self.header, ids=self.ids, device=device, registry=ctx.registry,
                          nodes=None if self.nodes is None else ctx.base / self.nodes,
                          **_given(self, "directed", "dedupe"))


class PartitionedSource(_EdgeFile):
    """``path`` with ``partitioned: true``: edge files (a pattern or a folder) that a Dask cluster's
    workers read, never gathered in one place (a :class:`~graphops.model.daskgraph.DaskGraph`)."""

    tag: ClassVar[str] = "partitioned"
    folder_format: ClassVar[str] = "parquet"  # a folder of parquet files

    @model_validator(mode="before")
    @classmethod
    def _keys_of_others(cls, data: Any) -> Any:
        data = _foreign(cls, data, "partitioned")
        if isinstance(data, dict):
            unfit = [k for k in ("nodes", "weight", "dedupe") if data.get(k) is not None] + \
                (["ids: string"] if data.get("ids") == "string" else [])
            if unfit:
                raise ValueError(f"a partitioned graph (a Dask edge frame) has integer ids, no weights, no node "
                                 f"file and keeps repeated edges (jaccard counts each once); drop {', '.join(unfit)}")
        return data

    def graph_kind(self, ctx: Any, name: str) -> str:
        return "daskgraph"

    def is_weighted(self, ctx: Any, name: str) -> bool | None:
        return False

    def problems(self, ctx: Any, name: str) -> Iterator[tuple[str, str]]:
        from graphops.io.partitioned import PARTITIONED_FORMATS, edge_files, not_parquet

        fmt = self.reader_format(ctx, name)
        if fmt not in PARTITIONED_FORMATS:
            yield "format", (f"partitioned edge files are read as {' or '.join(PARTITIONED_FORMATS)}; "
                             f"{self.path!r} is {fmt or 'of an unknown format'}. Name files *.parquet or *.csv, "
                             f"or set format: to one of {choices(PARTITIONED_FORMATS)}")
            return
        found = edge_files(ctx.base / self.path, fmt)
        if not found:
            others = {f: len(edge_files(ctx.base / self.path, f)) for f in PARTITIONED_FORMATS if f != fmt}
            held = "; ".join(f"it holds {n} {f} file(s): give format: {f}" for f, n in others.items() if n)
            default = " (a folder is read as parquet unless format: says otherwise)" if fmt == "parquet" else ""
            yield "path", (f"No {fmt} file matches {self.path!r} (resolved to {str(ctx.base / self.path)!r}){default}; "
                           f"{held or f'give a pattern such as edges/*.{fmt} or a folder of {fmt} files'}")
            return
        why = not_parquet(found[0]) if fmt == "parquet" else None
        if why:
            yield "format", f"{found[0]} {why}; give format: csv for text files, or a pattern that leaves it out"

    def load(self, ctx: Any, name: str, device: str) -> Any:
        from graphops.io.partitioned import read_edge_files

        return read_edge_files(ctx.base / self.path, self.reader_format(ctx, name), src=self.src, dst=self.dst,
                               columns=self.columns, header=self.header, directed=bool(self.directed), device=device)


class GeneratedSource(_Source):
    """``generate: {kind: <a registered generator>, its parameters}``."""

    tag: ClassVar[str] = "generate"
    generate: dict[str, Any]

    @model_validator(mode="before")
    @classmethod
    def _keys_of_others(cls, data: Any) -> Any:
        data = _foreign(cls, data, "generate")
        if isinstance(data, dict) and data.get("directed") is not None:
            raise ValueError("a generated graph's 'directed' is its generator's parameter: give it inside generate: "
                             "(e.g. {kind: gnm, n: 100, m: 300, directed: false}) when the generator takes it "
                             "(graphops plugins lists each generator's parameters)")
        return data

    @field_validator("generate", mode="after")
    @classmethod
    def _kind_named(cls, value: Any) -> Any:
        if not (isinstance(value.get("kind"), str) and value["kind"]):
            raise ValueError("a generated graph names its generator and its parameters, e.g. {kind: rmat, scale: 18} "
                             "(graphops plugins lists the generator kinds)")
        return value

    def reader_format(self, ctx: Any, name: str) -> str:
        return "generated"

    def graph_kind(self, ctx: Any, name: str) -> str:
        gen = ctx.registry.generators.get(self.generate["kind"])
        return gen.makes if gen is not None else "graph"

    def is_weighted(self, ctx: Any, name: str) -> bool | None:
        return False  # no generator draws weights (a pattern or symmetric graph drops them too)

    def is_directed(self, ctx: Any, name: str) -> bool:
        """The generator's ``directed`` (given or its default); one made from another graph of the
        file without a ``directed`` of its own is directed like that graph."""
        gen, params = self.generator(ctx)
        if params is not None and "directed" in type(params).model_fields:
            return bool(params.directed)
        of = self.made_of(ctx)
        if of in ctx.sources and ctx.cycle(name) is None:
            return ctx.declared(of).directed
        return False

    def generator(self, ctx: Any) -> tuple[Any, Any]:
        """``(generator, validated parameters)``; ``(None, None)`` when its kind is not registered, or
        ``(generator, None)`` when its parameters do not validate (:meth:`problems` says why)."""
        import pydantic

        spec = dict(self.generate)
        gen = ctx.registry.generators.get(spec.pop("kind", None))
        if gen is None:
            return None, None
        try:
            return gen, gen.model.model_validate(spec)
        except pydantic.ValidationError:
            return gen, None

    def made_of(self, ctx: Any) -> str | None:
        gen = ctx.registry.generators.get(self.generate.get("kind"))
        of = self.generate.get("of") if gen is not None and "of" in gen.model.model_fields else None
        return of if isinstance(of, str) else None  # (another value: the parameters' own error)

    def problems(self, ctx: Any, name: str) -> Iterator[tuple[str, str]]:
        import pydantic

        from graphops.host.validation import explain, format_loc

        try:
            gen = ctx.registry.generator(self.generate["kind"])
        except (ValueError, LookupError) as exc:
            yield "generate.kind", str(exc)
            return
        try:
            gen.model.model_validate({k: v for k, v in self.generate.items() if k != "kind"})
        except pydantic.ValidationError as exc:
            for err in exc.errors():
                yield f"generate.{format_loc(err['loc'])}" if err["loc"] else "generate", explain(err, gen.model)
        of = self.made_of(ctx)
        if of is not None and of not in ctx.sources:
            yield "generate.of", (f"no graph {of!r} in this file to make the {gen.name} graph from. Graphs: "
                                  f"{choices(ctx.sources)}.{did_you_mean(of, ctx.sources)}")
        elif of is not None and ctx.cycle(name) is None and ctx.kind(of) != "graph":
            yield "generate.of", (f"the {gen.name} generator makes a graph from one graph; {of!r} is a "
                                  f"{ctx.kind(of)} ({'a Dask edge frame' if ctx.kind(of) == 'daskgraph' else 'a set'}"
                                  f" of graphs). Name a graph of the file that is one graph")
        cycle = ctx.cycle(name)
        if cycle is not None and cycle[0] == name and name == min(cycle, key=list(ctx.sources).index):
            yield "generate.of", ctx.cycle_problem(cycle)

    def load(self, ctx: Any, name: str, device: str) -> Any:
        """Drawn on the GPU when it lives there and its generator can, else on the host and then moved;
        one made from another graph gets that graph on the same terms."""
        from graphops.base.device import module_available
        from graphops.host.algorithm import load_target

        gen, params = self.generator(ctx)
        if gen is None or params is None:  # a file not validated first (e.g. read by a command)
            spec = dict(self.generate)
            gen = ctx.registry.generator(spec.pop("kind"))
            params = gen.model.model_validate(spec)
        on_gpu = device == "gpu" and gen.gpu is not None and all(module_available(m) for m in gen.gpu)
        fn = load_target(gen.target)
        takes = inspect.signature(fn).parameters  # fields it does not take (a fixed directed: true) describe it
        given = params.model_dump()
        of = given.pop("of", None)
        args = {k: v for k, v in given.items() if k in takes}
        if on_gpu and "device" in takes:
            args["device"] = "gpu"
        made = fn(**args) if of is None else fn(ctx.get(of).to(device if on_gpu else "cpu"), **args)
        return made.to(device)

    def info(self) -> dict[str, Any]:
        return {"dataset": None, "generate": dict(self.generate)}


class DatasetSource(_Source):
    """``dataset: <name>``: bundled with graphops, or fetched once (``graphops datasets``)."""

    tag: ClassVar[str] = "dataset"
    dataset: str = Field(min_length=1)
    directed: bool | None = None
    dedupe: bool | None = None

    @model_validator(mode="before")
    @classmethod
    def _keys_of_others(cls, data: Any) -> Any:
        return _foreign(cls, data, "dataset")

    def _entry(self) -> Any:
        from graphops.io import datasets

        return datasets.entry(self.dataset)

    def graph_kind(self, ctx: Any, name: str) -> str:
        known = self._entry()
        return known.kind if known is not None else "graph"

    def is_directed(self, ctx: Any, name: str) -> bool:
        if self.directed is not None:
            return bool(self.directed)
        known = self._entry()
        return bool(known and known.directed)

    def problems(self, ctx: Any, name: str) -> Iterator[tuple[str, str]]:
        from graphops.io import datasets

        problem = datasets.dataset_problem(self.dataset)
        if problem:
            yield "dataset", problem
        elif self.graph_kind(ctx, name) == "graphset":
            for key in ("directed", "dedupe"):
                if getattr(self, key) is not None:
                    yield key, (f"data set {self.dataset!r} is a set of graphs, read as published; {key!r} does "
                                f"not apply to it: drop it")

    def load(self, ctx: Any, name: str, device: str) -> Any:
        from graphops.io import datasets

        return datasets.load(self.dataset, device=device, registry=ctx.registry, **_given(self, "directed", "dedupe"))

    def info(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "generate": None}


class SmilesSource(_Source):
    """``smiles``: a CSV/TSV of SMILES strings, read into a GraphSet of molecules (RDKit)."""

    tag: ClassVar[str] = "smiles"
    smiles: PathText
    column: str | None = Field(None, min_length=1)  # the column of SMILES strings (default smiles)
    label: str | None = Field(None, min_length=1)  # a column of per-molecule labels

    @model_validator(mode="before")
    @classmethod
    def _keys_of_others(cls, data: Any) -> Any:
        return _foreign(cls, data, "smiles")

    def file(self) -> str | None:
        return self.smiles

    def graph_kind(self, ctx: Any, name: str) -> str:
        return "graphset"

    def problems(self, ctx: Any, name: str) -> Iterator[tuple[str, str]]:
        from graphops.base.device import module_available

        path = ctx.base / self.smiles
        found = list(_file_problems("smiles", self.smiles, path))
        if found:
            yield from found
            return
        if not module_available("rdkit"):
            yield "smiles", "reading SMILES needs RDKit: pip install 'graphops[chem]' (or rdkit)"
            return
        try:  # the header names the columns asked for (read before any molecule is)
            with open(path, encoding="utf-8") as fh:
                header = fh.readline().rstrip("\r\n").split("\t" if path.suffix.lower() == ".tsv" else ",")
        except (OSError, UnicodeDecodeError) as exc:
            yield "smiles", f"Cannot read {self.smiles!r}: {exc}"
            return
        header = [h.strip().strip('"') for h in header]
        for key, column in (("column", self.column or "smiles"), ("label", self.label)):
            if column is not None and column not in header:
                yield key, (f"{self.smiles!r} has no column {column!r}; its header: {', '.join(map(repr, header))}."
                            f"{did_you_mean(column, header)}")

    def load(self, ctx: Any, name: str, device: str) -> Any:
        from graphops.io.molecules import read_smiles

        return read_smiles(ctx.base / self.smiles, self.column or "smiles", self.label, device)


# A where: filter is column -> {comparison: value}: a structure, never an expression.
Scalar = Union[bool, int, float, str]


class FromStepSource(_Source):
    """``from_step: <step id>``: an earlier step's result. With ``src`` and ``dst`` (columns of the
    step's result frame): a graph of the rows that pass ``where`` ({column: {ge: 0.5}}, every
    condition true), ``weight`` a column, ``directed`` as for an edge file. Without them: the result
    itself (e.g. a Gram step's matrix), for a step whose input takes a matrix. The graph lives where
    the result does (pandas or cuDF) unless ``device`` says otherwise. The step runs before the
    steps that read this graph (steps run in dependency order)."""

    tag: ClassVar[str] = "from_step"
    from_step: str = Field(pattern=r"^[a-z][a-z0-9_-]*$")
    src: str | None = Field(None, min_length=1)
    dst: str | None = Field(None, min_length=1)
    weight: str | None = Field(None, min_length=1)
    directed: bool = False
    where: dict[str, dict[Literal["eq", "ne", "lt", "le", "gt", "ge", "in"], Union[Scalar, list[Scalar]]]] | None = None
    device: Literal["auto", "cpu", "gpu"] = "auto"

    @model_validator(mode="before")
    @classmethod
    def _keys_of_others(cls, data: Any) -> Any:
        return _foreign(cls, data, "from_step")

    @model_validator(mode="after")
    def _columns_or_none(self) -> "FromStepSource":
        if (self.src is None) != (self.dst is None):
            raise ValueError("a graph from a step's result frame names both columns, src: and dst: (e.g. src: first, "
                             "dst: second); give neither to take the result itself (a matrix)")
        if self.src is None and (self.weight is not None or self.where):
            raise ValueError("weight: and where: pick columns and rows of a result frame: give src: and dst: too")
        for column, tests in (self.where or {}).items():
            for op, value in tests.items():
                if (op == "in") != isinstance(value, list):
                    raise ValueError(f"where: {column}: {op}: " + ("'in' takes a list of values, e.g. in: [1, 2]"
                                     if op == "in" else f"{op!r} takes one value, not a list (use 'in' for a list)"))
                if op in ("lt", "le", "gt", "ge") and isinstance(value, bool):
                    raise ValueError(f"where: {column}: {op}: {str(value).lower()} orders by true/false; compare with a "
                                     f"number or a text")
        return self

    def columns(self) -> list[tuple[str, str]]:
        """``(key, column)`` of every column named: src, dst, weight and the where: columns."""
        named = [(k, getattr(self, k)) for k in ("src", "dst", "weight") if getattr(self, k) is not None]
        return named + [(f"where.{c}", c) for c in self.where or {}]

    def reader_format(self, ctx: Any, name: str) -> str:
        return "from_step"

    def graph_kind(self, ctx: Any, name: str) -> str:
        return "graph" if self.src is not None else "matrix"

    def is_directed(self, ctx: Any, name: str) -> bool:
        return self.directed

    def is_weighted(self, ctx: Any, name: str) -> bool | None:
        return self.weight is not None

    def step_of(self) -> str:
        return self.from_step

    def problems(self, ctx: Any, name: str) -> Iterator[tuple[str, str]]:
        steps = getattr(ctx, "steps", None)
        if steps is None:  # the graphs: section read alone (a command): steps are not known there
            return
        if self.from_step not in steps:
            yield "from_step", (f"Unknown step {self.from_step!r}. Steps of this file: {choices(steps)}."
                                f"{did_you_mean(self.from_step, steps)}")
            return
        algo = ctx.registry.algorithms.get(steps[self.from_step].algorithm)
        if algo is None:  # reported at the step
            return
        if self.src is not None and algo.result not in ("frame", "array_or_frame"):
            yield "from_step", (f"step {self.from_step!r} ({algo.name}) returns a matrix, not a frame of rows: drop "
                                f"src:/dst:/weight:/where: to take the matrix itself")
            return
        if self.src is None and algo.result == "frame":
            yield "from_step", (f"step {self.from_step!r} ({algo.name}) returns a frame of rows, not a matrix: give "
                                f"src: and dst: (columns {choices(list(algo.outputs or ()))}) to make a graph of its rows")
            return
        outputs = list(algo.outputs or ())
        for key, column in self.columns() if outputs else ():
            if column not in outputs:
                yield key, (f"step {self.from_step!r} ({algo.name}) returns the columns {choices(outputs)}; "
                            f"{column!r} is not one of them.{did_you_mean(column, outputs)}")

    def load(self, ctx: Any, name: str, device: str) -> Any:
        from graphops.errors import InputError

        result = ctx.result(self.from_step, name)
        frame_like = hasattr(result, "columns") and hasattr(result, "dtypes")
        where = f"graph {name!r} (from_step: {self.from_step})"
        if self.src is None:
            if frame_like or not (hasattr(result, "shape") and len(result.shape) == 2):
                raise InputError(f"{where}: the step's result is {_what(result)}, not a matrix; give src: and dst: to "
                                 f"make a graph of its rows, or take the matrix of a step that returns one")
            return result
        if not frame_like:
            raise InputError(f"{where}: the step's result is {_what(result)} with its parameters, not a frame of rows: "
                             f"drop src:/dst:/weight:/where: to take it as a matrix, or set the step's parameters so "
                             f"that it returns rows")
        missing = [(k, c) for k, c in self.columns() if c not in result.columns]
        if missing:
            raise InputError(f"{where}: the step's result has no column {missing[0][1]!r} ({missing[0][0]}); its "
                             f"columns: {choices([str(c) for c in result.columns])}")
        from graphops.model.graph import Graph

        frame = result
        keep = None
        for column, tests in (self.where or {}).items():
            for op, value in tests.items():
                mask = _compare(frame[column], op, value, f"{where}: where: {column}: {op}")
                keep = mask if keep is None else keep & mask
        if keep is not None:
            frame = frame[keep]
        graph = Graph.from_edgelist(frame, src=self.src, dst=self.dst, weight=self.weight, directed=self.directed)
        return graph if self.device == "auto" else graph.to(device)

    def info(self) -> dict[str, Any]:
        return {"dataset": None, "generate": None, "from_step": self.from_step}


def _what(result: Any) -> str:
    if hasattr(result, "columns"):
        return f"a frame of {len(result.columns)} columns"
    if hasattr(result, "shape"):
        return f"a {len(result.shape)}-D array of shape {tuple(result.shape)}"
    return f"a {type(result).__name__}"


def _kind_of(value: Any) -> str:
    """``bool``, ``number`` or ``text``: what a where: value is, to match a column's kind."""
    if isinstance(value, bool):
        return "bool"
    return "number" if isinstance(value, (int, float)) else "text"


def _column_kind(column: Any) -> str:
    kind = getattr(column.dtype, "kind", "O")
    return "bool" if kind == "b" else "number" if kind in "iufc" else "text"


def _compare(column: Any, op: str, value: Any, where: str) -> Any:
    """A column compared with a value, as a where: condition (pandas and cuDF alike); a value of another
    kind than the column's (a number against text ids, true against numbers) is an error, not a silent
    empty or misread filter."""
    from graphops.errors import InputError

    have = _column_kind(column)
    for v in value if op == "in" else [value]:
        if _kind_of(v) != have:
            raise InputError(f"{where}: {v!r} is {_kind_of(v)}, and the column holds {have} values "
                             f"({column.dtype}): give a {have} value" + (" (quote numbers written as text: '5')"
                                                                          if have == "text" else ""))
    if op == "in":
        return column.isin(value)
    return getattr(operator, op)(column, value)  # eq, ne, lt, le, gt, ge: the operator module's names


def _given(src: Any, *keys: str) -> dict[str, Any]:
    """The reading options the file says (a data set or reader has its own defaults for the others)."""
    return {k: getattr(src, k) for k in keys if getattr(src, k, None) is not None}


GraphSource = Annotated[
    Union[Annotated[PathSource, Tag("path")], Annotated[PartitionedSource, Tag("partitioned")],
          Annotated[GeneratedSource, Tag("generate")], Annotated[DatasetSource, Tag("dataset")],
          Annotated[SmilesSource, Tag("smiles")], Annotated[FromStepSource, Tag("from_step")]],
    Discriminator(_tag, custom_error_type="one_source", custom_error_message=ONE_SOURCE)]
"""Where a graph comes from: one of the kinds above, told apart by the one source key it gives."""

_ADAPTER: TypeAdapter[Any] = TypeAdapter(GraphSource)


def validate_source(value: Any) -> _Source:
    """``value`` (a graph's mapping in the file) as its kind's source; ``pydantic.ValidationError``
    otherwise (locations start with the kind's tag: :func:`untagged` drops it)."""
    return _ADAPTER.validate_python(value)


def untagged(loc: tuple) -> tuple:
    """A pydantic location within one graph's mapping without the kind's tag pydantic puts first (an
    error of the whole mapping, from its kind's own checks, is then at the graph itself)."""
    return loc[1:] if loc and loc[0] in SOURCE_TAGS else loc


def file_loc(loc: tuple) -> tuple:
    """A pydantic location in a whole pipeline file with the graph source's tag dropped
    (``("graphs", "g", "path", "weight")`` -> ``("graphs", "g", "weight")``)."""
    if len(loc) >= 3 and loc[0] == "graphs":
        return (*loc[:2], *untagged(loc[2:]))
    return loc
