"""Slow, obvious Adamic–Adar reference: the family's definitions on Python sets (tests.reference.similarity)."""
from __future__ import annotations

from tests.reference.similarity import score


def adamic_adar(nbrs: dict, u, v, weighted: bool = False) -> float:
    """Adamic–Adar of (u, v) on set neighbourhoods (tests.reference.jaccard.neighbourhoods)."""
    return score(nbrs, "adamic_adar", u, v, weighted)
