"""sp_kernel on a Dask cluster: Gram matrices (square or test × train, raw or normalized) in
blocks of rows, or of columns when the training set is the larger (each part derives its two
sets' path features anew, so the larger set is the one cut), balanced by the graphs'
shortest-path counts (n² a graph) (:func:`graphops.engine.cluster.gram_split`)."""
from __future__ import annotations

from typing import Any, Mapping

from graphops.engine.cluster import Split, gram_split

__all__ = ["split"]


def split(inputs: Mapping[str, Any], params: Any, workers: int) -> Split:
    return gram_split("sp_kernel", inputs, params, workers, "train", lambda nodes: nodes * nodes, cut_larger=True)
