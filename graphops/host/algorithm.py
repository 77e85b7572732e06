"""What plugins declare: :class:`Algorithm`, :class:`Backend`, :class:`Input`, :class:`Gram`, :class:`Params`,
:class:`Generator` (and, from :mod:`graphops.host.formats`, :class:`Reader`, :class:`ReadOptions`, :class:`Command`).

Everything here is cheap: declaring an algorithm names its backends as lazy
``"module:function"`` strings, so registering a plugin imports no CuPy, cuDF or
Numba kernels. They are imported (and cached) on first use by :func:`load_target`.
"""
from __future__ import annotations

import functools
import importlib
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping

from pydantic import BaseModel, ConfigDict, model_validator

from graphops.host import declared
from graphops.host.declared import TARGET as _TARGET
from graphops.host.formats import Command, ReadOptions, Reader
from graphops.host.numbers import strict_values

__all__ = ["Algorithm", "Backend", "Command", "Generator", "Gram", "Input", "Reader", "ReadOptions", "Params", "Result",
           "load_target", "INPUT_KINDS"]

# pairs: vertex pairs of the first input; daskgraph: a graph on a Dask edge frame (graphops.model.daskgraph),
# taken by algorithms whose split runs on column slices
INPUT_KINDS = ("graph", "graphset", "pairs", "daskgraph", "matrix")  # matrix: a 2-D array (e.g. a Gram step's result)

# What a backend name needs unless declared otherwise: its device and importable modules.
_DEFAULT_NEEDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "cpu": ("cpu", ()),
    "gpu": ("gpu", ("cupy",)),
    "hybrid": ("gpu", ("cupy",)),
}


class Params(BaseModel):
    """Base of every algorithm's parameter model: unknown keys are errors, instances are frozen,
    a float field takes finite numbers only (``nan`` and ``±inf`` are refused: "Input should be a
    finite number"; a field may declare ``Field(allow_inf_nan=True)`` to take them), and pydantic's
    lax conversions are refused (:mod:`graphops.host.numbers`): ``True``/``False`` or text (``"2"``)
    where a field wants a number (``int``, ``float``, also inside ``Optional``, unions, tuples and
    nested models), and anything but ``True``/``False`` where it wants a bool (``"yes"``, ``1``).
    A seed is a :data:`graphops.host.numbers.Seed`.

    Override :meth:`check_inputs` for requirements on the graphs themselves
    (undirected? weighted? labels present?); it runs on the host before any transfer.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _strict_values(cls, data: Any) -> Any:
        """A bool or text where a field wants a number, or a non-bool where it wants a bool, is an
        error (pydantic would read ``True`` as 1, ``"2"`` as 2 and ``"yes"`` as ``True``)."""
        return strict_values(cls, data)

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
        declared.name("input slot", self.name)
        owner = f"Input {self.name!r}"
        kinds = declared.names(owner, "kinds", self.kinds)
        bad = [k for k in kinds if k not in INPUT_KINDS]
        if bad or not kinds:
            raise ValueError(f"{owner}: kinds must be among {INPUT_KINDS}; got {self.kinds!r}")
        declared.flag(owner, "required", self.required)
        declared.choice(owner, "default", self.default, (None, "edges"))
        object.__setattr__(self, "kinds", kinds)
        object.__setattr__(self, "renamed_from", declared.names(owner, "renamed_from", self.renamed_from))

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
            if t is not None and not (isinstance(t, str) and _TARGET.match(t)):
                raise ValueError(f"backend target must look like 'package.module:function'; got {t!r}")
        owner = f"Backend({self.target!r})"
        declared.choice(owner, "device", self.device, ("cpu", "gpu"))
        object.__setattr__(self, "requires", declared.names(owner, "requires", self.requires))
        declared.flag(owner, "peer", self.peer)
        declared.flag(owner, "cluster", self.cluster)


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
    :param work: how a pair's work grows with the two graphs' sizes: ``"nodes"`` (``n_a n_b``: a
        product graph's nodes), ``"nodes_edges"`` (``(n_a + m_a)(n_b + m_b)``: a sparse product
        graph's nodes and entries) or ``"node_pairs"`` (``n_a² n_b²``: pairs of shortest paths)
    :param cut_larger: cut the larger set into blocks: right when every part derives its two
        sets' features anew (row blocks would derive the whole training set in every part)
    :param one_device: boolean parameters whose modes run on one device (not on a cluster)
    :param seconds: optional ``"module:function"`` ``(inputs, params) -> float``: the estimated
        seconds of the call on one device, from what is cheap to know (node counts; no kernel
        runs), taking ``backend=`` (the backend's name) too when it accepts it. A call given a
        Dask client runs on the cluster only where the estimate says it pays
        (:mod:`graphops.engine.gramcost`), else here (``details["cluster"]`` says why); ``None``:
        always on the cluster
    """

    second: str = "other"
    normalize: str | None = "normalize"
    diagonal: str | None = None
    work: Literal["nodes", "node_pairs", "nodes_edges"] = "nodes"
    cut_larger: bool = False
    one_device: tuple[str, ...] = ()
    seconds: str | None = None

    def __post_init__(self) -> None:
        declared.text("Gram", "second", self.second)
        declared.text("Gram", "normalize", self.normalize, optional=True)
        declared.text("Gram", "diagonal", self.diagonal, optional=True)
        declared.choice("Gram", "work", self.work, ("nodes", "node_pairs", "nodes_edges"))
        declared.flag("Gram", "cut_larger", self.cut_larger)
        object.__setattr__(self, "one_device", declared.names("Gram", "one_device", self.one_device))
        declared.target("Gram", "seconds", self.seconds)


@dataclass(frozen=True)
class Algorithm:
    """An algorithm a plugin offers.

    Every field is checked as the declaration is made (:mod:`graphops.host.declared`): a wrong
    type or value is a ``TypeError``/``ValueError`` naming the field and how to write it.

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
        a tuple (ids of the first input), or ``{column: input slot}``; each must be one of ``outputs``
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
        owner = declared.algorithm_fields(self, Params)
        slots = declared.slots(owner, self.inputs, Input)
        object.__setattr__(self, "inputs", slots)
        object.__setattr__(self, "backends", declared.backends(owner, self.backends, _as_backend, Backend))
        outputs, optional = declared.outputs(owner, self.outputs, self.optional_outputs)
        object.__setattr__(self, "outputs", outputs)
        object.__setattr__(self, "optional_outputs", optional)
        object.__setattr__(self, "vertex_columns", declared.vertex_columns(
            owner, self.vertex_columns, tuple(s.name for s in slots), outputs))
        object.__setattr__(self, "writers", declared.table(
            owner, "writers", self.writers, lambda k: isinstance(k, str) and bool(re.fullmatch(r"\.[a-z0-9]+", k)),
            "file suffixes like '.fa'", lambda v: isinstance(v, str) and bool(_TARGET.match(v)),
            "'package.module:function'"))
        object.__setattr__(self, "functions", declared.table(
            owner, "functions", self.functions, lambda k: isinstance(k, str) and k.isidentifier() and k[:1] != "_",
            "public Python identifiers", lambda v: isinstance(v, str) and bool(_TARGET.match(v)),
            "'package.module:name'"))
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
        declared.name("generator", self.name)
        owner = f"generator {self.name!r}"
        for t in (self.target, *([self.params] if isinstance(self.params, str) else [])):
            if not (isinstance(t, str) and _TARGET.match(t)):
                raise ValueError(f"{owner}: targets must look like 'package.module:name'; got {t!r}")
        if not isinstance(self.params, str) and not (isinstance(self.params, type) and issubclass(self.params,
                                                                                                  BaseModel)):
            raise TypeError(f"{owner}: params must be a graphops.GeneratorParams subclass or its "
                            f"'package.module:Class'; got {self.params!r}")
        declared.choice(owner, "makes", self.makes, ("graph", "graphset"))
        if self.gpu is not None:
            object.__setattr__(self, "gpu", declared.names(owner, "gpu", self.gpu))
        declared.text(owner, "summary", self.summary)

    @property
    def model(self) -> type:
        """The parameter model (imported on first use when given as a string)."""
        return load_target(self.params) if isinstance(self.params, str) else self.params

    @property
    def function(self) -> str:
        """The Python name it is published under in ``graphops.generate``."""
        return self.target.rpartition(":")[2]


@functools.lru_cache(maxsize=None)
def load_target(target: str) -> Callable[..., Any]:
    """Import ``"module:function"`` once and return the function."""
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)
