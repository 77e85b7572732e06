"""graphops as a networkx backend (networkx's backend protocol, as nx-cugraph follows it).

Unchanged networkx code runs on graphops with ``backend="graphops"`` (or with "graphops" in
``nx.config.backend_priority``)::

    nx.jaccard_coefficient(G, [(0, 1), (2, 3)], backend="graphops")

Registered through the entry-point groups ``networkx.backends`` (:data:`backend_interface`)
and ``networkx.backend_info`` (:func:`backend_info`). networkx converts a graph once with
:meth:`BackendInterface.convert_from_nx` and caches the conversion on the graph
(``nx.config.cache_converted_graphs``). Functions offered, with networkx's exact semantics:
``jaccard_coefficient`` (graphs without self-loops: networkx removes u and v from the common
neighbours, graphops' Jaccard does not, so a graph with self-loops runs in networkx).
``graphops.networkx_backend`` options: ``backend`` (graphops backend for the work, default
``auto``).
"""
from __future__ import annotations

from typing import Any

__all__ = ["BackendInterface", "backend_interface", "backend_info", "GraphopsNxGraph"]

NAME = "graphops"
FUNCTIONS = {
    "jaccard_coefficient": "Computed by graphops' `jaccard` algorithm (cpu, gpu or hybrid backend) for all "
                           "pairs at once; graphs with self-loops run in networkx (the semantics differ there).",
}


class GraphopsNxGraph:
    """A networkx graph converted for graphops: the graphops :class:`~graphops.Graph` and the
    networkx graph it came from (for :meth:`BackendInterface.convert_to_nx`)."""

    __networkx_backend__ = NAME

    def __init__(self, nx_graph: Any, graph: Any):
        self.nx_graph = nx_graph
        self.graph = graph
        self.__networkx_cache__: dict = {}

    def is_directed(self) -> bool:
        return self.nx_graph.is_directed()

    def is_multigraph(self) -> bool:
        return self.nx_graph.is_multigraph()

    def __contains__(self, node: Any) -> bool:
        return node in self.nx_graph

    def __len__(self) -> int:
        return len(self.nx_graph)


def _ids_supported(G: Any) -> bool:
    kinds = {type(n) for n in G}
    return kinds <= {int} or kinds <= {str}


class BackendInterface:
    """The object networkx loads for ``backend="graphops"``."""

    @staticmethod
    def convert_from_nx(graph: Any, *, edge_attrs: Any = None, node_attrs: Any = None, preserve_edge_attrs: Any = False,
                        preserve_node_attrs: Any = False, preserve_graph_attrs: Any = False,
                        preserve_all_attrs: Any = False, name: str | None = None,
                        graph_name: str | None = None) -> Any:
        import graphops as go

        if graph.is_multigraph() or not _ids_supported(graph):
            return graph  # nothing graphops offers takes it; can_run says so
        return GraphopsNxGraph(graph, go.Graph.from_networkx(graph))

    @staticmethod
    def convert_to_nx(obj: Any, *, name: str | None = None) -> Any:
        return obj.nx_graph if isinstance(obj, GraphopsNxGraph) else obj

    @staticmethod
    def can_run(name: str, args: tuple, kwargs: dict) -> bool | str:
        if name not in FUNCTIONS:
            return f"graphops does not offer {name}"
        G = args[0] if args else kwargs.get("G")
        G = G.nx_graph if isinstance(G, GraphopsNxGraph) else G
        if G is None or G.is_directed() or G.is_multigraph():
            return "graphops' jaccard_coefficient takes undirected simple graphs"
        if not _ids_supported(G):
            return "node ids must be all integers or all strings"
        if any(True for _ in _self_loops(G)):
            return "the graph has self-loops, where graphops' Jaccard semantics differ from networkx's"
        return True

    @staticmethod
    def should_run(name: str, args: tuple, kwargs: dict) -> bool | str:
        return True

    @staticmethod
    def jaccard_coefficient(G: Any, ebunch: Any = None) -> Any:
        return _jaccard(G, ebunch)


def _self_loops(G: Any) -> Any:
    return (n for n, nbrs in G.adj.items() if n in nbrs)


def _jaccard(G: Any, ebunch: Any) -> Any:
    import networkx as nx
    import pandas as pd

    import graphops as go

    graph = G.graph if isinstance(G, GraphopsNxGraph) else go.Graph.from_networkx(G)
    nxg = G.nx_graph if isinstance(G, GraphopsNxGraph) else G
    pairs = list(nx.non_edges(nxg)) if ebunch is None else list(ebunch)
    for u, v in pairs:
        for node in (u, v):
            if node not in nxg:
                raise nx.NodeNotFound(f"Node {node} not in G.")

    def results() -> Any:
        if not pairs:
            return
        frame = pd.DataFrame({"first": [u for u, _ in pairs], "second": [v for _, v in pairs]})
        config = getattr(nx.config.backends, NAME, None)
        backend = getattr(config, "backend", "auto") if config is not None else "auto"
        out = go.run("jaccard", graph, pairs=frame, backend=backend)
        for (u, v), p in zip(pairs, out["jaccard_coeff"].to_numpy().tolist()):
            yield u, v, float(p)

    return results()


backend_interface = BackendInterface()


def backend_info() -> dict[str, Any]:
    """What networkx shows about this backend (its docs and ``nx.config.backends.graphops``)."""
    return {
        "backend_name": NAME,
        "project": "graphops",
        "package": "graphops",
        "short_summary": "GPU (CuPy) and CPU (Numba) graph analytics",
        "functions": {name: {"additional_docs": doc} for name, doc in FUNCTIONS.items()},
        "default_config": {"backend": "auto"},
    }
