"""Slow, obvious Jaccard reference: Python sets and dicts, straight from the definition."""
from __future__ import annotations

from typing import Iterable


def neighbourhoods(src: Iterable[int], dst: Iterable[int], weights: Iterable[float] | None = None):
    """Undirected set neighbourhoods; a repeated edge keeps its first weight; self-loops stored."""
    nbrs: dict[int, dict[int, float]] = {}
    ws = [1.0] * len(list(src)) if weights is None else list(weights)
    for (u, v), w in zip(zip(src, dst), ws):
        for a, b in ((u, v), (v, u)):
            nbrs.setdefault(a, {})
            nbrs[a].setdefault(b, float(w))
    return nbrs


def jaccard(nbrs: dict, u: int, v: int, weighted: bool = False) -> float:
    """J(u, v) = |N(u) ∩ N(v)| / |N(u) ∪ N(v)|, weighted: Σ∩ min / (Σ∩ max + the rest)."""
    a, b = nbrs.get(u, {}), nbrs.get(v, {})
    shared = set(a) & set(b)
    if not weighted:
        union = len(set(a) | set(b))
        return 0.0 if union == 0 else len(shared) / union
    num = sum(min(a[x], b[x]) for x in shared)
    den = (sum(max(a[x], b[x]) for x in shared) + sum(w for x, w in a.items() if x not in shared)
           + sum(w for x, w in b.items() if x not in shared))
    return 0.0 if den == 0 else num / den


def edge_pairs(src: Iterable[int], dst: Iterable[int]) -> list[tuple[int, int]]:
    """Each distinct undirected edge once, first occurrence, in order."""
    seen, out = set(), []
    for u, v in zip(src, dst):
        key = (min(u, v), max(u, v))
        if key not in seen:
            seen.add(key)
            out.append((u, v))
    return out
