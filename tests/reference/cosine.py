"""Slow, obvious cosine (Salton) reference: the family's definitions on Python sets (tests.reference.similarity)."""
from __future__ import annotations

from tests.reference.similarity import score


def cosine(nbrs: dict, u, v, weighted: bool = False) -> float:
    """cosine (Salton) of (u, v) on set neighbourhoods (tests.reference.jaccard.neighbourhoods)."""
    return score(nbrs, "cosine", u, v, weighted)
