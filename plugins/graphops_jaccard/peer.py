"""Peers of ``jaccard`` for side-by-side comparison: cuGraph's own and networkx's."""
from __future__ import annotations

from typing import Any

import numpy as np

from graphops.plugin import Device, Graph, InputError, PairIndex, to_device, when_closing

from .common import adjacency, require_default_pairs, result
from .params import JaccardParams


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


def run_cugraph(G: Any, pairs: PairIndex, params: JaccardParams) -> dict[str, Any]:
    require_default_pairs(params, "cugraph")
    """``cugraph.jaccard`` with the pairs as ``vertex_pair`` (results come in that order)."""
    import cudf
    import cugraph

    if "cugraph_pairs" not in pairs.extra:  # built once per pair list, outside later timings
        pairs.extra["cugraph_pairs"] = cudf.DataFrame({"first": to_device(pairs.first, Device.GPU),
                                                       "second": to_device(pairs.second, Device.GPU)})
    res = cugraph.jaccard(G, vertex_pair=pairs.extra["cugraph_pairs"], use_weight=params.use_weight)
    # cuGraph returns the pairs in vertex_pair's order.
    return result(pairs, res["jaccard_coeff"].values.astype("float64"))


def to_networkx(graph: Graph) -> Any:
    """A networkx ``Graph`` of the set adjacency (internal ids); built once, outside timings."""
    import networkx as nx

    src, dst, _ = _half_edges(graph, Device.CPU)
    G = nx.Graph()
    G.add_nodes_from(range(graph.n_vertices))
    G.add_edges_from(zip(src.tolist(), dst.tolist()))
    return G


def run_networkx(G: Any, pairs: PairIndex, params: JaccardParams) -> dict[str, Any]:
    require_default_pairs(params, "networkx")
    """``nx.jaccard_coefficient`` on the pairs. networkx drops u and v from the shared
    neighbours (not from the union), so it differs from cuGraph where self-loops exist."""
    import networkx as nx

    if params.use_weight:
        raise InputError("the networkx peer has no weighted Jaccard; use backend cpu, gpu or cugraph")
    first, second = pairs.first, pairs.second
    coeff = np.fromiter((j for _, _, j in nx.jaccard_coefficient(G, list(zip(first.tolist(),
                                                                              second.tolist())))),
                        dtype=np.float64, count=len(first))
    return result(pairs, coeff)


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


def run_cugraph_dask(client: Any, G: Any, pairs: PairIndex, params: JaccardParams) -> dict[str, Any]:
    require_default_pairs(params, "cugraph_dask")
    """``cugraph.dask.jaccard`` on the cluster, the pairs scattered as ``vertex_pair``; the result
    comes back in cuGraph's own order (the same pairs)."""
    import cudf
    import cugraph.dask as dcg

    key = ("cugraph_dask_pairs", id(client))
    if key not in pairs.extra:  # scattered once per pair list and client, outside later timings
        pairs.extra[key] = _scattered(client, cudf.DataFrame({"first": to_device(pairs.first, Device.GPU),
                                                              "second": to_device(pairs.second, Device.GPU)}))
    res = dcg.jaccard(G, vertex_pair=pairs.extra[key], use_weight=params.use_weight).compute()
    return {"first": res["first"].values, "second": res["second"].values,
            "jaccard_coeff": res["jaccard_coeff"].values.astype("float64")}
