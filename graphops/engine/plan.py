"""A call once decided, and what it gives back: the :class:`Plan` (validated inputs and
parameters, the backend chosen and why, and where it runs), the :class:`Outcome`, and the
wrapping of a backend's raw result (or a cluster call's merged one) as the caller gets it: checked
against what the algorithm declares, on the inputs' device, in their frame family, with vertex
indices mapped back to the caller's ids."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from graphops.base.device import Device, as_proxy, device_of, to_device
from graphops.errors import PluginError
from graphops.host.algorithm import Algorithm
from graphops.model.frames import new_frame
from graphops.model.graph import Graph
from graphops.model.pairs import PairIndex

__all__ = ["Plan", "Outcome", "wrap_result"]


@dataclass(frozen=True)
class Plan:
    """A validated call: the algorithm, bound inputs, Params instance, the backend chosen (for this
    device, or for every worker of ``client``) and why."""

    algorithm: Algorithm
    inputs: Mapping[str, Any]
    params: Any
    backend: str
    reason: str
    client: Any = None  # a Dask client: the call's parts run on its workers (graphops.engine.cluster)
    workers: int = 0  # how many workers the backend was chosen for
    listed: Mapping[str, Any] | None = None  # the scheduler's workers when planned (saves the parts a round trip)
    kept: str = ""  # a call given a client that runs here instead: why ("cluster not used: ..."; details["cluster"])


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


def wrap_result(algo: Algorithm, backend: str, raw: Any, inputs: Mapping[str, Any], args: Sequence[Any] = ()) -> Any:
    """A backend's raw result (or a cluster call's merged one), checked against what ``algo``
    declares, as the caller gets it: on the inputs' device, a frame of their family with
    vertex columns mapped back to the caller's ids (through ``args``' pair views where they are
    the pairs)."""
    _check_result(algo, backend, raw)
    if isinstance(raw, Mapping):
        _check_lengths(algo, backend, raw)
    return _wrap(algo, backend, raw, inputs, args)


def _where(algo: Algorithm, backend: str) -> str:
    dist = f", {algo.distribution}" if algo.distribution else ""
    return f"backend {backend!r} of algorithm {algo.name!r} (plugin {algo.plugin or '?'}{dist})"


def _check_result(algo: Algorithm, backend: str, raw: Any) -> None:
    """A backend's result must be what its algorithm declares: an array, or exactly the
    documented columns. A mismatch is the plugin's bug, named as such."""
    where = _where(algo, backend)
    if algo.result == "array_or_frame" and not isinstance(raw, Mapping) and hasattr(raw, "shape"):
        _check_dtypes(algo, where, (raw,))
        return
    if algo.result == "array":
        parts = raw if isinstance(raw, tuple) else (raw,)
        if not parts or any(isinstance(a, Mapping) or not hasattr(a, "shape") for a in parts):
            raise PluginError(f"{where} returned a {type(raw).__name__}; the algorithm declares an "
                              f"array result (NumPy or CuPy, or a tuple of them)", plugin=algo.plugin)
        _check_dtypes(algo, where, parts)
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


def _check_dtypes(algo: Algorithm, where: str, arrays: Sequence[Any]) -> None:
    """An array result holds numbers or booleans (an object array, of strings or Python objects,
    cannot be written as .npy/.csv or computed with)."""
    for i, a in enumerate(arrays):
        kind = getattr(getattr(a, "dtype", None), "kind", None)
        if kind not in tuple("biufc"):
            which = f"array {i} of its tuple" if len(arrays) > 1 else "an array"
            raise PluginError(f"{where} returned {which} of dtype {getattr(a, 'dtype', None)}; an array result "
                              f"holds numbers or booleans (a bool, integer, float or complex dtype). Fix the "
                              f"backend", plugin=algo.plugin, distribution=algo.distribution or None)


def _check_lengths(algo: Algorithm, backend: str, raw: Mapping[str, Any]) -> None:
    """A frame result's columns must be one-dimensional and of one length."""
    lengths = {col: _length(v) for col, v in raw.items()}
    if len(set(lengths.values())) > 1 or None in lengths.values():
        shown = ", ".join(f"{c}: {'not one-dimensional' if n is None else f'{n:,}'}" for c, n in lengths.items())
        raise PluginError(f"{_where(algo, backend)} returned columns of different lengths ({shown}); a frame result "
                          f"has one value per row in every column. Fix the backend", plugin=algo.plugin)


def _check_index(algo: Algorithm, backend: str, col: str, slot: str, graph: Graph, values: Any) -> None:
    """A vertex column must hold integer indices in range of its input's vertices (they are mapped
    to the caller's ids next): checked on the column's device, one reduction."""
    problem = index_problem(values, graph.n_vertices)
    if problem is not None:
        raise PluginError(f"{_where(algo, backend)} returned vertex column {col!r} (indices of input {slot!r}, "
                          f"0..{graph.n_vertices - 1}) {problem}; graphops maps these indices to the caller's ids. "
                          f"Fix the backend", plugin=algo.plugin)


def _length(values: Any) -> int | None:
    shape = getattr(values, "shape", None)
    if shape is not None:
        return int(shape[0]) if len(shape) == 1 else None
    return len(values) if hasattr(values, "__len__") else None


def index_problem(values: Any, n: int) -> str | None:
    """What is wrong with ``values`` (a NumPy or CuPy array) as indices of ``n`` vertices, or ``None``:
    an integer dtype is needed, and every value in ``0..n-1`` (one reduction: negative values,
    seen unsigned, are past ``n`` too)."""
    dtype = getattr(values, "dtype", None)
    if dtype is None or getattr(values, "ndim", 0) != 1:
        return f"is a {type(values).__name__}, not a one-dimensional integer array"
    if dtype.kind not in "iu":
        nan = dtype.kind == "f" and bool(device_of(values).xp.isnan(values).any())
        return f"has dtype {dtype}{' and holds NaN' if nan else ''}; vertex indices are integers (int32 or int64)"
    if values.size == 0 or int(values.view(f"u{dtype.itemsize}").max()) < n:
        return None
    xp = device_of(values).xp
    bad = xp.flatnonzero((values < 0) | (values >= n))
    row = int(bad[0])
    return (f"holds {int(bad.size):,} value(s) out of range (row {row}: {int(values[row])}; smallest "
            f"{int(values.min())}, largest {int(values.max())})")


def _home(inputs: Mapping[str, Any]) -> Device:
    return next(iter(inputs.values())).device


def _wrap(algo: Algorithm, backend: str, raw: Any, inputs: Mapping[str, Any], args: Sequence[Any] = ()) -> Any:
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
            if known:  # the caller's own pairs, returned as they were given
                given.add(col)
                data[col] = known[0]
            else:
                _check_index(algo, backend, col, slot, graph, data[col])
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
