"""A backend returning the columns its parameters describe, for tests of the checks on results
(a module of its own: backends are imported by name, and test modules must not be imported twice)."""
from __future__ import annotations

import numpy as np

import graphops as go


class ShapedParams(go.Params):
    """What :func:`shaped` returns: a vertex column of these values and dtype, and a degree column
    of this length (NaN among the values too)."""

    model_config = go.Params.model_config | {"allow_inf_nan": True}
    vertex: list[float]
    dtype: str
    degree_len: int


def shaped(csr, params):
    return {"vertex": np.array(params.vertex).astype(params.dtype), "degree": np.zeros(params.degree_len)}
