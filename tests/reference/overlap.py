"""Slow, obvious overlap reference: the family's definitions on Python sets (tests.reference.similarity)."""
from __future__ import annotations

from tests.reference.similarity import score


def overlap(nbrs: dict, u, v, weighted: bool = False) -> float:
    """overlap of (u, v) on set neighbourhoods (tests.reference.jaccard.neighbourhoods)."""
    return score(nbrs, "overlap", u, v, weighted)
