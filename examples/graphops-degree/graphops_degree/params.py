"""Parameters of ``degree``."""
from __future__ import annotations

from graphops.plugin import Params


class DegreeParams(Params):
    """``degree`` of each vertex: the number of entries in its CSR row (its neighbours, a repeated
    edge counted each time, a self-loop once), or with ``weighted=True`` their weight sum."""

    weighted: bool = False

    def check_declared(self, graph, **_):
        if self.weighted and graph.weighted is False:
            raise ValueError("weighted=True but the graph has no weights; read it with weight: <column>")
