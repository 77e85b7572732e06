"""Dispatch: validate on the host once, choose a backend, load it, hand it arrays, wrap the result.

``run("describe", g, backend="cpu")`` is the whole public surface; :func:`execute`
also reports which backend ran, where, why, and how long it took.
"""
from __future__ import annotations

import contextlib
import logging
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from graphops.host.algorithm import Algorithm, Backend, Input, Result, load_target
from graphops.base.device import Device, as_proxy, gpu_status, module_available, synchronize, to_device
from graphops.errors import (BackendUnavailableError, GraphopsError, InputError, InputTypeError, PluginError, choices,
                     did_you_mean)
from graphops.model.frames import new_frame
from graphops.model.daskgraph import DaskGraph, is_dask_frame
from graphops.model.graph import Graph
from graphops.model.graphset import GraphSet
from graphops.model.pairs import PairIndex, Pairs, as_pairs
from graphops.host.manager import call_hook
from graphops.host.registry import Registry, get_registry
from graphops.host.validation import build_params
from graphops.base.work import holding_interrupts

log = logging.getLogger("graphops")

__all__ = ["run", "execute", "execute_call", "plan", "prepare", "execute_plan", "wrap_result", "Plan", "Outcome",
           "choose_backend", "bind_inputs"]

_KIND = {Graph: "graph", GraphSet: "graphset", Pairs: "pairs", DaskGraph: "daskgraph"}


@dataclass(frozen=True)
class Outcome:
    """A finished call: the result and how it was computed.

    ``seconds`` is the backend call plus wrapping the result; ``prepare_seconds`` is
    building or moving its inputs (CSR views, peer structures), cached after a first call.
    """

    result: Any
    algorithm: str
    backend: str
    device: str
    seconds: float
    reason: str
    prepare_seconds: float = 0.0
    details: Mapping[str, Any] = field(default_factory=dict)  # what the backend decided (a split, ...)


def run(algorithm: str, *inputs: Any, backend: str = "auto", registry: Registry | None = None,
        client: Any = None, **params: Any) -> Any:
    """Run a registered algorithm on graphs; the result follows the input's frame family.

    :param algorithm: a registered name (``graphops plugins`` lists them)
    :param inputs: :class:`Graph`/:class:`GraphSet` objects, in the algorithm's slot order
        (an input slot may also be given by keyword, e.g. ``pairs=frame``)
    :param backend: ``auto`` (default), ``cpu``, ``gpu``, ``hybrid`` or another offered name
    :param client: a ``dask.distributed.Client``: the work is cut into tasks run by its workers
        (:mod:`graphops.engine.cluster`), with the same result
    :param params: the algorithm's parameters, validated by its Params model
    """
    return execute_call(algorithm, *inputs, backend=backend, registry=registry, client=client, **params).result


def execute_call(algorithm: str, *inputs: Any, backend: str = "auto", registry: Registry | None = None,
                 client: Any = None, **params: Any) -> "Outcome":
    """As :func:`run`, returning the :class:`Outcome`: the result with the backend that ran, its
    device, times, why it was chosen and the backend's ``details`` (e.g. a hybrid split)."""
    registry = registry or get_registry()
    algo = registry.algorithm(algorithm)
    by_name = {k: params.pop(k) for k in list(params) if k in algo.slot_names}
    bound = bind_inputs(algo, inputs, by_name)
    if client is not None:
        return execute_on_cluster(algo, bound, backend, params, client)
    if any(isinstance(obj, DaskGraph) for obj in bound.values()):
        raise InputError(f"{algo.name}: the graph is a Dask edge frame (a DaskGraph), which runs only on a Dask "
                         f"cluster: pass client=<dask.distributed.Client>, or build a Graph from ddf.compute()")
    return execute(algo, bound, backend, params, registry)


def execute_on_cluster(algo: Algorithm, inputs: Mapping[str, Any], backend: str, params: Mapping[str, Any] | Any,
                       client: Any) -> "Outcome":
    """Validate here, then run the call's parts on a Dask client's workers (:mod:`graphops.engine.cluster`)."""
    from graphops.engine.cluster import run_on_cluster

    if algo.split is None:
        raise InputError(f"{algo.name} does not run on a Dask cluster (it declares no split of its work); "
                         f"leave client out to run it on one device")
    inputs, p = validate(algo, inputs, params)
    t0 = time.perf_counter()
    result, name, reason, details = run_on_cluster(algo, inputs, backend, p, client,
                                                   progress=getattr(p, "progress", None))
    log.info("%s: backend %r on a Dask cluster (%s)", algo.name, name, reason)
    return Outcome(result, algo.name, name, algo.backends[name].device, time.perf_counter() - t0, reason, 0.0,
                   details)


def bind_inputs(algo: Algorithm, args: Sequence[Any], by_name: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Map positional (and keyword) inputs to the algorithm's slots, checking count and kind."""
    slots = algo.inputs
    given = dict(zip([s.name for s in slots], args))
    for name, obj in (by_name or {}).items():
        if name in given:
            raise InputTypeError(f"{algo.name}: input {name!r} given twice (by position and by keyword)")
        given[name] = obj
    missing = [s.name for s in slots if s.required and s.name not in given]
    if len(args) > len(slots) or missing:
        want = ", ".join(s.name + ("" if s.required else "?") for s in slots)
        raise InputTypeError(f"{algo.name} takes inputs ({want}); got {len(args)} input(s)")
    bound = {}
    for slot in slots:
        if slot.name in given and given[slot.name] is not None:
            bound[slot.name] = _bind(algo, slot, given[slot.name])
    return bound


def type_name(obj: Any) -> str:
    """``networkx.classes.graph.Graph``, ``list``: what an object is, in full, for messages."""
    cls = type(obj)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def _is_networkx(obj: Any) -> bool:
    nx = sys.modules.get("networkx")
    return nx is not None and isinstance(obj, nx.Graph)


def _converted(slot: Any, obj: Any) -> Any:
    """A networkx graph as a :class:`Graph`, a list (tuple, array) of networkx graphs or of Graphs
    as a :class:`GraphSet`, for a slot that takes one (as ``from_networkx``/``from_graphs`` do)."""
    if _is_networkx(obj) and "graph" in slot.kinds:
        return Graph.from_networkx(obj)
    if isinstance(obj, (list, tuple)) or (isinstance(obj, np.ndarray) and obj.dtype == object and obj.ndim == 1):
        items = list(obj)
        if "graphset" in slot.kinds and items and all(_is_networkx(g) for g in items):
            return GraphSet.from_networkx(items)
        if "graphset" in slot.kinds and items and all(isinstance(g, Graph) for g in items):
            return GraphSet.from_graphs(items)
    return obj


def _accepted(slot: Any) -> str:
    kinds = {"graph": "a graphops.Graph or a networkx graph",
             "graphset": "a graphops.GraphSet or a list of networkx graphs or of graphops.Graph objects",
             "pairs": "a frame of vertex pairs", "daskgraph": "a graphops.DaskGraph"}
    return ", or ".join(kinds[k] for k in slot.kinds)


def _given(obj: Any) -> str:
    """What was given, for messages: a type's full name, or what a list holds."""
    if isinstance(obj, (list, tuple)):
        kinds = sorted({type_name(x) for x in obj})
        what = type_name(obj)
        return f"an empty {what}" if not kinds else f"a {what} of {' and '.join(kinds)}"
    return type_name(obj)


def as_graphset(obj: Any, who: str) -> GraphSet:
    """``obj`` as a :class:`GraphSet` the way a Gram input slot reads it (a GraphSet, or a
    list, tuple or object array of networkx graphs or of Graphs); ``who`` names the caller in
    the error for anything else."""
    got = _converted(Input("graphs", kinds=("graphset",)), obj)
    if not isinstance(got, GraphSet):
        raise InputTypeError(f"{who} takes {_accepted(Input('graphs', kinds=('graphset',)))}; got {_given(obj)}")
    return got


def _bind(algo: Algorithm, slot: Any, obj: Any) -> Any:
    obj = _converted(slot, obj)
    kind = _KIND.get(type(obj))
    if kind == "daskgraph" and kind in slot.kinds:
        return obj
    if kind == "daskgraph" or is_dask_frame(obj):
        from graphops.host.registry import get_registry

        raise InputTypeError(f"{algo.name}: input {slot.name!r} cannot be a Dask frame or DaskGraph; a Dask edge "
                             f"frame is a graph input (graphops.Graph.from_edgelist(ddf)) of algorithms that run "
                             f"on column slices ({get_registry().taking('daskgraph')}), or compute() it first")
    if "pairs" in slot.kinds and kind != "graphset":
        return as_pairs(obj)
    if kind not in slot.kinds:
        hint = " (one graph: pass a list of it, [G])" if _is_networkx(obj) or isinstance(obj, Graph) else ""
        raise InputTypeError(f"{algo.name}: input {slot.name!r} takes {_accepted(slot)}; got {_given(obj)}{hint}. Build a "
                             f"Graph with graphops.Graph.from_edgelist(df) or graphops.read_graph(path), a GraphSet "
                             f"with graphops.read_tu(path) or graphops.GraphSet.from_graphs(graphs)")
    return obj


def _usable(spec: Backend) -> tuple[bool, str]:
    """Whether a backend can run on this machine, and what was checked."""
    if spec.device == "gpu":
        ok, why = gpu_status()
        if not ok:
            return False, why
    missing = [m for m in spec.requires if not module_available(m)]
    if missing:
        return False, f"the package(s) {', '.join(repr(m) for m in missing)} could not be imported"
    return True, "available"


def _fix_hint(spec: Backend) -> str:
    if spec.device == "gpu":
        return ("install the GPU extra (pip install 'graphops[gpu]'), make sure nvidia-smi lists a "
                "device and CUDA_VISIBLE_DEVICES allows it, or ask for backend='cpu' or 'auto'")
    return f"install {', '.join(spec.requires)} (pip install {' '.join(spec.requires)})"


def check_backend_name(algo: Algorithm, requested: str) -> None:
    """An explicit backend name must be one the algorithm offers (lower case)."""
    if requested not in algo.backends:
        raise InputError(f"{algo.name}: unknown backend {requested!r}. Offered: "
                         f"{choices(['auto', *algo.backends])}.{did_you_mean(requested, algo.backends)}")


def choose_backend(algo: Algorithm, requested: str, inputs: Mapping[str, Any], params: Any,
                   pm: Any) -> tuple[str, str]:
    """The backend to run and the reason; strict when explicit, explained when ``auto``."""
    requested = str(requested).lower()
    if requested != "auto":
        check_backend_name(algo, requested)
        ok, why = _usable(algo.backends[requested])
        if not ok:
            raise BackendUnavailableError(
                f"{algo.name}: backend {requested!r} was requested but cannot run here: {why}. "
                f"To remedy this: {_fix_hint(algo.backends[requested])}")
        return requested, "requested"
    return _auto(algo, inputs, params, pm)


def _auto(algo: Algorithm, inputs: Mapping[str, Any], params: Any, pm: Any) -> tuple[str, str]:
    status = {name: _usable(algo.backends[name]) for name in algo.own_backends()}
    runnable = tuple(n for n, (ok, _) in status.items() if ok)
    if not runnable:
        tried = "; ".join(f"{n}: {why}" for n, (_, why) in status.items())
        raise BackendUnavailableError(f"{algo.name}: no backend can run here ({tried})")
    hint = call_hook(pm, "graphops_choose_backend", first=True, algorithm=algo, inputs=dict(inputs),
                     params=params, offered=runnable)
    if hint in runnable:
        return hint, "auto: chosen by a graphops_choose_backend hook"
    if hint is not None:
        log.warning("%s: graphops_choose_backend answered %r, not among %s; using the default rule",
                    algo.name, hint, runnable)
    if "gpu" in runnable:
        return "gpu", "auto: a usable GPU was found"
    pick = "cpu" if "cpu" in runnable else runnable[0]
    gpu_why = status["gpu"][1] if "gpu" in status else "no gpu backend offered"
    return pick, f"auto: gpu not used ({gpu_why})"


def _prepare(obj: Any, spec: Backend) -> Any:
    if spec.prepare is not None:
        return obj.cached(("prepare", spec.prepare), lambda: load_target(spec.prepare)(obj))
    return obj.csr(Device(spec.device))


def _slot_view(planned: "Plan", slot: Any, spec: Backend) -> Any:
    """What a backend receives for one slot: a CSR view, a peer's prepared object, a
    PairIndex for a pairs slot, or ``None`` for an optional slot left empty."""
    graph = next(iter(planned.inputs.values()))
    if "pairs" in slot.kinds:
        pairs = planned.inputs.get(slot.name)
        if pairs is None and slot.default == "edges":
            pairs = Pairs.edges_of(graph)
        return None if pairs is None else pairs.index(graph, Device(spec.device))
    if slot.name not in planned.inputs:
        return None
    return _prepare(planned.inputs[slot.name], spec)


def _home(inputs: Mapping[str, Any]) -> Device:
    return next(iter(inputs.values())).device


def _wrap(algo: Algorithm, raw: Any, inputs: Mapping[str, Any], args: Sequence[Any] = ()) -> Any:
    home = _home(inputs)
    if isinstance(raw, tuple):  # several arrays (e.g. a matrix and its gradient)
        return tuple(to_device(a, home) for a in raw)
    if not isinstance(raw, Mapping):  # an array result (checked against algo.result before)
        return to_device(raw, home)
    data = dict(raw)
    pair_views = [a for a in args if isinstance(a, PairIndex)]
    given = set()  # columns holding the caller's own pairs (cached with them): copied below
    for col, slot in algo.vertex_columns.items():
        graph = inputs.get(slot)
        if col in data and isinstance(graph, Graph):
            known = [ids for ids in (v.original(data[col]) for v in pair_views) if ids is not None]
            if known:
                given.add(col)
            if known:
                data[col] = known[0]
            else:
                index = to_device(data[col], home)
                data[col] = graph.original_ids(index, copy=not (index is data[col] and _fresh(index, raw)))
    order = [c for c in algo.outputs if c in data] + [c for c in data if c not in algo.outputs]
    owned = {c: v if c not in given and _fresh(v, raw) else v.copy() for c, v in data.items()}
    frame = new_frame(home, owned, order, take=True)
    if any(getattr(obj, "proxied", False) for obj in inputs.values()):
        return as_proxy(frame)  # cudf.pandas in, cudf.pandas out (around the cuDF or pandas result)
    return frame


def _fresh(value: Any, raw: Mapping[str, Any]) -> bool:
    """Whether a result column may become the frame's own: an array made for this result (a
    mapped vertex column, or a backend's array that is no view of other memory: its base is
    None, or the Numba runtime's record of memory Numba allocated itself)."""
    base = getattr(value, "base", None)
    own = base is None or type(base).__name__ == "_MemInfo" and getattr(base, "parent", 0) is None
    return own and sum(v is value for v in raw.values()) <= 1


@dataclass(frozen=True)
class Plan:
    """A validated call: the algorithm, bound inputs, Params instance, chosen backend and why."""

    algorithm: Algorithm
    inputs: Mapping[str, Any]
    params: Any
    backend: str
    reason: str


def validate(algo: Algorithm, inputs: Mapping[str, Any], params: Mapping[str, Any] | Any) -> tuple[dict, Any]:
    """Bound inputs and the Params instance, checked on the host (nothing runs, no backend yet)."""
    inputs = bind_inputs(algo, [], inputs)  # by slot name; a pairs slot may hold a frame or Graph
    p = params if isinstance(params, algo.params) else build_params(algo, dict(params))
    try:
        p.check_declared(**inputs)
        p.check_inputs(**inputs)
    except GraphopsError:
        raise
    except ValueError as exc:  # by contract, check_inputs' ValueErrors are about the input
        raise InputError(str(exc)) from exc
    return inputs, p


def plan(algo: Algorithm, inputs: Mapping[str, Any], backend: str, params: Mapping[str, Any] | Any,
         registry: Registry | None = None) -> Plan:
    """Validate parameters and inputs on the host and choose the backend; nothing runs yet."""
    registry = registry or get_registry()
    inputs, p = validate(algo, inputs, params)
    name, reason = choose_backend(algo, backend, inputs, p, registry.pm)
    log.info("%s: backend %r (%s)", algo.name, name, reason)
    return Plan(algo, inputs, p, name, reason)


def prepare(planned: Plan) -> list[Any]:
    """The backend's arguments in slot order: CSR views on its device, or a peer's prepared
    objects (cached); ``None`` for an optional slot left empty."""
    spec = planned.algorithm.backends[planned.backend]
    return [_slot_view(planned, slot, spec) for slot in planned.algorithm.inputs]


def execute_plan(planned: Plan) -> Outcome:
    """Run a plan: load the backend, hand it arrays, wrap the result like the input."""
    algo, spec = planned.algorithm, planned.algorithm.backends[planned.backend]
    fn = load_target(spec.target)
    t0 = time.perf_counter()
    args = prepare(planned)
    synchronize()
    t1 = time.perf_counter()
    with holding_interrupts(), _allocations(spec.device):  # Ctrl-C between kernel calls, never in Numba's compiler
        raw = fn(*args, planned.params)
    details = raw.details if isinstance(raw, Result) else {}
    raw = raw.value if isinstance(raw, Result) else raw
    result = wrap_result(algo, planned.backend, raw, planned.inputs, args)
    synchronize()
    return Outcome(result, algo.name, planned.backend, spec.device, time.perf_counter() - t1,
                   planned.reason, t1 - t0, details)


def _allocations(device: str) -> Any:
    """GPU backends allocate from a pool even where cuDF left CuPy on unpooled RMM."""
    if device != "gpu":
        return contextlib.nullcontext()
    from graphops.base.cuda import pooled_allocations

    return pooled_allocations()


def wrap_result(algo: Algorithm, backend: str, raw: Any, inputs: Mapping[str, Any], args: Sequence[Any] = ()) -> Any:
    """A backend's raw result (or a cluster call's merged one), checked against what ``algo``
    declares, as the caller gets it: on the inputs' device, a frame of their family with
    vertex columns mapped back to the caller's ids (through ``args``' pair views where they are
    the pairs)."""
    _check_result(algo, backend, raw)
    return _wrap(algo, raw, inputs, args)


def _check_result(algo: Algorithm, backend: str, raw: Any) -> None:
    """A backend's result must be what its algorithm declares: an array, or exactly the
    documented columns. A mismatch is the plugin's bug, named as such."""
    where = f"backend {backend!r} of algorithm {algo.name!r} (plugin {algo.plugin or '?'})"
    if algo.result == "array_or_frame" and not isinstance(raw, Mapping) and hasattr(raw, "shape"):
        return
    if algo.result == "array":
        parts = raw if isinstance(raw, tuple) else (raw,)
        if not parts or any(isinstance(a, Mapping) or not hasattr(a, "shape") for a in parts):
            raise PluginError(f"{where} returned a {type(raw).__name__}; the algorithm declares an "
                              f"array result (NumPy or CuPy, or a tuple of them)", plugin=algo.plugin)
        return
    if not isinstance(raw, Mapping):
        raise PluginError(f"{where} returned a {type(raw).__name__}; it must return a dict of columns "
                          f"{list(algo.outputs)}", plugin=algo.plugin)
    missing = [c for c in algo.outputs if c not in raw and c not in algo.optional_outputs]
    extra = [c for c in raw if c not in algo.outputs]
    if algo.outputs and (missing or extra):
        raise PluginError(f"{where} returned columns {list(raw)}; the algorithm declares {list(algo.outputs)}"
                          f"{' (missing: ' + ', '.join(missing) + ')' if missing else ''}"
                          f"{' (undeclared: ' + ', '.join(extra) + ')' if extra else ''}. Declare every "
                          f"output column in Algorithm(outputs=...)", plugin=algo.plugin)


def execute(algo: Algorithm, inputs: Mapping[str, Any], backend: str, params: Mapping[str, Any] | Any,
            registry: Registry | None = None) -> Outcome:
    """Validate, choose, run and wrap; see :func:`run`. ``params`` may be a dict or a Params."""
    return execute_plan(plan(algo, inputs, backend, params, registry))
