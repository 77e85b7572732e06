"""mg_kernel gives one number per graph pair however it is asked: alone, in a row, in a square Gram
(in any order of the graphs), on the diagonal (``diagonal=True``) and in a cross matrix, on every
backend. A pair's two orientations round differently, and the GPU routes pairs by class, splits
graph 1 on one colour and factors the edge kernel over the values a call holds; each of these is
decided by the pair alone (orient.py, gpu.py, lowrank.floor), so the ways of asking agree bit
for bit (float32 is held to 1e-7 relative, GraphDot's own check of its diagonal against its Gram)."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphops as go
from graphops.kernels import Constant, KroneckerDelta

VARIANTS = {"cpu": {"backend": "cpu"}, "gpu64": {"backend": "gpu", "precision": "float64"},
            "gpu32": {"backend": "gpu", "precision": "float32"}}
BACKENDS = ["cpu", pytest.param("gpu64", marks=pytest.mark.gpu), pytest.param("gpu32", marks=pytest.mark.gpu)]
KERNELS = {
    "labeled": {"node_kernel": KroneckerDelta(0.5, on="element"), "edge_kernel": KroneckerDelta(0.3, on="order")},
    "unlabeled": {"node_kernel": Constant(1.0), "edge_kernel": Constant(1.0)},
}


@st.composite
def graph_lists(draw: st.DrawFn, most_nodes: int = 9) -> list[nx.Graph]:
    """2-6 small graphs (self-loops, isolated nodes, edgeless graphs), one of them twice."""
    graphs = []
    for _ in range(draw(st.integers(2, 6))):
        n = draw(st.integers(1, most_nodes))
        G = nx.Graph()
        G.add_nodes_from((v, {"element": draw(st.integers(0, 2))}) for v in range(n))
        for u, v in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=2 * n)):
            G.add_edge(u, v, order=draw(st.integers(1, 3)))
        graphs.append(G)
    graphs.append(graphs[draw(st.integers(0, len(graphs) - 1))])
    return graphs


def as_set(graphs: list[nx.Graph]) -> go.GraphSet:
    return go.GraphSet.from_networkx(graphs, node_features=["element"], edge_features=["order"])


def ask(variant: str, *inputs: go.GraphSet, **params) -> np.ndarray:
    return np.asarray(go.run("mg_kernel", *inputs, **VARIANTS[variant], q=0.05, **params))


def agree(variant: str, got: np.ndarray, want: np.ndarray, how: str) -> None:
    if variant == "gpu32":
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=0, err_msg=how)
    else:
        np.testing.assert_array_equal(got, want, err_msg=how)


def every_way(variant: str, graphs: list[nx.Graph], kernels: dict, pairs_alone: int = 8) -> None:
    """Each way of asking against the square Gram of ``graphs``."""
    n = len(graphs)
    gs = as_set(graphs)
    K = ask(variant, gs, **kernels)
    agree(variant, ask(variant, gs, diagonal=True, **kernels), np.diag(K), "diagonal=True")
    order = np.random.default_rng(n).permutation(n)[::-1]
    back = np.argsort(order)
    agree(variant, ask(variant, as_set([graphs[i] for i in order]), **kernels)[np.ix_(back, back)], K,
          "the Gram of the graphs in another order")
    cut = n // 2
    agree(variant, ask(variant, as_set(graphs[:cut]), as_set(graphs[cut:]), **kernels), K[:cut, cut:], "X vs Y")
    agree(variant, ask(variant, as_set(graphs[cut:]), as_set(graphs[:cut]), **kernels), K[cut:, :cut], "Y vs X")
    for i in range(n):
        agree(variant, ask(variant, gs[[i]], gs, **kernels)[0], K[i], f"row {i}")
    for i, j in np.random.default_rng(n + 1).integers(0, n, (pairs_alone, 2)).tolist():
        agree(variant, ask(variant, gs[[i]], gs[[j]], **kernels)[0, 0], K[i, j], f"pair ({i}, {j}) alone")
    Kn = ask(variant, gs, normalize=True, **kernels)
    agree(variant, ask(variant, as_set(graphs[:cut]), as_set(graphs[cut:]), normalize=True, **kernels),
          Kn[:cut, cut:], "normalized X vs Y")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", list(KERNELS))
def test_one_number_per_pair(backend, kind):
    @settings(max_examples=12 if backend == "cpu" else 25, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(graph_lists())
    def check(graphs):
        every_way(backend, graphs, KERNELS[kind])

    check()


def _sized(sizes: list[int], seed: int) -> list[nx.Graph]:
    """Random graphs of these sizes (about 3 arcs a node), labeled, one of them twice."""
    rng = np.random.default_rng(seed)
    graphs = []
    for n in sizes:
        G = nx.gnp_random_graph(n, min(1.0, 3.0 / n), seed=int(rng.integers(1 << 30)))
        nx.set_node_attributes(G, {v: int(rng.integers(0, 3)) for v in G}, "element")
        nx.set_edge_attributes(G, {e: int(rng.integers(1, 3)) for e in G.edges}, "order")
        graphs.append(G)
    return graphs + [graphs[3]]


@pytest.mark.gpu
@pytest.mark.parametrize("variant", ["gpu32", "gpu64"])
@pytest.mark.parametrize("edges", ["labels", "constant"])
@pytest.mark.parametrize("matvec", ["auto", "tiles"])
def test_gpu_one_number_per_pair_in_every_class(variant, edges, matvec):
    """Graphs of 3 to 150 nodes: the column solver's shapes and their twins, its owner path (one
    term), the factored solver and the global-memory path all give one number per pair."""
    kernels = {"node_kernel": KroneckerDelta(0.5, on="element"), "matvec": matvec,
               "edge_kernel": KroneckerDelta(0.3, on="order") if edges == "labels" else Constant(0.8)}
    every_way(variant, _sized([3, 9, 20, 33, 40, 64, 70, 100, 150], 4), kernels, pairs_alone=12)
