"""Gram matrices: normalization, and filling a large one on the GPU in tiles of rows.

:func:`normalize` works on NumPy and CuPy arrays alike. :func:`gram_rows` (GPU) is how a
kernel plugin whose backend fills rows of a Gram matrix (``sp_kernel``, ``mg_kernel``) gets
interruptible tiles sized by timing, device memory bounded by two tiles, the copy to the
host overlapped with the next tile, the lower triangle mirrored and normalization on the
GPU. It imports CuPy when called, so this module is importable without a GPU.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from graphops.base.work import chunks

__all__ = ["normalize", "gram_rows", "mirror_upper"]


def normalize(xp: Any, K: Any, diag_rows: Any, diag_cols: Any) -> Any:
    """``K / sqrt(d_rows d_colsᵀ)``, with 0 where either diagonal entry is 0."""
    scale = xp.sqrt(xp.outer(diag_rows, diag_cols))
    return xp.where(scale > 0, K / xp.where(scale > 0, scale, 1.0), 0.0)


def gram_rows(na: int, nb: int, fill: Any, *, what: str, tile: int = 1024, progress: bool | None = None,
              mirror: bool = False, diagonals: tuple[Any, Any] | None = None, to_host: bool = True,
              row_work: Any = None, first: float | None = None) -> Any:
    """The ``na × nb`` Gram matrix, ``fill(r0, r1, out)`` writing rows ``r0:r1`` into ``out``.

    Rows go in tiles sized by :func:`graphops.base.work.chunks` (each about 0.2 s of GPU work, at
    most ``tile`` rows; ``row_work``: each row's work, e.g. its path pairs, and ``first`` the
    work of the first tile before any timing; without them every row counts the same), so Ctrl-C
    stops a long job within about a second. The host waits for the tile before the one it
    just queued, so the GPU always has the next tile and at most two are in flight. Device memory holds two tiles at a time when the
    result goes to the host: the GPU fills one while the other is copied out (a second
    stream), so the copy of the matrix hides behind the computation. ``mirror``: only entries
    on and above the diagonal are filled; the rest are copied from them. ``diagonals``:
    normalize each tile on the GPU.
    """
    rows = max(1, min(tile, (1 << 21) // max(nb, 1), na))
    if row_work is None:  # cheap per pair (a GEMM): whole tiles from the start
        row_work = np.arange(nb, nb - na, -1).clip(1) if mirror else np.full(na, max(nb, 1))
        first = None
    cost = np.concatenate([[0], np.cumsum(np.asarray(row_work, dtype=np.float64) + 1.0)])
    first = float(cost[min(rows, na)]) if first is None else first
    import cupy as cp

    from graphops.base.cuda import wait

    computed: list[Any] = []  # the event after each tile's computation

    def sync() -> None:  # wait for the tile before the latest: one tile stays queued (no idle GPU)
        if len(computed) >= 2:
            wait(computed[-2])

    ranges = chunks(na, what=f"{what}, {na} x {nb} Gram", cost=cost, first=first, max_items=rows,
                    progress=progress, sync=sync)

    def tile(r0: int, r1: int, out: Any) -> None:
        fill(r0, r1, out)
        if diagonals is not None:
            out[...] = normalize(cp, out, diagonals[0][r0:r1], diagonals[1])

    if not to_host:
        K = cp.empty((na, nb), cp.float64)
        for r0, r1 in ranges:
            tile(r0, r1, K[r0:r1])
            computed.append(cp.cuda.get_current_stream().record())
        return mirror_upper(K) if mirror else K
    K = _pipelined(na, nb, rows, tile, ranges, computed)
    return mirror_upper(K) if mirror else K


def _pipelined(na: int, nb: int, rows: int, tile: Any, ranges: Any, computed: list[Any]) -> Any:
    """Fill a pinned host matrix tile by tile: compute on one stream, copy out on another.

    ``computed`` receives each tile's end-of-computation event (the ranges' ``sync`` waits on it).
    """
    import cupy as cp
    import cupyx

    from graphops.base.cuda import wait, wait_idle

    K = cupyx.empty_pinned((na, nb), np.float64)  # page-locked (pooled): copies at full link speed
    # compute: a blocking stream, so it waits for the set-up work queued on the default stream
    compute, copy = cp.cuda.Stream(), cp.cuda.Stream(non_blocking=True)
    buffers = [cp.empty((rows, nb), cp.float64) for _ in range(2)]
    copied: list[Any] = [None, None]  # when each buffer's last copy to the host finished
    with compute:
        for k, (r0, r1) in enumerate(ranges):
            slot = k % 2
            if copied[slot] is not None:
                wait(copied[slot])  # the copy two tiles back is done with this buffer
            tile(r0, r1, buffers[slot][:r1 - r0])
            computed.append(compute.record())
            copy.wait_event(computed[-1])
            buffers[slot][:r1 - r0].get(stream=copy, out=K[r0:r1])
            copied[slot] = copy.record()
    wait_idle(copy)
    return K


def mirror_upper(K: Any, block: int = 512) -> Any:
    """Copy the upper triangle of a square matrix onto its lower one, a block of rows at a time
    (NumPy or CuPy)."""
    xp = np if isinstance(K, np.ndarray) else __import__("cupy")
    n = len(K)
    for r0 in range(0, n, block):
        r1 = min(r0 + block, n)
        diag = K[r0:r1, r0:r1]
        diag[...] = xp.triu(diag) + xp.triu(diag, 1).T
        K[r1:, r0:r1] = K[r0:r1, r1:].T
    return K
