"""GraKeL's ``ShortestPath(with_labels=True)`` as a peer backend of ``sp_kernel``."""
from __future__ import annotations

from typing import Any

import numpy as np

from graphops.plugin import InputError

from .params import SPKernelParams


def to_grakel(gs: Any) -> list[list[Any]]:
    """Each graph as GraKeL's ``[edge set, node labels]`` input; done once, outside timings."""
    gs = gs.to("cpu")
    out = []
    for g in range(len(gs)):
        n0, n1 = int(gs.node_ptr[g]), int(gs.node_ptr[g + 1])
        e0, e1 = int(gs.edge_ptr[g]), int(gs.edge_ptr[g + 1])
        edges = {(int(u) - n0, int(v) - n0) for u, v in zip(gs.src[e0:e1], gs.dst[e0:e1])}
        if not gs.directed:
            edges |= {(v, u) for u, v in edges}
        labels = {i: int(gs.node_labels[n0 + i]) for i in range(n1 - n0)}
        out.append([edges, labels])
    return out


def run_grakel(graphs: list, train: list | None, params: SPKernelParams) -> np.ndarray:
    from grakel.kernels import ShortestPath

    if not (params.node_kernel.delta and params.length_kernel.delta):
        raise InputError("the grakel peer offers only delta node and length kernels "
                         "(ShortestPath(with_labels=True))")
    kernel = ShortestPath(with_labels=True, normalize=params.normalize)
    if train is None:
        return np.asarray(kernel.fit_transform(graphs), dtype=np.float64)
    kernel.fit(train)
    return np.asarray(kernel.transform(graphs), dtype=np.float64)
