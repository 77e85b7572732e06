"""Small statistics shared by plugins, written once for NumPy and CuPy (``xp``)."""
from __future__ import annotations

from typing import Any

__all__ = ["gini", "gini_from_sums"]


def gini_from_sums(xp: Any, n: Any, total: Any, weighted_rank: Any) -> Any:
    """Gini index of (segments of) non-negative values from their sums.

    ``n``: count, ``total``: Σx, ``weighted_rank``: Σ rank·x with the values sorted ascending and
    ranked 1..n (arrays, one entry per segment). 0 when every value is equal (or all are 0),
    NaN for an empty segment: ``2·Σ rank·x / (n·Σx) − (n+1)/n``.
    """
    nf = xp.where(n == 0, 1, n).astype(xp.float64)
    value = xp.where(total == 0, 0.0, 2.0 * weighted_rank / (nf * xp.where(total == 0, 1, total))
                     - (nf + 1.0) / nf)
    return xp.where(n == 0, xp.nan, value)


def gini(xp: Any, values: Any) -> float:
    """Gini index of one sequence of non-negative values (0 for an empty or all-zero one)."""
    n = len(values)
    if n == 0:
        return 0.0
    x = xp.sort(values).astype(xp.float64)
    ranks = xp.arange(1, n + 1, dtype=xp.float64)
    g = gini_from_sums(xp, xp.asarray([n]), xp.asarray([float(x.sum())]), xp.asarray([float((ranks * x).sum())]))
    return float(g[0])
