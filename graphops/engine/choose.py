"""Choosing a backend, once per call, for this device or for every worker of a Dask cluster:
strict when named (a backend that cannot run is an error saying what was tried and the fix),
explained when ``auto`` (a ``graphops_choose_backend`` hook first, then the GPU when usable,
else the CPU; the choice and its reason are logged at INFO)."""
from __future__ import annotations

import logging
from typing import Any, Mapping

from graphops.base.device import gpu_status, module_available
from graphops.errors import BackendUnavailableError, InputError, choices, did_you_mean
from graphops.host.algorithm import Algorithm, Backend

log = logging.getLogger("graphops")

__all__ = ["choose_backend", "check_backend_name", "backend_status"]


def _usable(spec: Backend) -> tuple[bool, str]:
    """Whether a backend can run in this process, and what was checked."""
    if spec.cluster:
        return False, "it runs a whole call on a Dask cluster, and no client was given"
    if spec.device == "gpu":
        ok, why = gpu_status()
        if not ok:
            return False, why
    missing = [m for m in spec.requires if not module_available(m)]
    if missing:
        return False, f"the package(s) {', '.join(repr(m) for m in missing)} could not be imported"
    return True, "available"


def backend_status(algo: Algorithm, workers: Mapping[str, tuple[bool, str]] | None = None) -> dict[str, tuple]:
    """Whether each backend can run, and why not: here (``workers`` None), or on every worker of a
    cluster (``workers``: each worker's address -> its own ``gpu_status()``)."""
    if workers is None:
        return {name: _usable(spec) for name, spec in algo.backends.items()}
    no_gpu = {addr: why for addr, (ok, why) in workers.items() if not ok}
    shown = "; ".join(f"{addr}: {why}" for addr, why in sorted(no_gpu.items())[:4])
    return {name: (False, f"{len(no_gpu)} of {len(workers)} worker(s) have no usable GPU ({shown})")
            if spec.device == "gpu" and no_gpu else _usable_on_cluster(spec)
            for name, spec in algo.backends.items()}


def _usable_on_cluster(spec: Backend) -> tuple[bool, str]:
    """A cluster backend calls its library here (with the client): it needs its modules here."""
    if spec.cluster:
        missing = [m for m in spec.requires if not module_available(m)]
        if missing:
            return False, f"the package(s) {', '.join(repr(m) for m in missing)} could not be imported here"
    return True, "every worker can run it"


def _fix_hint(spec: Backend, cluster: bool) -> str:
    if spec.cluster and not cluster:
        return ("pass client=<dask.distributed.Client> (in a pipeline or benchmark file: a cluster: section), "
                "or ask for another backend")
    if spec.device == "gpu" and cluster:
        return ("start the workers with dask_cuda (LocalCUDACluster or dask-cuda-worker), or ask for "
                "backend='cpu' or 'auto'")
    if spec.device == "gpu":
        return ("install the GPU extra (pip install 'graphops[gpu]'), make sure nvidia-smi lists a "
                "device and CUDA_VISIBLE_DEVICES allows it, or ask for backend='cpu' or 'auto'")
    return f"install {', '.join(spec.requires)} (pip install {' '.join(spec.requires)})"


def check_backend_name(algo: Algorithm, requested: str) -> None:
    """An explicit backend name must be one the algorithm offers (lower case); one the registry
    left out (it breaks the backend contract) is unavailable, and the error says why."""
    if requested in algo.unusable:
        raise BackendUnavailableError(f"{algo.name}: backend {requested!r} (plugin {algo.plugin!r}) was requested, but "
                                      f"it is not offered: {algo.unusable[requested]}. Offered: "
                                      f"{choices(['auto', *algo.backends])}")
    if requested not in algo.backends:
        raise InputError(f"{algo.name}: unknown backend {requested!r}. Offered: "
                         f"{choices(['auto', *algo.backends])}.{did_you_mean(requested, algo.backends)}")


def choose_backend(algo: Algorithm, requested: str, inputs: Mapping[str, Any], params: Any, pm: Any = None,
                   workers: Mapping[str, tuple[bool, str]] | None = None) -> tuple[str, str]:
    """The backend to run and the reason, here or (``workers``) on every worker of a cluster;
    strict when explicit, explained when ``auto``. ``pm``: the plugin manager whose
    ``graphops_choose_backend`` hook ``auto`` asks first (none asked when ``None``)."""
    requested = str(requested).lower()
    where = "but cannot run here:" if workers is None else "on the cluster, but"
    status = backend_status(algo, workers)
    if requested != "auto":
        check_backend_name(algo, requested)
        ok, why = status[requested]
        if not ok:
            raise BackendUnavailableError(
                f"{algo.name}: backend {requested!r} was requested {where} {why}. "
                f"To remedy this: {_fix_hint(algo.backends[requested], workers is not None)}")
        return requested, "requested"
    return _auto(algo, inputs, params, pm, {n: status[n] for n in algo.own_backends()})


def _auto(algo: Algorithm, inputs: Mapping[str, Any], params: Any, pm: Any,
          status: Mapping[str, tuple[bool, str]]) -> tuple[str, str]:
    runnable = tuple(n for n, (ok, _) in status.items() if ok)
    if not runnable:
        tried = "; ".join(f"{n}: {why}" for n, (_, why) in status.items())
        raise BackendUnavailableError(f"{algo.name}: no backend can run here ({tried})")
    hint = None if pm is None else pm.hook.graphops_choose_backend(algorithm=algo, inputs=dict(inputs), params=params,
                                                                   offered=runnable)
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
