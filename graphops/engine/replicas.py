"""Keeping the copies graphops sends every worker, on the scheduler of the client's cluster.

A call sends its inputs to every worker once (:func:`~graphops.engine.placing.broadcast`) and the workers keep
what they derive from them (slices, plans, device copies) for the next call. Dask's Active Memory
Manager, on by default, runs a ``ReduceReplicas`` policy every two seconds that drops every copy
of a key beyond the one its waiting tasks need; Dask's own ``scatter`` documentation says to turn
it off for broadcast data. Dropped, the next call's parts fetch the inputs again, get new objects
and derive everything again: on 4 GPUs an mg_kernel Gram call spent 2 to 3.4 s of its 9.6 s
rebuilding its plans that way. :func:`keep_sent` (run on the scheduler once per client) puts in
that policy's place one that leaves graphops' keys (:data:`SENT_PREFIX`) alone and reduces every
other key as before; the cluster's other work is not affected. This module imports Dask: only
the scheduler and a client's caller load it.
"""
from __future__ import annotations

from typing import Any

from distributed.active_memory_manager import ReduceReplicas

__all__ = ["SENT_PREFIX", "ReduceOthersReplicas", "keep_sent"]

SENT_PREFIX = "graphops-sent-"


class ReduceOthersReplicas(ReduceReplicas):
    """Dask's ``ReduceReplicas``, except for keys graphops sent every worker on purpose."""

    def run(self) -> Any:
        for suggestion in super().run():
            if not str(suggestion.ts.key).startswith(SENT_PREFIX):
                yield suggestion


def keep_sent(dask_scheduler: Any = None) -> str:
    """On the scheduler: its Active Memory Manager's ``ReduceReplicas`` replaced by
    :class:`ReduceOthersReplicas` (once; later runs find it there). What it found, in words."""
    amm = dask_scheduler.extensions.get("amm") if dask_scheduler is not None else None
    if amm is None:
        return "no active memory manager"
    found = [p for p in amm.policies if type(p) is ReduceReplicas]
    for policy in found:
        amm.policies.discard(policy)
        amm.add_policy(ReduceOthersReplicas())
    if found or any(isinstance(p, ReduceOthersReplicas) for p in amm.policies):
        return "graphops' copies kept"
    return "no ReduceReplicas policy"
