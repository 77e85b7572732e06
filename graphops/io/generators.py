"""Parameters of graphops' own generators (``rmat``, ``gnm``, ``grid2d``, ``gnp_set``): pydantic
models, light to import, so a pipeline file's ``generate:`` sources are checked without Numba.
The functions are in :mod:`graphops.io.generate`; plugins register more generators by the
``graphops_register_generators`` hook (euler's cycles, appclass's patterns)."""
from __future__ import annotations

from pydantic import Field

from graphops.host.algorithm import Params
from graphops.host.numbers import Seed

__all__ = ["GeneratorParams", "RMat", "Gnm", "Grid2D", "GnpSet"]


class GeneratorParams(Params):
    """Base of every generator's parameter model: a :class:`~graphops.host.algorithm.Params`
    (unknown keys are errors, instances frozen, ``true``/``false`` refused for numbers)."""


class RMat(GeneratorParams):
    """An R-MAT graph (:func:`graphops.generate.rmat`)."""

    scale: int = Field(ge=1, le=32)
    edge_factor: int = Field(16, ge=1)
    a: float = Field(0.57, ge=0, le=1)
    b: float = Field(0.19, ge=0, le=1)
    c: float = Field(0.19, ge=0, le=1)
    seed: Seed = 42
    scramble: bool = True
    directed: bool = False
    node_features: int = Field(0, ge=0)
    edge_features: int = Field(0, ge=0)


class Gnm(GeneratorParams):
    """``m`` uniform random edges among ``n`` vertices, with features (:func:`graphops.generate.gnm`)."""

    n: int = Field(ge=1)
    m: int = Field(ge=0)
    directed: bool = True
    seed: Seed = 42
    node_features: int = Field(0, ge=0)
    edge_features: int = Field(0, ge=0)


class Grid2D(GeneratorParams):
    """A 4-neighbour grid (:func:`graphops.generate.grid2d`)."""

    rows: int = Field(ge=1)
    cols: int = Field(ge=1)


class GnpSet(GeneratorParams):
    """A GraphSet of G(n, p) graphs with labels and attributes (:func:`graphops.generate.gnp_set`)."""

    sizes: dict[int, int] = Field(min_length=1)  # nodes per graph -> number of such graphs
    p: float = Field(0.5, ge=0, le=1)
    n_labels: int = Field(4, ge=1)
    n_attrs: int = Field(2, ge=0)
    seed: Seed = 42
