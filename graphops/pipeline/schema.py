"""Pipeline file structure (pass 1): pydantic models that need no plugins.

A pipeline file is a YAML mapping::

    version: 1                  # schema version; newer files ask for a newer graphops
    name: karate                # optional; names the run summary
    backend: auto               # default backend of every step: auto | cpu | gpu (device: its former name)
    output_dir: out             # outputs and the run summary go here (inside this file's folder)
    allow_outside_output_dir: false   # output_dir and outputs may not be absolute, climb out with '..'
                                #   or pass a symbolic link leading out (graphops.pipeline.confine); true
                                #   lets them, with a warning naming each such path, and never with --out
    graphs:
      karate:                   # [a-z][a-z0-9_-]*
        dataset: karate         # a data set by name (bundled, or from GRAPHOPS_DATA)
      web:
        path: data/web.tsv      # relative to this file's folder; a folder is a TU dataset
        format: tsv             # optional: inferred from the suffix
        src: 0                  # column name or 0-based position (default 0)
        dst: 1                  # (default 1)
        weight: null            # column, or null for unweighted
        columns: [u, v]         # names for a file without header (optional)
        header: auto            # text files: auto (a header only if the line cannot be data) | true | false
        ids: auto               # text files: auto | integer | string (names, e-mail addresses, ...)
        directed: false
        dedupe: false           # drop repeated edges (u-v and v-u are one undirected edge)
        device: cpu             # home of the graph: cpu (pandas), gpu (cuDF), auto (cuDF if usable)
      rmat18:                   # instead of a path, a generated graph:
        generate: {kind: rmat, scale: 18, edge_factor: 8, seed: 42}
      grid:
        generate: {kind: grid2d, rows: 4096, cols: 4096}
      molecules:                # a GraphSet of G(n, p) graphs
        generate: {kind: gnp_set, sizes: {10: 180, 50: 76}, p: 0.5, seed: 20261121}
      mols:                     # molecules from SMILES (the chem extra): a GraphSet, atoms and bonds
        smiles: data/molecules.csv  # with GraphDot's feature names; column: the SMILES column
        column: smiles          # (default smiles), label: a column of per-molecule labels
        label: active
      big:                      # edge files read by the cluster's workers (needs cluster:), never
        path: edges/*.parquet   # in one place: a pattern or a folder of .parquet (or .csv) files;
        partitioned: true       # integer ids, no weights; jaccard runs on it, its output is written
                                # by the workers (.parquet: a folder of files, .csv: one file)
    steps:
      - id: stats               # unique, [a-z][a-z0-9_-]*
        algorithm: describe     # a registered algorithm
        inputs: {graph: karate} # slot -> graph name
        backend: cpu            # optional; overrides `device` (case-insensitive)
        params: {}              # checked against the algorithm's Params model
        output: stats.csv       # optional, under output_dir: .parquet/.csv (frames), .npy/.csv (matrices)
        cluster: false          # optional: run here even when the file has a cluster: section
    bench:                      # optional: how `graphops bench` times this file
      repeat: 5
      warmup: 1
      baseline: cpu             # backend whose time the others are compared with
      commands: {help: graphops --help}   # optional: command lines timed in a fresh process each
                                #   run (cold start), from the file's folder; {tmp}: an empty folder;
                                #   run only by graphops bench --commands (programs the file names)
      reads: {csv: {graph: web, format: csv}}   # optional: the graph written to a file (csv, tsv,
                                #   parquet), read back by read_graph and by pyarrow, side by side
    cluster: {kind: local-cuda} # optional: steps whose algorithm splits its work run on Dask:
                                #   {kind: local, workers: 4} (CPU worker processes),
                                #   {kind: local-cuda} (a worker per GPU, dask-cuda; workers: N
                                #   takes the first N GPUs; protocol:
                                #   auto (ucx when distributed-ucxx is installed: GPU data
                                #   over NVLink / CUDA IPC) | ucx | tcp),
                                #   {address: tcp://host:8786, timeout: 10} (a running scheduler,
                                #   which must answer within timeout seconds). No step that splits
                                #   its work: no cluster is started or connected to. graphops
                                #   bench times such steps on the cluster too (scale-out cases)

Every key that wants a number takes a number as YAML writes it: not ``true``/``false``, not text
(``'5'``), and, where it wants an integer, not a decimal (``1.0``); pydantic would convert each
without a word (``src: true`` read column 1). Every path (``output_dir``, ``output``, a graph's
``path``, ``nodes``, ``smiles``) is refused when empty or when it holds what no file system takes
(a NUL character), at this pass, with the key's trail.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, StringConstraints, field_validator, model_validator

from graphops.host.validation import NAME_PATTERN, shown
from graphops.pipeline.fields import Name, PathText, _lower, _Model, path_problem
from graphops.pipeline.graph_sources import SOURCE_KINDS, GraphSource
from graphops.pipeline.yamlfile import load_yaml

__all__ = ["SCHEMA_VERSION", "Pipeline", "GraphSource", "Step", "BenchSettings", "ClusterSettings", "NAME_PATTERN",
           "SOURCE_KINDS", "PathText", "path_problem", "load_yaml"]

SCHEMA_VERSION = 1
class Step(_Model):
    """One algorithm call."""

    id: str = Field(pattern=NAME_PATTERN)
    algorithm: str
    inputs: dict[str, str]
    backend: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    output: PathText | None = None
    plot: bool = False  # also write the algorithm's picture beside the output (gram.npy -> gram.png)
    cluster: bool = True  # false: run here even when the file has a cluster: section (one device vs the cluster)

    _lower_backend = field_validator("backend", mode="before")(_lower)  # CPU, Gpu: as on the CLI

    @field_validator("plot", "cluster", mode="before")
    @classmethod
    def _null_is_absent(cls, value: Any, info: Any) -> Any:
        """``plot:`` or ``cluster:`` given as null (or left empty) is its default, as any key given as null."""
        return cls.model_fields[info.field_name].default if value is None else value


class ReadCase(_Model):
    """A file-reading case of ``graphops bench``: a graph of the file written to a temporary file in
    ``format`` (a ``src,dst`` header, then one edge per line), then read back by ``read_graph`` and by
    pyarrow's reader followed by ``Graph.from_edgelist`` on its frame."""

    graph: Name
    format: Literal["csv", "tsv", "parquet"] = "csv"


def _command_line(line: str) -> str:
    """A command line as the bench runs it: split into words as a shell does (no shell runs it)."""
    import shlex

    try:
        words = shlex.split(line)
    except ValueError as exc:  # an unclosed quote
        raise ValueError(f"this command line cannot be split into words ({exc}); close its quotes") from None
    if not words:
        raise ValueError("this command line names no program; give one (e.g. graphops --help)")
    return line


CommandLine = Annotated[str, StringConstraints(min_length=1), AfterValidator(_command_line)]


class BenchSettings(_Model):
    """How ``graphops bench`` times the steps of this file; ``commands`` (name -> command line) are
    timed too, each run in a fresh process (cold start: imports, plugin discovery, kernel caches
    loaded from disk), from the file's folder, ``{tmp}`` an empty folder per run; ``setup`` command
    lines run once before them, untimed, to make their inputs in ``{data}`` (a folder kept while the
    file's commands run); ``reads`` (name -> :class:`ReadCase`) time reading a graph's file."""

    repeat: int = Field(5, ge=1, le=1000)
    warmup: int = Field(1, ge=0, le=100)
    baseline: str | None = None
    commands: dict[Name, CommandLine] | None = None
    setup: list[CommandLine] | None = None
    reads: dict[Name, ReadCase] | None = None


MAX_WORKERS, MAX_SWEEP = 4096, 64  # a cluster's workers; the sizes one bench sweeps


def worker_counts_problem(counts: list[Any]) -> str | None:
    """What is wrong with cluster sizes (one, or a bench's sweep), or ``None``: the one rule of the
    file key ``cluster.workers``, ``run_bench(workers=)`` and ``graphops bench --workers``."""
    fine = all(isinstance(c, int) and not isinstance(c, bool) and 1 <= c <= MAX_WORKERS for c in counts)
    if not fine or not counts or len(counts) > MAX_SWEEP:
        return (f"give a count of workers from 1 to {MAX_WORKERS} (workers: 4), or for graphops bench a list of up "
                f"to {MAX_SWEEP} distinct counts to sweep (workers: [1, 2, 4])")
    if len(set(counts)) != len(counts):
        return "a sweep lists each count once (workers: [1, 2, 4])"
    return None


class ClusterSettings(_Model):
    """Where the steps that split their work run (``graphops.engine.cluster``): a local cluster started
    for the run, or a running scheduler's address."""

    kind: Literal["local", "local-cuda"] | None = None
    # a list: the worker counts ``graphops bench`` sweeps (a cluster of each size in turn); a run takes one
    workers: Annotated[int, Field(ge=1, le=MAX_WORKERS)] | Annotated[
        list[Annotated[int, Field(ge=1, le=MAX_WORKERS)]], Field(min_length=1, max_length=MAX_SWEEP)] | None = None
    address: str | None = Field(None, min_length=1)
    protocol: Literal["auto", "tcp", "ucx"] | None = None
    timeout: float | None = Field(None, gt=0, le=3600)  # seconds a running scheduler has to answer (10)

    _lower_kind = field_validator("kind", "protocol", mode="before")(_lower)

    @field_validator("workers", mode="before")
    @classmethod
    def _one_count_or_a_sweep(cls, value: Any) -> Any:
        """One line for any bad ``workers`` (the union's own errors name pydantic's branches)."""
        if value is None or isinstance(value, (str, float, bool)):
            return value  # text, decimals, true/false: the numbers rule's own messages
        problem = worker_counts_problem(value if isinstance(value, list) else [value])
        if problem is not None:
            raise ValueError(f"{problem}; got {value!r}")
        return value

    @field_validator("address")
    @classmethod
    def _an_address(cls, value: Any) -> Any:
        from graphops.base.address import address_problem

        problem = None if value is None else address_problem(value)
        if problem is not None:
            raise ValueError(f"{value!r} is not a Dask scheduler's address: {problem}")
        return value

    @model_validator(mode="after")
    def _one_way(self) -> "ClusterSettings":
        if (self.kind is None) == (self.address is None):
            raise ValueError("give either kind (local | local-cuda) or address (e.g. tcp://host:8786), not both "
                             "and not neither")
        if self.address is not None and self.workers is not None:
            raise ValueError("workers applies to a local cluster (kind: local or local-cuda), not to a running "
                             "scheduler's address")
        if self.timeout is not None and self.address is None:
            raise ValueError("timeout is how long a running scheduler (address) has to answer; a local cluster "
                             "is started here")
        if self.protocol is not None and self.kind != "local-cuda":
            raise ValueError("protocol applies to a local GPU cluster (kind: local-cuda); a running scheduler's "
                             "address names its own (ucx://host:8786), CPU workers use tcp")
        return self


class Pipeline(_Model):
    """A whole pipeline file."""

    version: int = Field(ge=1)
    name: str | None = Field(None, pattern=NAME_PATTERN)
    description: str | None = None
    backend: Literal["auto", "cpu", "gpu"] = "auto"  # every step's default backend (a step's backend: wins)
    output_dir: PathText = "out"
    allow_outside_output_dir: bool = False
    graphs: dict[Name, GraphSource] = Field(min_length=1)
    steps: list[Step] = Field(min_length=1)
    bench: BenchSettings | None = None
    cluster: ClusterSettings | None = None

    _lower_backend = field_validator("backend", mode="before")(_lower)

    @field_validator("cluster", mode="before")
    @classmethod
    def _a_section(cls, value: Any) -> Any:
        if value is None or isinstance(value, (dict, ClusterSettings)):
            return value
        raise ValueError(f"cluster: is a section, e.g. {{kind: local, workers: 4}}, {{kind: local-cuda}} or {{address: "
                         f"tcp://host:8786}} (leave it out to run every step here; a step's cluster: false keeps "
                         f"that step here); got {value!r}")

    @model_validator(mode="before")
    @classmethod
    def _former_device(cls, data: Any) -> Any:
        """``device:`` at the top of a file was this key's name (it meant the steps' default backend,
        not where a graph lives, which a graph's own ``device:`` says): still read, with a warning."""
        if not isinstance(data, dict) or "device" not in data:
            return data
        if "backend" in data:
            raise ValueError("the file gives both backend: and device: (its former name); remove device:")
        value = data["device"]
        if not isinstance(value, str) or value.lower() not in ("auto", "cpu", "gpu"):
            raise ValueError(f"device: {shown(value)} (the former name of backend:) must be auto, cpu or gpu; "
                             f"write backend: auto | cpu | gpu instead")
        import warnings

        warnings.warn("the pipeline key device: is now backend: (the default backend of every step; a graph's own "
                      "device: says where it lives); device: is read until graphops 0.3", DeprecationWarning,
                      stacklevel=2)
        data = dict(data)
        data["backend"] = data.pop("device")
        return data
