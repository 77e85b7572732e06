"""Parameters of graphops' own generators (``rmat``, ``gnm``, ``grid2d``, ``gnp_set``): pydantic
models, light to import, so a pipeline file's ``generate:`` sources are checked without Numba.
The functions are in :mod:`graphops.io.generate`; plugins register more generators by the
``graphops_register_generators`` hook (euler's cycles, appclass's patterns)."""
from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationError, model_validator

from graphops.host.algorithm import Params
from graphops.host.numbers import Seed
from graphops.host.validation import params_error

__all__ = ["GeneratorParams", "RMat", "Gnm", "Grid2D", "GnpSet", "gnm_capacity"]


FEATURES = 10_000  # feature columns a generator makes at most
GNP_NODES = 10_000  # nodes of one G(n, p) graph at most (each is drawn as a dense matrix)


class GeneratorParams(Params):
    """Base of every generator's parameter model: a :class:`~graphops.host.algorithm.Params`
    (unknown keys are errors, instances frozen, ``true``/``false`` refused for numbers)."""

    @classmethod
    def check(cls, generator: str, **values: Any) -> Any:
        """A Python call's arguments checked as a pipeline file's ``generate:`` source is: the
        same bounds either way, and an ``InputError`` naming every bad one."""
        try:
            return cls(**values)
        except ValidationError as exc:
            raise params_error(generator, exc, cls) from None


class RMat(GeneratorParams):
    """An R-MAT graph (:func:`graphops.generate.rmat`)."""

    scale: int = Field(ge=1, le=32)
    edge_factor: int = Field(16, ge=1, le=2 ** 20)
    a: float = Field(0.57, ge=0, le=1)
    b: float = Field(0.19, ge=0, le=1)
    c: float = Field(0.19, ge=0, le=1)
    seed: Seed = 42
    scramble: bool = True
    directed: bool = False
    node_features: int = Field(0, ge=0, le=FEATURES)
    edge_features: int = Field(0, ge=0, le=FEATURES)

    @model_validator(mode="after")
    def _probabilities(self) -> "RMat":
        if self.a + self.b + self.c > 1:
            raise ValueError(f"a + b + c must be at most 1 (d = 1 - a - b - c is the fourth quadrant's "
                             f"probability); got {self.a} + {self.b} + {self.c} = {self.a + self.b + self.c:g}")
        return self


def gnm_capacity(n: int, directed: bool) -> int:
    """How many edges (arcs when directed) a simple graph on ``n`` vertices holds."""
    return max(n, 0) * max(n - 1, 0) // (1 if directed else 2)


class Gnm(GeneratorParams):
    """A uniform random simple graph: ``m`` edges among ``n`` vertices, no self-loops, no repeated
    edges, with features (:func:`graphops.generate.gnm`)."""

    n: int = Field(ge=1, le=2 ** 31)
    m: int = Field(ge=0, le=2 ** 62)  # and at most the edges a simple graph on n vertices holds
    directed: bool = True
    seed: Seed = 42
    node_features: int = Field(0, ge=0, le=FEATURES)
    edge_features: int = Field(0, ge=0, le=FEATURES)

    @model_validator(mode="after")
    def _fits(self) -> "Gnm":
        most = gnm_capacity(self.n, self.directed)
        if self.m > most:
            raise ValueError(f"m={self.m} is more than the {most:,} {'arcs' if self.directed else 'edges'} a simple "
                             f"{'directed' if self.directed else 'undirected'} graph on n={self.n} vertices holds; "
                             f"lower m or raise n")
        return self


class Grid2D(GeneratorParams):
    """A 4-neighbour grid (:func:`graphops.generate.grid2d`)."""

    rows: int = Field(ge=1, le=2 ** 31)
    cols: int = Field(ge=1, le=2 ** 31)

    @model_validator(mode="after")
    def _size(self) -> "Grid2D":
        if self.rows * self.cols > 2 ** 40:
            raise ValueError(f"rows x cols must be at most 2**40 vertices; got {self.rows} x {self.cols}")
        return self


class GnpSet(GeneratorParams):
    """A GraphSet of G(n, p) graphs with labels and attributes (:func:`graphops.generate.gnp_set`)."""

    sizes: dict[int, int] = Field(min_length=1)  # nodes per graph -> number of such graphs
    p: float = Field(0.5, ge=0, le=1)
    n_labels: int = Field(4, ge=1, le=2 ** 31)
    n_attrs: int = Field(2, ge=0, le=FEATURES)
    seed: Seed = 42

    @model_validator(mode="after")
    def _sizes(self) -> "GnpSet":
        bad = {n: k for n, k in self.sizes.items() if not (1 <= n <= GNP_NODES and 0 <= k <= 2 ** 31)}
        if bad or not sum(self.sizes.values()):
            raise ValueError(f"sizes maps node counts (1..{GNP_NODES:,}: each graph is drawn as a dense matrix) to "
                             f"graph counts (0 or more, at least one graph in all); got {self.sizes!r}")
        return self
