"""mg_kernel on a Dask cluster: Gram matrices (square or test × train, raw or normalized) in
blocks of rows, balanced by the pairs' product-graph sizes (:func:`graphops.engine.cluster.gram_split`).
The diagonal, node-wise and gradient modes run on one device."""
from __future__ import annotations

from typing import Any, Mapping

from graphops.engine.cluster import Split, gram_split
from graphops.errors import InputError

__all__ = ["split"]


def split(inputs: Mapping[str, Any], params: Any, workers: int) -> Split:
    modes = [m for m in ("diagonal", "nodewise", "eval_gradient") if getattr(params, m)]
    if modes:
        raise InputError(f"mg_kernel: {modes[0]}=True runs on one device; on a Dask cluster (client=) mg_kernel "
                         f"computes Gram matrices. Leave client out for this call")
    # CG work of a pair grows with its unknowns, n1 * n2 (times the iterations, about alike)
    return gram_split("mg_kernel", inputs, params, workers, "other", lambda nodes: nodes)
