"""What plugins declare: :class:`Algorithm`, :class:`Backend`, :class:`Input`, :class:`Reader`, :class:`Params`.

Everything here is cheap: declaring an algorithm names its backends as lazy
``"module:function"`` strings, so registering a plugin imports no CuPy, cuDF or
Numba kernels. They are imported (and cached) on first use by :func:`load_target`.
"""
from __future__ import annotations

import functools
import importlib
import re
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Literal, Mapping

from pydantic import BaseModel, ConfigDict, model_validator

from graphops.host.numbers import refuse_bools
from graphops.host.targets import Sources, target_arguments

__all__ = ["Algorithm", "Backend", "Command", "Generator", "Gram", "Input", "Reader", "Params", "Result", "load_target",
           "INPUT_KINDS"]

# pairs: vertex pairs of the first input; daskgraph: a graph on a Dask edge frame (graphops.model.daskgraph),
# taken by algorithms whose split runs on column slices
INPUT_KINDS = ("graph", "graphset", "pairs", "daskgraph")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_TARGET = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")

# What a backend name needs unless declared otherwise: its device and importable modules.
_DEFAULT_NEEDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "cpu": ("cpu", ()),
    "gpu": ("gpu", ("cupy",)),
    "hybrid": ("gpu", ("cupy",)),
}


class Params(BaseModel):
    """Base of every algorithm's parameter model: unknown keys are errors, instances are frozen,
    and ``True``/``False`` where a field wants a number (``int``, ``float``, also inside
    ``Optional``, unions, tuples and nested models) is an error, not 1/0
    (:mod:`graphops.host.numbers`); a seed is a :data:`graphops.host.numbers.Seed`.

    Override :meth:`check_inputs` for requirements on the graphs themselves
    (undirected? weighted? labels present?); it runs on the host before any transfer.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _no_bool_for_a_number(cls, data: Any) -> Any:
        """``True``/``False`` where a field wants a number is an error (pydantic would read 1/0)."""
        return refuse_bools(cls, data)

    def check_declared(self, **inputs: Any) -> None:
        """Raise ``ValueError`` when an input's declared properties do not suit these parameters.

        Runs before any data is read, so ``graphops validate`` can catch it: each input
        has ``directed`` (bool), ``kind`` (``"graph"``/``"graphset"``) and ``weighted``
        (``None`` when a pipeline file does not say). A :class:`Graph` has the same
        attributes, so the same check runs again on every call.
        """

    def check_inputs(self, **inputs: Any) -> None:
        """Raise ``ValueError`` when an input graph does not suit these parameters (its data:
        negative weights, missing labels, ...); runs on the host, after :meth:`check_declared`."""

    def several_arrays(self) -> bool:
        """Whether these parameters make the result several arrays (a tuple, written as .npz),
        e.g. a matrix and its gradient; known before computing, so validation can say so."""
        return False

    def result_kind(self) -> str | None:
        """``"frame"`` or ``"array"``: what an ``array_or_frame`` algorithm returns with these
        parameters, so validation can check an output's suffix; ``None`` when they do not say."""
        return None


@dataclass(frozen=True)
class Input:
    """One input slot of an algorithm: its name, the kinds it accepts, whether it is required.

    Kinds: ``graph`` (a :class:`Graph`; backends get its CSR view), ``graphset`` (a
    :class:`GraphSet`; a batched CSR), ``pairs`` (vertex pairs of the first input, see
    :mod:`graphops.model.pairs`; backends get a :class:`graphops.model.pairs.PairIndex`).
    """

    name: str
    kinds: tuple[str, ...] = ("graph",)
    required: bool = True
    default: str | None = None  # for an optional "pairs" slot: "edges" (the graph's distinct edges)
    renamed_from: tuple[str, ...] = ()  # former names, still taken (with a DeprecationWarning)

    def __post_init__(self) -> None:
        bad = [k for k in self.kinds if k not in INPUT_KINDS]
        if bad or not self.kinds:
            raise ValueError(f"Input {self.name!r}: kinds must be among {INPUT_KINDS}; got {self.kinds!r}")

    def source_kinds(self) -> tuple[str, ...]:
        """The kinds of pipeline graph this slot takes (a ``pairs`` slot takes a graph's edges)."""
        return tuple(dict.fromkeys("graph" if k == "pairs" else k for k in self.kinds))


@dataclass(frozen=True)
class Result:
    """What a backend may return instead of a bare dict or array: the value, plus details of how
    it was computed (e.g. the CPU/GPU split a hybrid backend chose and why).

    The details reach the caller in :class:`graphops.engine.dispatch.Outcome` and the pipeline's run
    summary; nothing is kept in module state.
    """

    value: Any
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Backend:
    """A backend: ``"module:function"``, the device it computes on and modules it needs.

    The contract, the same for every backend: the function is called as
    ``fn(*args, params)``, one argument per input slot in slot order, then the validated Params
    instance. A graph or graph-set slot's argument is

    * without ``prepare``: the input's CSR view on the backend's device (``graph.csr(device)``:
      a :class:`~graphops.model.csr.CSR`, or a batched CSR for a graph set), built once and
      cached on the input;
    * with ``prepare="module:function"``: what ``prepare(input)`` returns for the whole
      :class:`Graph`/:class:`GraphSet` — any structure the backend wants (a peer library's own
      graph, a plugin's packed arrays); it is called once per input, cached on it, and kept out
      of the backend's timings (``Outcome.prepare_seconds``);

    a pairs slot's argument is a :class:`~graphops.model.pairs.PairIndex` on the backend's
    device, and an optional slot left empty is ``None``. The function returns what the algorithm
    declares (an array, or a dict of its output columns), optionally inside a
    :class:`Result` with ``details``.

    ``peer=True`` marks another library's implementation offered for comparison
    (networkx, cuGraph, ...): never chosen by ``auto``, shown as a peer in benchmarks.

    ``cluster=True`` marks a backend that runs a whole call on a Dask cluster itself (a
    multi-GPU library's own distributed code): it is offered only when a client is given, and it
    is called as ``fn(client, *args, params)``, its ``prepare`` as ``prepare(input, client)``
    (cached per input and client). The algorithm must declare how it distributes (``split`` or
    ``gram``), as for any call on a cluster.
    """

    target: str
    device: Literal["cpu", "gpu"] = "cpu"
    requires: tuple[str, ...] = ()
    peer: bool = False
    prepare: str | None = None
    cluster: bool = False

    def __post_init__(self) -> None:
        for t in (self.target, self.prepare):
            if t is not None and not _TARGET.match(t):
                raise ValueError(f"backend target must look like 'package.module:function'; got {t!r}")


@dataclass(frozen=True)
class Gram:
    """What a Gram-matrix algorithm declares so that the core can cut a call into parts on a Dask
    cluster (blocks of rows, or of columns), put the raw blocks together, mirror a square matrix
    and normalize it as one process does, without guessing parameter names.

    :param second: the input slot of the second set (``K(graphs, second)``, test × train)
    :param normalize: the boolean parameter asking for ``K[a, b] / sqrt(K[a, a] K[b, b])``
        (``None``: the algorithm does not normalize)
    :param diagonal: the boolean parameter asking for the diagonal ``K[a, a]`` alone (``None``:
        no such mode; a normalized test × train block then normalizes itself, a graph's
        ``K[a, a]`` being its own)
    :param work: how a pair's work grows with the two graphs' node counts: ``"nodes"``
        (``n_a n_b``: a product graph) or ``"node_pairs"`` (``n_a² n_b²``: pairs of shortest paths)
    :param cut_larger: cut the larger set into blocks: right when every part derives its two
        sets' features anew (row blocks would derive the whole training set in every part)
    :param one_device: boolean parameters whose modes run on one device (not on a cluster)
    """

    second: str = "other"
    normalize: str | None = "normalize"
    diagonal: str | None = None
    work: Literal["nodes", "node_pairs"] = "nodes"
    cut_larger: bool = False
    one_device: tuple[str, ...] = ()


@dataclass(frozen=True)
class Algorithm:
    """An algorithm a plugin offers.

    :param name: registry and YAML name (``[a-z][a-z0-9_]*``), equal to the entry point name
    :param params: the :class:`Params` subclass validating its keyword arguments
    :param inputs: input slots, in call order (``Input`` or a plain slot name for one graph)
    :param backends: backend name -> ``"module:function"`` or :class:`Backend`
    :param outputs: documented output columns (frames) or ``()`` for a matrix; a backend must
        return exactly these (checked on every call)
    :param optional_outputs: those of ``outputs`` present only for some inputs (e.g. a
        ``graph`` column for a GraphSet)
    :param result: ``"frame"`` (pandas/cuDF like the input), ``"array"`` (NumPy/CuPy), or
        ``"array_or_frame"``: an array, or a frame when the backend returns columns (e.g. a
        matrix, or its top-k rows when a parameter asks for them)
    :param vertex_columns: output columns holding vertex indices, mapped back to original ids:
        a tuple (ids of the first input), or ``{column: input slot}``
    :param cost: optional ``"module:function"`` ``(inputs, params) -> {"bytes": .., "flops": ..}``
        giving the least work any implementation must do, for benchmark floors
    :param estimator: for a Gram-matrix algorithm, the class name under which
        :mod:`graphops.kernels` exports a scikit-learn style estimator for it
    :param estimator_class: optional ``"module:Class"``, the plugin's own estimator (a
        :class:`graphops.kernels.GraphKernelEstimator` subclass, e.g. one that is also a
        scikit-learn GP kernel) exported under ``estimator``; without it the core makes one
    :param plot: optional ``"module:function"`` ``(result, inputs, params, path) -> None`` drawing
        the result as a PNG picture (a pipeline step with ``plot: true`` writes it beside its output;
        helpers in :mod:`graphops.io.plots`)
    :param writers: extra output formats, file suffix (``".fa"``) -> ``"module:function"``
        ``(result, path) -> None`` writing the result there (the core makes the write atomic)
    :param functions: helper functions (or exception types) published as ``graphops.<name>`` (e.g.
        a validator of the algorithm's results), name -> ``"module:name"``, imported on first use
    :param split: optional ``"module:function"`` ``(inputs, params, workers) -> graphops.engine.parts.Split``
        (or a ``Distributed`` for inputs already on the cluster): how a call's work cuts into tasks
        for a Dask cluster (``client=``); without it (and without ``gram``) the algorithm runs on
        one device and a call with a client says so
    :param gram: a :class:`Gram` declaration: the algorithm returns Gram matrices, which the core
        cuts into blocks for a cluster by itself (no ``split`` needed)
    :param distribution: set by the registry, not by plugins: ``"name version"`` of the distribution
        that ships the plugin, for messages
    :param unusable: set by the registry, not by plugins: the backends it left out because they
        break the backend contract (name -> why), so that asking for one says why
    """

    name: str
    params: type[Params]
    inputs: tuple[Input | str, ...]
    backends: Mapping[str, str | Backend]
    outputs: tuple[str, ...] = ()
    optional_outputs: tuple[str, ...] = ()
    result: Literal["frame", "array", "array_or_frame"] = "frame"
    vertex_columns: tuple[str, ...] | Mapping[str, str] = ()
    summary: str = ""
    version_added: str = "0.1"
    cost: str | None = None
    estimator: str | None = None
    estimator_class: str | None = None
    plot: str | None = None
    writers: Mapping[str, str] = field(default_factory=dict)
    functions: Mapping[str, str] = field(default_factory=dict)
    split: str | None = None
    gram: Gram | None = None
    plugin: str = field(default="", compare=False)
    distribution: str = field(default="", compare=False)
    unusable: Mapping[str, str] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(f"algorithm name must match [a-z][a-z0-9_]*; got {self.name!r}")
        for what in ("plot", "split"):
            target = getattr(self, what)
            if target is not None and not _TARGET.match(target):
                raise ValueError(f"algorithm {self.name!r}: {what} must look like 'package.module:function'; "
                                 f"got {target!r}")
        if self.estimator_class is not None and (self.estimator is None or not _TARGET.match(self.estimator_class)):
            raise ValueError(f"algorithm {self.name!r}: estimator_class must look like 'package.module:Class' and "
                             f"needs estimator (the exported name); got {self.estimator_class!r}")
        for what, table in (("writers", self.writers), ("functions", self.functions)):
            for key, target in table.items():
                if not _TARGET.match(target):
                    raise ValueError(f"algorithm {self.name!r}: {what}[{key!r}] must look like "
                                     f"'package.module:function'; got {target!r}")
        bad = [k for k in self.writers if not re.fullmatch(r"\.[a-z0-9]+", k)]
        if bad:
            raise ValueError(f"algorithm {self.name!r}: writer suffixes look like '.fa'; got {bad}")
        bad = [k for k in self.functions if not k.isidentifier() or k.startswith("_")]
        if bad:
            raise ValueError(f"algorithm {self.name!r}: published names must be public Python identifiers; got {bad}")
        if not (isinstance(self.params, type) and issubclass(self.params, Params)):
            raise TypeError(f"algorithm {self.name!r}: params must be a graphops.Params subclass")
        slots = tuple(Input(s) if isinstance(s, str) else s for s in self.inputs)
        object.__setattr__(self, "inputs", slots)
        object.__setattr__(self, "backends", {k: _as_backend(k, v) for k, v in self.backends.items()})
        cols = self.vertex_columns
        if not isinstance(cols, Mapping):
            cols = {c: slots[0].name for c in cols}
        unknown = sorted(set(cols.values()) - {s.name for s in slots})
        if unknown:
            raise ValueError(f"algorithm {self.name!r}: vertex_columns name unknown input slot(s) {unknown}")
        object.__setattr__(self, "vertex_columns", dict(cols))
        if not self.backends:
            raise ValueError(f"algorithm {self.name!r} offers no backend")
        if self.gram is not None:
            self._check_gram(slots)
        on_cluster = [k for k, b in self.backends.items() if b.cluster]
        if on_cluster and not self.distributes:
            raise ValueError(f"algorithm {self.name!r}: backend(s) {on_cluster} run on a Dask cluster "
                             f"(cluster=True), but the algorithm declares no split or gram")
        if on_cluster and len(on_cluster) == len(self.backends):
            raise ValueError(f"algorithm {self.name!r}: every backend needs a Dask cluster; offer one that runs "
                             f"here too")

    def _check_gram(self, slots: tuple) -> None:
        g, fields = self.gram, self.params.model_fields
        if g.second not in {s.name for s in slots}:
            raise ValueError(f"algorithm {self.name!r}: Gram(second={g.second!r}) names no input slot")
        named = [p for p in (g.normalize, g.diagonal, *g.one_device) if p is not None]
        unknown = [p for p in named if p not in fields]
        if unknown:
            raise ValueError(f"algorithm {self.name!r}: Gram names parameters its Params lack: {unknown}")

    @property
    def distributes(self) -> bool:
        """Whether a call can run on a Dask cluster (it declares a ``split`` or a ``gram``)."""
        return self.split is not None or self.gram is not None

    @property
    def slot_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.inputs)

    def renamed(self, name: str) -> str:
        """The slot a name stands for: itself, or the slot that had it as a former name (warned
        about as deprecated; :attr:`Input.renamed_from`)."""
        for slot in self.inputs:
            if name in slot.renamed_from:
                import warnings

                warnings.warn(f"{self.name}: input {name!r} is now {slot.name!r} (graphops 0.2); the old name goes "
                              f"in 0.3", DeprecationWarning, stacklevel=4)
                return slot.name
        return name

    def own_backends(self) -> tuple[str, ...]:
        """Backend names that are graphops' own (not peers)."""
        return tuple(k for k, b in self.backends.items() if not b.peer)


def _as_backend(name: str, spec: str | Backend) -> Backend:
    if isinstance(spec, Backend):
        return spec
    device, requires = _DEFAULT_NEEDS.get(name, ("cpu", ()))
    return Backend(target=spec, device=device, requires=requires)


@dataclass(frozen=True)
class Generator:
    """A graph generator: ``{generate: {kind: <name>, ...}}`` in a pipeline file, and
    ``graphops.generate.<function>`` in Python.

    :param name: the YAML ``kind`` (``[a-z][a-z0-9_]*``)
    :param params: the pydantic model of its parameters (not ``kind``), or its ``"module:Class"``
        (loaded on first use, so registering imports nothing heavy). A field ``of`` names the
        graph of the same file it is made from (e.g. a pattern sampled from it): the function
        then gets that graph as its first argument
    :param target: ``"module:function"`` called with the validated parameters (``of`` replaced by
        the graph), returning a :class:`Graph` or :class:`GraphSet`
    :param makes: ``"graph"`` or ``"graphset"``
    :param gpu: modules a GPU draw needs (the function then takes ``device="gpu"`` and gives a
        cuDF graph); ``None``: drawn on the host, then moved to the graph's device
    :param summary: one line for ``graphops plugins``
    """

    name: str
    params: Any
    target: str
    makes: Literal["graph", "graphset"] = "graph"
    gpu: tuple[str, ...] | None = None
    summary: str = ""
    plugin: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(f"generator name must match [a-z][a-z0-9_]*; got {self.name!r}")
        for t in (self.target, *([self.params] if isinstance(self.params, str) else [])):
            if not _TARGET.match(t):
                raise ValueError(f"generator {self.name!r}: targets must look like 'package.module:name'; got {t!r}")
        if self.makes not in ("graph", "graphset"):
            raise ValueError(f"generator {self.name!r}: makes must be 'graph' or 'graphset'; got {self.makes!r}")

    @property
    def model(self) -> type:
        """The parameter model (imported on first use when given as a string)."""
        return load_target(self.params) if isinstance(self.params, str) else self.params

    @property
    def function(self) -> str:
        """The Python name it is published under in ``graphops.generate``."""
        return self.target.rpartition(":")[2]


@dataclass(frozen=True)
class Reader:
    """A graph file format: name, file suffixes, and the ``"module:function"`` reading one file.

    The contract, one signature for every reader (checked when the registry is built; a reader
    that does not follow it is not used, and ``graphops plugins`` says why)::

        def read(path: pathlib.Path, device: graphops.Device, options: graphops.ReadOptions) -> frame

    It returns an edge frame (pandas, or cuDF when ``device`` is GPU); columns are then picked
    by name or position as the caller asks (``options.roles``). ``options.columns`` names the
    leading columns of a file without a header row. ``options.header`` and ``options.ids`` are
    for text formats: a format lists the options it honours in ``options`` (graphops' text
    formats: ``("header", "ids")``), and asking another format for them is an error before
    anything is read. A format whose graphs come as two files names a ``nodes`` function too, of
    the same signature, returning a node frame with an ``id`` column (used for
    ``read_graph(..., nodes=path)`` and YAML ``nodes:``), and may offer a convenience
    ``function``, published as ``graphops.read_<name>``. A format whose edges have a direction
    by nature (k-mers: prefix -> suffix) sets ``directed``; reading it with the other
    directedness is then an error, and leaving it out gives the format's.
    """

    name: str
    suffixes: tuple[str, ...]
    target: str
    summary: str = ""
    nodes: str | None = None
    function: str | None = None
    directed: bool | None = None  # graphs of the format are directed (True) or not (False) by nature
    options: tuple[str, ...] = ()  # the ReadOptions beyond columns it honours: "header", "ids"
    plugin: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        for t in (self.target, self.nodes, self.function):
            if t is not None and not _TARGET.match(t):
                raise ValueError(f"reader {self.name!r}: target must look like 'package.module:function'; "
                                 f"got {t!r}")
        bad = [o for o in self.options if o not in ReadOptions.TEXT]
        if bad:
            raise ValueError(f"reader {self.name!r}: options are among {list(ReadOptions.TEXT)}; got {bad}")

    def check_contract(self, sources: Any = None) -> None:
        """A :class:`ValueError` unless ``target`` (and ``nodes``) take ``(path, device, options)``
        and ``function`` exists, read from their source without importing them (``sources``: a
        :class:`graphops.host.targets.Sources` reading each module once)."""
        sources = sources or Sources()
        if self.function is not None:
            try:
                sources.check_defined(self.function)
            except ValueError as exc:
                raise ValueError(f"reader {self.name!r}: function {self.function}: {exc}") from None
        for what, target in (("target", self.target), ("nodes", self.nodes)):
            if target is None:
                continue
            args = target_arguments(target, sources)
            names = [a.arg for a in (*args.posonlyargs, *args.args)]
            required = len(names) - len(args.defaults)
            if len(names) < 3 or required > 3 or args.vararg is not None:
                raise ValueError(f"reader {self.name!r}: {what} {target} takes ({', '.join(names)}); a reader "
                                 f"takes (path, device, options) (graphops.ReadOptions)")


@dataclass(frozen=True)
class ReadOptions:
    """What the caller of a reader asked for (:class:`Reader`'s third argument).

    :param columns: names of the leading columns of a file without a header row (``None``: the
        file's own names, or ``"0"``, ``"1"``, ... without a header)
    :param header: text formats: ``"auto"`` (the first line is a header only when it cannot be
        data), ``True`` or ``False``
    :param ids: text formats: ``"auto"``, ``"integer"`` or ``"string"``
    :param roles: ``{"src": .., "dst": .., "weight": ..}`` as the caller picks them (names,
        positions or ``None``): a text reader checks and converts those columns
    """

    TEXT: ClassVar[tuple[str, ...]] = ("header", "ids")

    columns: tuple[str, ...] | None = None
    header: Any = "auto"
    ids: str = "auto"
    roles: Mapping[str, Any] = field(default_factory=dict)

    def asked(self) -> list[str]:
        """The text options given other than their defaults."""
        return [k for k, default in (("header", "auto"), ("ids", "auto")) if getattr(self, k) != default]


@dataclass(frozen=True)
class Command:
    """A subcommand a plugin adds to the ``graphops`` command line: ``graphops <name> ...``.

    :param name: the subcommand (``[a-z][a-z0-9-]*``); built-in commands keep their names
    :param summary: one line for ``graphops --help``
    :param target: ``"module:function"`` called with the parsed ``argparse.Namespace``;
        returns the exit code (imported only when the command runs)
    :param arguments: optional ``function(parser)`` adding the command's arguments to its
        ``argparse`` parser (keep it light: it runs whenever the CLI starts)
    """

    name: str
    summary: str
    target: str
    arguments: Callable[[Any], None] | None = None
    plugin: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not re.match(r"^[a-z][a-z0-9-]*$", self.name):
            raise ValueError(f"command name must match [a-z][a-z0-9-]*; got {self.name!r}")
        if not _TARGET.match(self.target):
            raise ValueError(f"command target must look like 'package.module:function'; got {self.target!r}")


@functools.lru_cache(maxsize=None)
def load_target(target: str) -> Callable[..., Any]:
    """Import ``"module:function"`` once and return the function."""
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)
