"""Slow, obvious references for the similarity family: Python sets and dicts, from the definitions."""
from __future__ import annotations

import math

from tests.reference.jaccard import jaccard


def score(nbrs: dict, measure: str, u, v, weighted: bool = False) -> float:
    """The measure of (u, v) on set neighbourhoods (``tests.reference.jaccard.neighbourhoods``)."""
    a, b = nbrs.get(u, {}), nbrs.get(v, {})
    shared = set(a) & set(b)
    if measure == "jaccard":
        return jaccard(nbrs, u, v, weighted)
    if measure in ("adamic_adar", "resource_allocation"):  # networkx: u, v excluded; a self-loop counts twice
        total = 0.0
        for w in shared - {u, v}:
            d = len(nbrs[w]) + (1 if w in nbrs[w] else 0)
            if measure == "resource_allocation":
                total += 1 / d
            elif d > 1:  # d = 1 only in a pair (u, u): networkx divides by log 1 = 0 there (graphops adds 0)
                total += 1 / math.log(d)
        return total
    if not weighted:
        c, du, dv = len(shared), len(a), len(b)
        den = {"sorensen": (du + dv) / 2, "overlap": min(du, dv), "cosine": math.sqrt(du * dv)}[measure]
        return 0.0 if den == 0 else c / den
    if measure == "cosine":
        num = sum(a[x] * b[x] for x in shared)
        den = math.sqrt(sum(w * w for w in a.values())) * math.sqrt(sum(w * w for w in b.values()))
        return 0.0 if den == 0 else num / den
    num = sum(min(a[x], b[x]) for x in shared)
    wa, wb = sum(a.values()), sum(b.values())
    den = (wa + wb) / 2 if measure == "sorensen" else min(wa, wb)
    return 0.0 if den == 0 else num / den


def two_hop(nbrs: dict, aux: bool = False) -> set:
    """Ordered pairs (u, v), u != v, with a common neighbour (for networkx's indices, one other than u and v)."""
    out = set()
    for w, around in nbrs.items():
        for u in around:
            for v in around:
                if u != v and not (aux and w in (u, v)):
                    out.add((u, v))
    return out
