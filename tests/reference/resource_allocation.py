"""Slow, obvious resource allocation reference: the family's definitions on Python sets (tests.reference.similarity)."""
from __future__ import annotations

from tests.reference.similarity import score


def resource_allocation(nbrs: dict, u, v, weighted: bool = False) -> float:
    """resource allocation of (u, v) on set neighbourhoods (tests.reference.jaccard.neighbourhoods)."""
    return score(nbrs, "resource_allocation", u, v, weighted)
