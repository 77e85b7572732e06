"""Dispatch: the one path every call takes — ``run``, ``execute_call``, pipeline steps, the
benchmark and the parts of a cluster call alike.

1. **bind** the inputs to the algorithm's slots (:mod:`graphops.engine.binding`);
2. **validate** parameters and inputs on the host, once, before any transfer;
3. **choose** the backend once, for this device or for every worker of a Dask cluster
   (:mod:`graphops.engine.choose`; the ``graphops_choose_backend`` hook for ``auto``);
4. the caller may observe the :class:`~graphops.engine.plan.Plan` (pipelines call their
   ``graphops_step_start`` hook here);
5. **execute** it on one of two executors behind one interface: here
   (:func:`graphops.engine.local.run_here`) or on the cluster's workers
   (:func:`graphops.engine.cluster.run_on_cluster`), which send the workers the
   :class:`~graphops.host.algorithm.Algorithm` object itself;
6. **wrap** the result in the caller's frame family (:func:`graphops.engine.plan.wrap_result`).
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Mapping

from graphops.engine.binding import as_graphset, bind_inputs
from graphops.engine.choose import check_backend_name, choose_backend
from graphops.engine.local import prepare, run_here
from graphops.engine.plan import Outcome, Plan, wrap_result
from graphops.errors import GraphopsError, InputError
from graphops.host.algorithm import Algorithm
from graphops.host.registry import Registry, get_registry
from graphops.host.validation import build_params
from graphops.model.daskgraph import DaskGraph

log = logging.getLogger("graphops")

__all__ = ["run", "execute", "execute_call", "plan", "validate", "execute_plan", "prepare", "wrap_result", "Plan",
           "Outcome", "choose_backend", "check_backend_name", "bind_inputs", "as_graphset"]


def run(algorithm: str, *inputs: Any, backend: str = "auto", registry: Registry | None = None,
        client: Any = None, **params: Any) -> Any:
    """Run a registered algorithm on graphs; the result follows the input's frame family.

    :param algorithm: a registered name (``graphops plugins`` lists them)
    :param inputs: :class:`Graph`/:class:`GraphSet` objects (or networkx graphs, lists of them),
        in the algorithm's slot order (an input slot may also be given by keyword, ``pairs=frame``)
    :param backend: ``auto`` (default), ``cpu``, ``gpu``, ``hybrid`` or another offered name
    :param client: a ``dask.distributed.Client``: the work is cut into tasks run by its workers
        (:mod:`graphops.engine.cluster`), with the same result
    :param params: the algorithm's parameters, validated by its Params model
    """
    return execute_call(algorithm, *inputs, backend=backend, registry=registry, client=client, **params).result


def execute_call(algorithm: str, *inputs: Any, backend: str = "auto", registry: Registry | None = None,
                 client: Any = None, **params: Any) -> Outcome:
    """As :func:`run`, returning the :class:`Outcome`: the result with the backend that ran, its
    device, times, why it was chosen and the backend's ``details`` (e.g. a hybrid split)."""
    registry = registry or get_registry()
    algo = registry.algorithm(algorithm)
    former = {old for slot in algo.inputs for old in slot.renamed_from}
    by_name = {algo.renamed(k): params.pop(k) for k in list(params) if k in algo.slot_names or k in former}
    return execute(algo, bind_inputs(algo, inputs, by_name), backend, params, registry, client=client)


def execute(algo: Algorithm, inputs: Mapping[str, Any], backend: str, params: Mapping[str, Any] | Any,
            registry: Registry | None = None, *, client: Any = None,
            started: Callable[[Plan], None] | None = None, declared_checked: bool = False) -> Outcome:
    """Validate, choose, (``started(plan)``: e.g. a pipeline's step hook), run on this device or on
    ``client``'s workers, wrap. ``params`` may be a dict or a Params instance; ``declared_checked``:
    that instance's ``check_declared`` already passed for these inputs' declarations (a pipeline's
    meaning pass), so it is not run again."""
    planned = plan(algo, inputs, backend, params, registry, client=client, declared_checked=declared_checked)
    if started is not None:
        started(planned)
    return execute_plan(planned)


def validate(algo: Algorithm, inputs: Mapping[str, Any], params: Mapping[str, Any] | Any,
             declared_checked: bool = False) -> tuple[dict, Any]:
    """Bound inputs and the Params instance, checked on the host (nothing runs, no backend yet)."""
    inputs = bind_inputs(algo, [], inputs)  # by slot name; a pairs slot may hold a frame or Graph
    p = params if isinstance(params, algo.params) else build_params(algo, dict(params))
    try:
        if not (declared_checked and p is params):
            p.check_declared(**inputs)
        p.check_inputs(**inputs)
    except GraphopsError:
        raise
    except ValueError as exc:  # by contract, check_inputs' ValueErrors are about the input
        raise InputError(str(exc)) from exc
    return inputs, p


def _check_client(client: Any) -> None:
    """``client=`` must be a running ``dask.distributed.Client`` (one line otherwise)."""
    from graphops.errors import InputTypeError

    if not hasattr(client, "scheduler_info") or not hasattr(client, "submit"):
        raise InputTypeError(f"client must be a dask.distributed.Client (e.g. Client(LocalCluster()) or "
                             f"Client('tcp://host:8786')); got {type(client).__name__} {client!r:.80}")
    if getattr(client, "asynchronous", False) is True:
        raise InputError("the Dask client given is asynchronous (Client(..., asynchronous=True)); graphops waits "
                         "for its cluster calls: give it a client made without asynchronous=True")
    status = getattr(client, "status", "running")
    if status != "running":
        raise InputError(f"the Dask client given is {status} (closed, or its cluster stopped): make a new one, or "
                         f"leave client out to run here")


def plan(algo: Algorithm, inputs: Mapping[str, Any], backend: str, params: Mapping[str, Any] | Any,
         registry: Registry | None = None, *, client: Any = None, declared_checked: bool = False) -> Plan:
    """Validate parameters and inputs on the host and choose the backend (for every worker of
    ``client`` when given); nothing runs yet. The registry's hook is asked only for ``auto``."""
    if client is not None:
        _check_client(client)
    if client is not None and not algo.distributes:
        raise InputError(f"{algo.name} does not run on a Dask cluster (it declares no split of its work); "
                         f"leave client out to run it on one device")
    inputs, p = validate(algo, inputs, params, declared_checked)
    workers = listed = None
    if client is not None:
        from graphops.engine.cluster import worker_status

        one = [m for m in (algo.gram.one_device if algo.gram is not None else ()) if getattr(p, m)]
        if one:
            raise InputError(f"{algo.name}: {one[0]}=True runs on one device; on a Dask cluster (client=) "
                             f"{algo.name} computes Gram matrices. Leave client out for this call")
        small = _never_pays(algo, inputs, p, backend, client)
        if small:  # here, without asking the scheduler for its workers
            name, reason = choose_backend(algo, backend, inputs, p, None, None)
            log.info("%s: backend %r (%s); %s", algo.name, name, reason, small)
            return Plan(algo, inputs, p, name, reason, kept=small)
        listed = client.scheduler_info(n_workers=-1).get("workers", {})
        workers = worker_status(client, listed)
    elif any(isinstance(obj, DaskGraph) for obj in inputs.values()):
        raise InputError(f"{algo.name}: the graph is a Dask edge frame (a DaskGraph), which runs only on a Dask "
                         f"cluster: pass client=<dask.distributed.Client>, or build a Graph from ddf.compute()")
    pm = (registry or get_registry()).pm if str(backend).lower() == "auto" else None
    name, reason = choose_backend(algo, backend, inputs, p, pm, workers)
    if workers is not None:
        reason = f"{reason} (Dask, {len(workers)} worker(s))"
    log.info("%s: backend %r (%s)", algo.name, name, reason)
    return Plan(algo, inputs, p, name, reason, client, len(workers or ()), listed)


def _never_pays(algo: Algorithm, inputs: Mapping[str, Any], params: Any, backend: str, client: Any) -> str:
    """``"cluster not used: ..."`` for a Gram call given a client that no cluster could speed up
    (:func:`graphops.engine.gramcost.never_pays`), by a backend named (not ``auto``: that is chosen
    with the workers) that runs here; else ``""``. Such a call does not look at the workers: it
    runs here also where they could not have run it (a cluster without workers, or without GPUs)."""
    name = str(backend).lower()
    spec = algo.backends.get(name) if algo.gram is not None and algo.gram.seconds is not None else None
    if spec is None:
        return ""
    from graphops.engine.choose import _usable  # this process's check of one backend (a cluster backend: not)
    from graphops.engine.gramcost import never_pays, protocol_of

    if not _usable(spec)[0]:
        return ""
    why = never_pays(algo, inputs, params, name, protocol_of(client))
    return f"cluster not used: {why}" if why else ""


def execute_plan(planned: Plan) -> Outcome:
    """Run a plan on its executor: this process, or its client's workers."""
    if planned.client is None:
        return run_here(planned)
    from graphops.engine.cluster import run_on_cluster

    return run_on_cluster(planned)
