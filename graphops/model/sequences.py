"""Sequence features: a variable-length sequence of numbers per node or edge (e.g. the ring sizes
of each atom), held as one padded float64 array: row ``i`` is the length, then the values, zeros
after them. :class:`~graphops.model.graphset.GraphSet` keeps them so; frames show them as tuples."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from graphops.errors import InputError

__all__ = ["is_sequence", "sequence_array", "sequences_of"]


def is_sequence(v: Any) -> bool:
    return isinstance(v, (list, tuple, np.ndarray)) and getattr(v, "ndim", 1) == 1


def sequence_array(values: Sequence[Any], name: str = "feature", what: str = "node") -> np.ndarray:
    """Variable-length sequences of numbers as one padded float64 array: row ``i`` holds
    ``len(values[i])`` and then the values, zeros after them (a sequence feature's form)."""
    rows = []
    for i, v in enumerate(values):
        if not is_sequence(v):
            raise InputError(f"{what} feature {name!r} mixes sequences and single values ({what} {i}: {v!r}); "
                             f"give every {what} a sequence (a tuple or list, maybe empty)")
        try:
            row = np.asarray(v, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise InputError(f"{what} feature {name!r}: {what} {i} holds {v!r}; a sequence feature holds numbers"
                             ) from None
        if not np.isfinite(row).all():
            raise InputError(f"{what} feature {name!r}: {what} {i} holds {v!r}; values must be finite numbers")
        rows.append(row)
    width = 1 + max((len(r) for r in rows), default=0)
    out = np.zeros((len(rows), width))
    for i, r in enumerate(rows):
        out[i, 0] = len(r)
        out[i, 1:1 + len(r)] = r
    return out


def sequences_of(padded: Any) -> list[tuple]:
    """The sequences of a padded sequence feature, one tuple per row (integers where whole)."""
    host = np.asarray(padded.get() if hasattr(padded, "get") else padded)
    out = []
    for row in host:
        vals = row[1:1 + int(row[0])]
        out.append(tuple(int(v) if float(v).is_integer() else float(v) for v in vals))
    return out
