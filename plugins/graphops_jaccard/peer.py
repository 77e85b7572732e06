"""Peers of ``jaccard`` for side-by-side comparison: cuGraph's own and networkx's."""
from __future__ import annotations

from typing import Any

import numpy as np

from graphops.plugin import Device, Graph, InputError, PairIndex, to_device, when_closing

from .common import MEASURES, adjacency, require_default_pairs
from .params import SimilarityParams


def _half_edges(graph: Graph, device: Device) -> tuple[Any, Any, Any]:
    """Each distinct undirected edge once (u ≤ v) of the set adjacency, with its weight."""
    adj = adjacency(graph.csr(device), True, graph.weighted)
    xp = device.xp
    rows = xp.repeat(xp.arange(adj.n_vertices, dtype=xp.int64), adj.degrees())
    cols = adj.indices.astype(xp.int64)
    half = rows <= cols
    return rows[half], cols[half], None if adj.weights is None else adj.weights[half]


def to_cugraph(graph: Graph) -> Any:
    """A ``cugraph.Graph`` of the set adjacency (internal ids); built once, outside timings."""
    import cudf
    import cugraph

    src, dst, w = _half_edges(graph, Device.GPU)
    df = cudf.DataFrame({"src": src, "dst": dst})
    if w is not None:
        df["weight"] = w
    G = cugraph.Graph(directed=False)
    G.from_cudf_edgelist(df, source="src", destination="dst",
                         edge_attr="weight" if w is not None else None)
    return G


def run_cugraph(G: Any, pairs: PairIndex, params: SimilarityParams) -> dict[str, Any]:
    """cuGraph's function of the measure (``jaccard``, ``sorensen``, ``overlap``, ``cosine``): with the
    pairs as ``vertex_pair`` (results come in that order); two-hop pairs: the function without
    ``vertex_pair`` (its self pairs (u, u) dropped), top_k: ``all_pairs_<measure>(vertices, topk)``.
    cuGraph's cosine normalizes over the shared neighbours only (see ``CosineParams``): its values
    differ from graphops' by design, and the peer serves timing."""
    import cudf
    import cugraph

    measure = MEASURES[params.measure]
    column = f"{params.measure}_coeff"
    if params.candidates == "two_hop" or params.top_k is not None:
        vertices = None if params._vertex_index is None else cudf.Series(to_device(params._vertex_index, Device.GPU))
        if params.top_k is not None:
            fn = getattr(cugraph, f"all_pairs_{params.measure}", None)
            if fn is None:
                raise InputError(f"this cuGraph has no all_pairs_{params.measure} (cuGraph 24.04 and later): "
                                 "drop top_k or use backend gpu")
            res = fn(G, vertices=vertices, topk=params.top_k, use_weight=params.use_weight)
        else:
            res = getattr(cugraph, params.measure)(G, use_weight=params.use_weight)
            if vertices is not None:
                res = res[res["first"].isin(vertices)]
        res = res[res["first"] != res["second"]]
        return {"first": res["first"].values.astype("int64"), "second": res["second"].values.astype("int64"),
                measure.column: res[column].values.astype("float64")}
    if "cugraph_pairs" not in pairs.extra:  # built once per pair list, outside later timings
        pairs.extra["cugraph_pairs"] = cudf.DataFrame({"first": to_device(pairs.first, Device.GPU),
                                                       "second": to_device(pairs.second, Device.GPU)})
    res = getattr(cugraph, params.measure)(G, vertex_pair=pairs.extra["cugraph_pairs"], use_weight=params.use_weight)
    # cuGraph returns the pairs in vertex_pair's order.
    return {"first": pairs.first, "second": pairs.second, measure.column: res[column].values.astype("float64")}


def to_networkx(graph: Graph) -> Any:
    """A networkx ``Graph`` of the set adjacency (internal ids); built once, outside timings."""
    import networkx as nx

    src, dst, _ = _half_edges(graph, Device.CPU)
    G = nx.Graph(graphops_adjacency=adjacency(graph.csr(Device.CPU), True, False))
    G.add_nodes_from(range(graph.n_vertices))
    G.add_edges_from(zip(src.tolist(), dst.tolist()))
    return G


_NETWORKX = {"jaccard": "jaccard_coefficient", "adamic_adar": "adamic_adar_index",
             "resource_allocation": "resource_allocation_index"}


def run_networkx(G: Any, pairs: PairIndex, params: SimilarityParams) -> dict[str, Any]:
    """networkx's function of the measure (``jaccard_coefficient``, ``adamic_adar_index``,
    ``resource_allocation_index``) on the pairs, or on the two-hop pairs (listed once per graph by
    graphops' CPU engine, outside later timings: networkx has no such listing). networkx drops u and
    v from the shared neighbours (not from the union), so its Jaccard differs from cuGraph's where
    self-loops exist."""
    import networkx as nx

    measure = MEASURES[params.measure]
    if params.use_weight:
        raise InputError(f"the networkx peer has no weighted {params.measure}; use backend cpu, gpu or cugraph")
    if params.top_k is not None:
        raise InputError("the networkx peer scores pairs, it keeps no top k: drop top_k or use backend cpu or gpu")
    if params.candidates == "two_hop":
        key = ("two_hop", params.measure, None if params.vertices is None else tuple(params.vertices))
        if key not in G.graph:
            first, second = _two_hop_pairs(G, params)
            G.graph[key] = (first, second, list(zip(first.tolist(), second.tolist())))
        first, second, listed = G.graph[key]
    else:
        first, second = pairs.first, pairs.second
        listed = list(zip(first.tolist(), second.tolist()))
    fn = getattr(nx, _NETWORKX[params.measure])
    score = np.fromiter((x for _, _, x in fn(G, listed)), dtype=np.float64, count=len(listed))
    return {"first": first, "second": second, measure.column: score}


def _two_hop_pairs(G: Any, params: SimilarityParams) -> tuple[Any, Any]:
    """The two-hop pairs graphops scores for the measure (its CPU engine on the set adjacency)."""
    from . import cpu, measures

    adj, measure = G.graph["graphops_adjacency"], MEASURES[params.measure]
    first, second, _ = measures.two_hop(adj, measure, measures.tables(adj, measure, cpu.row_sums), params._vertex_index)
    return first, second


def to_cugraph_dask(graph: Graph, client: Any) -> Any:
    """A multi-GPU ``cugraph.Graph`` of the set adjacency (internal ids), its edges cut into one
    partition per worker and scattered to them; built once per graph and client, outside timings.
    Starts cuGraph's communicator on the client's workers the first time."""
    from cugraph.dask.comms import comms
    import cugraph

    if not comms.is_initialized():
        comms.initialize(p2p=True)
        when_closing(client, comms.destroy)  # while the workers still answer
    import cudf

    src, dst, w = _half_edges(graph, Device.GPU)
    frame = cudf.DataFrame({"src": src, "dst": dst})
    if w is not None:
        frame["weight"] = w
    G = cugraph.Graph(directed=False)
    G.from_dask_cudf_edgelist(_scattered(client, frame), source="src", destination="dst",
                              edge_attr="weight" if w is not None else None)
    return G


def _scattered(client: Any, frame: Any) -> Any:
    """``frame`` as a dask-cuDF frame of one partition per worker, already on the workers (not
    embedded in a task graph, which Dask warns about and slows down at hundreds of MiB)."""
    import dask.dataframe as dd

    parts = max(len(client.scheduler_info()["workers"]), 1)
    bounds = [len(frame) * j // parts for j in range(parts + 1)]
    futures = client.scatter([frame.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:])])
    return dd.from_delayed(futures, meta=frame.iloc[:0], verify_meta=False)


def run_cugraph_dask(client: Any, G: Any, pairs: PairIndex, params: SimilarityParams) -> dict[str, Any]:
    """``cugraph.dask.jaccard`` on the cluster, the pairs scattered as ``vertex_pair``; the result
    comes back in cuGraph's own order (the same pairs)."""
    require_default_pairs(params, "cugraph_dask")
    import cudf
    import cugraph.dask as dcg

    key = ("cugraph_dask_pairs", id(client))
    if key not in pairs.extra:  # scattered once per pair list and client, outside later timings
        pairs.extra[key] = _scattered(client, cudf.DataFrame({"first": to_device(pairs.first, Device.GPU),
                                                              "second": to_device(pairs.second, Device.GPU)}))
    res = dcg.jaccard(G, vertex_pair=pairs.extra[key], use_weight=params.use_weight).compute()
    return {"first": res["first"].values, "second": res["second"].values,
            "jaccard_coeff": res["jaccard_coeff"].values.astype("float64")}
