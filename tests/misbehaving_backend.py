"""Backends and a reader that break the contract in the ways a plugin may, for tests of what
graphops checks and says (a module of its own: backends are imported by name)."""
from __future__ import annotations

import numpy as np
from numba import njit

from graphops.errors import InputError


def mutate(csr, params):
    csr.indices[:] = 0
    csr.indptr[:] = 0
    return {"n": np.zeros(1)}


@njit
def _zero(indices):
    for i in range(indices.shape[0]):
        indices[i] = 0


def mutate_in_numba(csr, params):
    _zero(csr.indices)
    return {"n": np.zeros(1)}


def copy_then_change(csr, params):
    indices = csr.indices.copy()
    _zero(indices)
    return {"n": np.array([indices.sum()])}


def sneaky(csr, params):
    """Writes as a GPU backend could (CuPy arrays have no read-only flag)."""
    indices = csr.indices
    indices.flags.writeable = True
    indices[:] = 0
    return {"n": np.zeros(1)}


def objects(csr, params):
    return np.array(["a", None], dtype=object)


def key_error(csr, params):
    return {}["x"]


def value_error(csr, params):
    raise ValueError("a plugin's own check failed")


def input_error(csr, params):
    raise InputError("the graph has no weights; build it with weight=")


def read_42(path, device, options):
    return 42
