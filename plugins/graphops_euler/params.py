"""Parameters of ``euler``, the checks that run before any work, and its work count."""
from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field, field_validator

from graphops.plugin import GeneratorParams, Params, Seed

from .common import check_degrees

OUTPUTS = ("step", "src", "dst", "edge_id")

MERGE_FROM = 1 << 18  # edges from which method=auto merges cycles on the CPU


class EulerParams(Params):
    """An Euler circuit or path: every edge exactly once, in walking order.

    * ``kind``: ``circuit`` (closed; every vertex balanced: in == out, or even degree when
      undirected), ``path`` (exactly one start/end pair: out − in = 1 at the start and
      in − out = 1 at the end, or two odd vertices), or ``auto`` (a circuit when the graph has
      one, else a path).
    * ``source``: the vertex to start from (an original id). A circuit may start anywhere
      with edges (default: the tail of the first edge); a path must start at its start
      vertex (undirected: at either odd vertex; default: the one that comes first).
    * Multi-edges and self-loops are each used once; ``edge_id`` is the row of the edge in
      the graph's edge frame, and ``src``/``dst`` the direction it is walked in (for an
      undirected edge, possibly the reverse of its row).
    * The graph is checked before any work: ``graphops.NotEulerianError`` says how
      many vertices are unbalanced (or odd), the first few of them, or how many components
      carry edges. A graph without edges gives an empty tour.
    * ``method`` (CPU backend): ``hierholzer`` (one walk: least memory, but every step waits for
      memory on large graphs), ``merge`` (the GPU's cycle merging with interleaved walks: 2-3x
      faster on large graphs), ``auto`` (merge from 2**18 edges). The GPU backend ignores it.
    """

    kind: Literal["circuit", "path", "auto"] = "circuit"
    source: Any = None
    method: Literal["auto", "hierholzer", "merge"] = "auto"

    @field_validator("source")
    @classmethod
    def _vertex_id(cls, v: Any) -> Any:
        if v is None or isinstance(v, str):
            return v
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"source must be a vertex id (an integer or a string); got {v!r} "
                             f"({type(v).__name__})")
        return int(v)

    def check_inputs(self, graph: Any) -> None:
        check_degrees(graph, self)  # degrees only: connectivity is the chosen backend's to find


def cost(inputs: dict[str, Any], params: EulerParams) -> dict[str, Any]:
    """Least bytes: the edge list read once (two int32 ids per edge) and the tour written
    (three int64 per step)."""
    m = inputs["graph"].n_edges
    return {"bytes": 8.0 * m + 24.0 * m, "flops": 0.0, "counts": {"edges": m}}


class RandomCycles(GeneratorParams):
    """A union of connected random closed walks, Eulerian (:func:`graphops_euler.io.random_cycles`)."""

    n: int = Field(ge=1, le=2 ** 40)
    cycles: int = Field(ge=1, le=2 ** 31)
    length: int = Field(ge=1, le=2 ** 31)
    directed: bool = True
    seed: Seed = 42

    def needs(self) -> tuple[float, str]:
        return self.cycles * self.length * 48.0 + self.n * 16.0, "cycles, length or n"


class Symmetric(GeneratorParams):
    """Every edge of another graph of the file both ways (:func:`graphops_euler.io.symmetric`)."""

    of: str = Field(min_length=1)
    directed: Literal[True] = True


class DeBruijn(GeneratorParams):
    """The de Bruijn graph of a string's k-mers (:func:`graphops_euler.io.de_bruijn`)."""

    sequence: str | None = Field(None, min_length=2)
    k: int = Field(21, ge=2, le=2 ** 31)
    length: int = Field(1000, ge=2, le=2 ** 31)
    seed: Seed = 42
    shuffle: bool = True
    directed: Literal[True] = True

    def needs(self) -> tuple[float, str]:
        n = len(self.sequence) if self.sequence is not None else self.length
        return max(n - self.k + 1, 0) * (3.0 * self.k + 200), "length or k"  # three strings a k-mer
