"""The local executor: a plan's backend on this process's device — inputs prepared for it
(CSR views on its device, a peer's own structure, pair indexes), the backend called with Ctrl-C
held until its next chunk boundary, its result wrapped as the caller gets it.

An exception raised by the plugin's code (importing the backend, its ``prepare``, the backend
itself) keeps its type, so callers still catch it, and gains a note (``exc.add_note``) naming the
backend, the algorithm, the plugin and its distribution, and saying it is the plugin's bug
(:func:`plugin_code`); graphops' own errors (a :class:`~graphops.errors.GraphopsError` such as an
``InputError`` a helper raised), ``MemoryError`` and Ctrl-C pass unchanged. :func:`error_line`
gives an error with its notes on one line, for summaries."""
from __future__ import annotations

import contextlib
import time
from typing import Any

from graphops.base.device import Device, device_of, synchronize, to_device
from graphops.base.work import holding_interrupts
from graphops.engine.binding import is_matrix
from graphops.engine.plan import Outcome, Plan, wrap_result
from graphops.errors import GraphopsError, error_line
from graphops.host.algorithm import Backend, Result, load_target
from graphops.model.pairs import PairIndex, Pairs

__all__ = ["prepare", "run_here", "run_part", "run_kernel", "plugin_code", "plugin_note", "error_line"]


def plugin_note(algo: Any, backend: str) -> str:
    """The note an exception from a plugin's backend gets: where it was raised, and whose bug it is."""
    dist = f", distribution {algo.distribution}" if algo.distribution else ""
    return (f"graphops: raised inside backend {backend!r} of algorithm {algo.name!r} (plugin "
            f"{algo.plugin or '?'!r}{dist}): a bug of the plugin, not of the input; report it to the plugin's authors")


@contextlib.contextmanager
def plugin_code(algo: Any, backend: str) -> Any:
    """Run a plugin's code (module doc): an exception that is not graphops' own gets :func:`plugin_note`."""
    try:
        yield
    except (GraphopsError, MemoryError):
        raise
    except Exception as exc:
        exc.add_note(plugin_note(algo, backend))
        raise


def _prepare(obj: Any, spec: Backend) -> Any:
    if is_matrix(obj):  # a matrix input (binding's rule): as it is, on the backend's device
        return to_device(obj, Device(spec.device))
    if spec.prepare is not None:
        return obj.cached(("prepare", spec.prepare), lambda: load_target(spec.prepare)(obj))
    return obj.csr(Device(spec.device))


def _slot_view(planned: "Plan", slot: Any, spec: Backend, prepared: Any = _prepare) -> Any:
    """What a backend receives for one slot: a CSR view, a peer's prepared object (``prepared(obj,
    spec)``), a PairIndex for a pairs slot, or ``None`` for an optional slot left empty."""
    graph = next(iter(planned.inputs.values()))
    if "pairs" in slot.kinds:
        pairs = planned.inputs.get(slot.name)
        if pairs is None and slot.default == "edges":
            pairs = Pairs.edges_of(graph)
        if isinstance(pairs, PairIndex):  # a part's own slice of a cluster call's pairs (internal indices)
            return _index_on(pairs, Device(spec.device))
        return None if pairs is None else pairs.index(graph, Device(spec.device))
    if slot.name not in planned.inputs:
        return None
    return prepared(planned.inputs[slot.name], spec)


def _index_on(index: PairIndex, device: Device) -> PairIndex:
    if all(device_of(a) is device for a in (index.first, index.second)):
        return index
    return PairIndex(to_device(index.first, device), to_device(index.second, device), index.digest)


def prepare(planned: Plan, prepared: Any = _prepare) -> list[Any]:
    """The backend's arguments in slot order: CSR views on its device, or a peer's prepared
    objects (cached; ``prepared(obj, spec)`` makes them); ``None`` for an optional slot left empty."""
    spec = planned.algorithm.backends[planned.backend]
    return [_slot_view(planned, slot, spec, prepared) for slot in planned.algorithm.inputs]


def run_here(planned: Plan, wrap: bool = True) -> Outcome:
    """Run a plan here: load the backend, hand it arrays, wrap the result like the input
    (``wrap=False``: the backend's own value, for a part whose values the caller merges)."""
    algo, spec = planned.algorithm, planned.algorithm.backends[planned.backend]
    with plugin_code(algo, planned.backend):
        fn = load_target(spec.target)
    t0 = time.perf_counter()
    with plugin_code(algo, planned.backend) if spec.prepare is not None else contextlib.nullcontext():
        args = prepare(planned)
    synchronize()
    t1 = time.perf_counter()
    with _allocations(spec.device):
        with holding_interrupts(), plugin_code(algo, planned.backend):  # Ctrl-C between kernel calls
            raw = fn(*args, planned.params)
        details = dict(raw.details) if isinstance(raw, Result) else {}
        raw = raw.value if isinstance(raw, Result) else raw
        if planned.kept:
            details["cluster"] = planned.kept
        # its copies: from the pool too
        result = wrap_result(algo, planned.backend, raw, planned.inputs, args) if wrap else raw
    synchronize()
    reason = f"{planned.reason}; {planned.kept}" if planned.kept else planned.reason
    return Outcome(result, algo.name, planned.backend, spec.device, time.perf_counter() - t1, reason, t1 - t0, details)


def _allocations(device: str) -> Any:
    """GPU backends allocate from a pool even where cuDF left CuPy on unpooled RMM, and so do the
    result's copies: a cudaMalloc and cudaFree (which synchronise) of each 268 MB pair column
    took 0.2 ms apiece of a 3 ms Jaccard call on a 4096² grid."""
    if device != "gpu":
        return contextlib.nullcontext()
    from graphops.base.cuda import pooled_allocations

    return pooled_allocations()


def run_part(algorithm: Any, inputs: dict[str, Any], params: Any, backend: str, wrap: bool = True) -> Any:
    """On a Dask worker: ``algorithm`` (the object the caller dispatched, sent along) run by
    ``backend`` on a part of a validated call's inputs (a slice of its pairs, a block of its
    sets; a pairs slot may be a :class:`~graphops.model.pairs.PairIndex` of the graph's internal
    indices), here, its result wrapped as for a call (``wrap=False``: the backend's own value,
    e.g. its columns of internal indices, for a merge that wraps the whole). ``params``: the
    call's validated Params."""
    return run_here(Plan(algorithm, dict(inputs), params, backend, "a part of a cluster call"), wrap).result


def run_kernel(algorithm: Any, backend: str, fn: Any, *args: Any) -> Any:
    """On a Dask worker: a plugin's own function ``fn(*args)`` computing a part from what its
    split sent (e.g. jaccard's kernels on the set adjacency), run as a backend is run: an error
    of the plugin's code gets its note, Ctrl-C waits for a chunk boundary, GPU arrays come from
    the pool."""
    with _allocations(algorithm.backends[backend].device), holding_interrupts(), plugin_code(algorithm, backend):
        return fn(*args)
