"""Slow, obvious Sørensen–Dice reference: the family's definitions on Python sets (tests.reference.similarity)."""
from __future__ import annotations

from tests.reference.similarity import score


def sorensen(nbrs: dict, u, v, weighted: bool = False) -> float:
    """Sørensen–Dice of (u, v) on set neighbourhoods (tests.reference.jaccard.neighbourhoods)."""
    return score(nbrs, "sorensen", u, v, weighted)
