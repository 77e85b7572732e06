"""Whether a Gram matrix call pays on a Dask cluster: the estimate :func:`~graphops.engine.gram.gram_split`
consults before cutting a call into blocks.

A call given a client is cut into blocks only where ``k`` workers are estimated to beat one
device by a margin (:data:`PAYS_BY`); else it runs in the calling process with the backend chosen
for the workers (:class:`~graphops.engine.parts.Here`), and its outcome says why. The estimate:

* ``t1``, one device's seconds, is the algorithm's own (``Gram(seconds="module:function")``,
  ``fn(inputs, params[, backend=...]) -> float``), from what is cheap to know (node counts; no
  kernel runs), with constants measured on named machines: graphops cannot see the workers'
  hardware before the call;
* ``tk = t1 / k + fixed(k) + moved / rate``: each worker's share of the work, the call's and its
  tasks' overhead (:data:`CALL_SECONDS`, :data:`TASK_SECONDS`), and the bytes moved: the blocks
  of K back to the caller (8 bytes an entry; a square matrix's upper triangle), plus, on a first
  call, the sets sent to every worker, at the rate of the cluster's protocol
  (:data:`LINK_BYTES_PER_SECOND`, read from the scheduler's address).

A call smaller than what any cluster adds to its share of the work (:func:`never_pays`: the call,
one worker's tasks and K's bytes, within :data:`PAYS_BY` of ``t1``) is kept here before the
scheduler is asked for its workers: no number of workers would change the choice, and a call of a
few milliseconds does not wait for that round trip. An algorithm that declares no estimate is
always cut (graphops' behaviour before the estimate). Importing this module imports no Dask.
"""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Any, Mapping

from graphops.engine.parts import PARTS_PER_WORKER
from graphops.errors import PluginError
from graphops.host.algorithm import Algorithm, load_target

__all__ = ["Site", "Estimate", "estimate", "never_pays", "one_device_seconds", "protocol_of", "link_rate", "PAYS_BY",
           "CALL_SECONDS", "TASK_SECONDS", "LINK_BYTES_PER_SECOND"]

# The cluster is used when its estimate, PAYS_BY times over, is still under one device's
# (tk < t1 / 1.1): a margin for the estimate's error, so that a close call stays on one device,
# which has nothing to send and no workers to lose.
PAYS_BY = 1.1

# Dask's overhead of a call (submitting, the stop event, gathering, merging the blocks) and of each
# task. On the 2-core Intel Xeon dev machine (CPU LocalCluster, 2 workers, tcp; 2026-11-24) a
# repeated sp_kernel call on MUTAG[:10] (6 tasks, 480 bytes back) took 57–85 ms against 1–6 ms in
# one process; on one H100 (ucx, 2026-11-23, docs/guide/dask.md) mg_kernel's 200 × 100,000 matrix
# took 1.28 s on one Dask worker (4 tasks, 160 MB back in ~13 ms) against 1.19 s without Dask.
CALL_SECONDS = 0.05
TASK_SECONDS = 0.004

# Bytes a second between the workers and the caller, by the scheduler address's protocol. ucx: a
# 40 MB block in about 3 ms, four in 13 ms, GPU to GPU (H100, 2026-11-23); tcp: through host memory
# at roughly 1–2 GB/s (the slow end, so that a tcp cluster is not chosen on an optimistic guess);
# inproc (a cluster of threads in this process): nothing is copied.
LINK_BYTES_PER_SECOND = {"ucx": 12e9, "tcp": 1e9, "inproc": math.inf}


@dataclass(frozen=True)
class Site:
    """What the estimate knows of the cluster a call was given (the executor fills it in).

    :param protocol: the scheduler address's protocol (``"ucx"``, ``"tcp"``, ...)
    :param backend: the backend chosen for the workers (and for this process, if it runs here)
    :param unsent_bytes: the bytes of the call's inputs not yet on the workers (a first call
        sends them to each worker; 0 when an earlier call on this client sent them)
    """

    protocol: str
    backend: str
    unsent_bytes: int = 0


def protocol_of(client: Any) -> str:
    """The protocol of ``client``'s scheduler address (``"tcp://host:8786"`` -> ``"tcp"``; ``ucxx``
    reads as ``ucx``); ``"tcp"`` when it has none."""
    address = str(getattr(getattr(client, "scheduler", None), "address", None) or "")
    scheme = address.partition("://")[0].lower() if "://" in address else "tcp"
    return "ucx" if scheme.startswith("ucx") else scheme


def link_rate(protocol: str) -> float:
    """Bytes a second over ``protocol`` (:data:`LINK_BYTES_PER_SECOND`; others, e.g. ``tls``, as tcp)."""
    return LINK_BYTES_PER_SECOND.get(protocol, LINK_BYTES_PER_SECOND["tcp"])


@dataclass(frozen=True)
class Estimate:
    """One device's seconds against ``workers``' (module doc), and the choice."""

    one_device: float
    workers: int
    tasks: int
    moved_bytes: float
    protocol: str

    @property
    def compute(self) -> float:
        """Each worker's share of the work (seconds)."""
        return self.one_device / max(self.workers, 1)

    @property
    def overhead(self) -> float:
        return CALL_SECONDS + TASK_SECONDS * self.tasks

    @property
    def moving(self) -> float:
        return self.moved_bytes / link_rate(self.protocol)

    @property
    def cluster(self) -> float:
        """``tk``: the call's estimated seconds on the cluster."""
        return self.compute + self.overhead + self.moving

    @property
    def pays(self) -> bool:
        return math.isinf(self.one_device) or self.cluster * PAYS_BY < self.one_device

    def why(self) -> str:
        """One line: both estimates and what the cluster's is made of."""
        return (f"estimated {_ms(self.one_device)} on one device against {_ms(self.cluster)} on {self.workers} "
                f"worker(s): {_ms(self.compute)} of work each, {_ms(self.overhead)} for the call and its "
                f"{self.tasks} tasks, {_size(self.moved_bytes)} moved over {self.protocol} in "
                f"{_ms(self.moving)}")


def _ms(seconds: float) -> str:
    return "unbounded" if math.isinf(seconds) else f"{seconds * 1e3:,.1f} ms"


def _size(n: float) -> str:
    return f"{n / 1e6:,.1f} MB" if n >= 1e5 else f"{n / 1e3:,.1f} kB"


def estimate(algo: Algorithm, inputs: Mapping[str, Any], params: Any, workers: int, site: Site) -> Estimate | None:
    """The estimate of a call of ``algo`` on ``workers`` workers of the cluster ``site`` describes;
    ``None`` when the algorithm declares none (``Gram(seconds=None)``)."""
    g = algo.gram
    if g is None or g.seconds is None:
        return None
    t1 = one_device_seconds(algo, inputs, params, site.backend)
    other = inputs.get(g.second)
    moved = 8.0 * _entries(algo, inputs) + float(site.unsent_bytes) * workers
    diagonals = other is not None and g.diagonal is not None and bool(g.normalize and getattr(params, g.normalize))
    tasks = workers * PARTS_PER_WORKER + (2 * workers if diagonals else 0)  # gram_split's blocks (at most)
    return Estimate(t1, workers, tasks, moved, site.protocol)


def never_pays(algo: Algorithm, inputs: Mapping[str, Any], params: Any, backend: str, protocol: str) -> str | None:
    """Why a call of ``algo`` by ``backend`` would pay on no cluster over ``protocol``, of any size:
    one device's estimate is within :data:`PAYS_BY` of what the cluster adds to its share of the work
    however many workers share it (a call and one worker's tasks, and K's bytes moved); else
    ``None``, also when the algorithm declares no estimate. The executor asks this before it asks the
    scheduler for its workers: a call this small does not wait for that round trip."""
    g = algo.gram
    if g is None or g.seconds is None:
        return None
    t1 = one_device_seconds(algo, inputs, params, backend)
    least = Estimate(0.0, 1, PARTS_PER_WORKER, 8.0 * _entries(algo, inputs), protocol)
    if math.isinf(t1) or least.cluster * PAYS_BY < t1:
        return None
    return (f"estimated {_ms(t1)} on one device against at least {_ms(least.cluster)} on any number of workers: "
            f"{_ms(least.overhead)} for a call and its tasks, {_size(least.moved_bytes)} moved over {protocol} in "
            f"{_ms(least.moving)}")


def _entries(algo: Algorithm, inputs: Mapping[str, Any]) -> float:
    """The entries of K a call computes (a square matrix: its upper triangle)."""
    na, other = len(inputs["graphs"]), inputs.get(algo.gram.second)
    return na * (na + 1) / 2 if other is None else float(na * len(other))


def one_device_seconds(algo: Algorithm, inputs: Mapping[str, Any], params: Any, backend: str) -> float:
    """The algorithm's declared estimate (``backend=`` given when its function takes it), checked:
    a number of seconds, not negative (``inf``: so much work that the cluster always pays)."""
    from graphops.engine.local import plugin_code

    with plugin_code(algo, backend):
        fn = load_target(algo.gram.seconds)
        value = fn(dict(inputs), params, backend=backend) if _takes_backend(fn) else fn(dict(inputs), params)
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if not seconds >= 0:
        raise PluginError(f"algorithm {algo.name!r}: Gram(seconds={algo.gram.seconds!r}) returned {value!r}; it must "
                          f"return the estimated seconds of the call on one device (a number >= 0). Fix the "
                          f"estimate", plugin=algo.plugin)
    return seconds


def _takes_backend(fn: Any) -> bool:
    try:
        return "backend" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False

