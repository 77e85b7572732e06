"""Parameters of graphops' own generators (``rmat``, ``gnm``, ``grid2d``, ``gnp_set``): pydantic
models, light to import, so a pipeline file's ``generate:`` sources are checked without Numba.
The functions are in :mod:`graphops.io.generate`; plugins register more generators by the
``graphops_register_generators`` hook (euler's cycles, appclass's patterns)."""
from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from graphops.base.device import host_memory
from graphops.host.algorithm import Params
from graphops.host.numbers import Seed
from graphops.host.validation import validated

__all__ = ["GeneratorParams", "RMat", "Gnm", "Grid2D", "GnpSet", "gnm_capacity"]


FEATURES = 10_000  # feature columns a generator makes at most
GNP_NODES = 10_000  # nodes of one G(n, p) graph at most (each is drawn as a dense matrix)


class GeneratorParams(Params):
    """Base of every generator's parameter model: a :class:`~graphops.host.algorithm.Params`
    (unknown keys are errors, instances frozen, ``true``/``false`` refused for numbers)."""

    @classmethod
    def check(cls, generator: str, **values: Any) -> Any:
        """A Python call's arguments checked as a pipeline file's ``generate:`` source is: the
        same bounds either way, and an ``InputError`` naming every bad one. Use the returned model's
        values, not the arguments (``directed="false"`` is read as the model reads it)."""
        return validated(generator, cls, values)

    def needs(self) -> tuple[float, str]:
        """Bytes of memory generating this takes at its peak, about, and the parameters that set it
        (override in a generator whose size its parameters decide)."""
        return 0.0, ""

    @model_validator(mode="after")
    def _fits_in_memory(self) -> "GeneratorParams":
        need, knobs = self.needs()
        if need > host_memory():
            raise ValueError(f"this graph needs about {_gib(need)} of memory to generate; this machine has "
                             f"{_gib(host_memory())}: lower {knobs}")
        return self


def _gib(nbytes: float) -> str:
    return f"{nbytes / 2 ** 40:,.1f} TiB" if nbytes >= 2 ** 40 else f"{nbytes / 2 ** 30:,.1f} GiB"


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

    def needs(self) -> tuple[float, str]:
        samples = self.edge_factor * 2.0 ** self.scale  # two int64 ids, their permutation and sort
        return samples * (40 + 8 * self.edge_features) + 2.0 ** self.scale * 8 * (1 + self.node_features), \
            "scale or edge_factor"

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

    def needs(self) -> tuple[float, str]:
        return self.m * (64.0 + 8 * self.edge_features) + self.n * 8.0 * (2 + self.node_features), "n or m"

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

    def needs(self) -> tuple[float, str]:
        return self.rows * self.cols * 96.0, "rows or cols"  # about two edges a vertex, built into a graph

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

    def needs(self) -> tuple[float, str]:
        largest = max(self.sizes, default=0)  # each graph drawn as a dense matrix of floats
        kept = sum(k * n * (8.0 * (1 + self.n_attrs) + 8 * self.p * n) for n, k in self.sizes.items())
        return 9.0 * largest ** 2 + kept, "the sizes, p or n_attrs"

    @model_validator(mode="after")
    def _sizes(self) -> "GnpSet":
        bad = {n: k for n, k in self.sizes.items() if not (1 <= n <= GNP_NODES and 0 <= k <= 2 ** 31)}
        if bad or not sum(self.sizes.values()):
            raise ValueError(f"sizes maps node counts (1..{GNP_NODES:,}: each graph is drawn as a dense matrix) to "
                             f"graph counts (0 or more, at least one graph in all); got {self.sizes!r}")
        return self
