"""GraphDot's tests of the marginalized graph kernel (test/kernel/marginalized/test_kernel.py,
GraphDot 0.8), ported to graphops' ``MarginalizedGraphKernel`` and run on every backend: the same
graphs (unlabeled, labeled, weighted, variable-length features), kernels, q values, reference
(``MLGK``, GraphDot's dense product-graph system, here solved directly instead of by CG) and
tolerances.

Adapted, with why:
* GraphDot's ``Graph.from_networkx`` and ``Graph.unify_datatype`` are graphops' reading of a list of
  networkx graphs (``GraphSet.from_networkx``, the weight attribute ``w``).
* ``mlgk.theta = t`` works as in GraphDot; ``active_theta_mask`` is computed here from the
  hyperparameters (graphops has no such attribute).
* GraphDot warns (``DeprecationWarning``) for a node or edge kernel that can leave its range and
  computes anyway; graphops refuses it with an error naming the bound (``test_mlgk_kernel_range_check``).
* GraphDot's ``Constant(c)`` is fixed unless given bounds; graphops' has bounds ``(1e-3, 1)`` by
  default, so the ported cases write ``Constant(1.0, c_bounds="fixed")`` (a number combined with a
  kernel, ``k + 0.01``, is a fixed Constant in both).
* ``test_mlgk_typecheck``: GraphDot refuses graphs whose feature *types* differ (its C++ structs);
  graphops refuses a kernel reading a feature some graph lacks, which is what is checked.
* ``test_mlgk_on_permuted_graph`` builds benzene by hand (GraphDot reads it from ASE).


* GraphDot computes in float32; the ``gpu32`` cases run graphops' default precision, float32, which
  solves a call again in float64 when some pair does not converge (the dense random signed weights
  of ``test_mlgk_self_loops`` can stall float32 conjugate gradients); ``gpu64`` asks float64.

Left out, with why:
* ``test_mlgk_dtype``: GraphDot's ``dtype`` sets the output type; graphops always returns float64
  (``precision`` sets the GPU's arithmetic).
"""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from graphops.errors import InputError
from graphops.kernels import (Additive, Constant, Convolution, KroneckerDelta, MarginalizedGraphKernel,
                              SquareExponential, TensorProduct)

ALL = [pytest.param("cpu", id="cpu"), pytest.param("gpu", id="gpu64", marks=pytest.mark.gpu),
       pytest.param("gpu32", id="gpu32", marks=pytest.mark.gpu)]
EXACT = ALL[:2]  # tolerances of 1e-7 or node-wise sums: float64 arithmetic


def MGK(backend, *args, **kwargs):
    extra = {"precision": "float64"} if backend == "gpu" else {}  # gpu32: the default precision, as GraphDot
    return MarginalizedGraphKernel(*args, backend="cpu" if backend == "cpu" else "gpu", **kwargs, **extra)


def MLGK(G, knode, kedge, q, q0, nodal=False, weight="w"):
    """GraphDot's reference: the product-graph system written out (nodes in G's order)."""
    nodes = list(G.nodes)
    index = {v: i for i, v in enumerate(nodes)}
    N = len(nodes)
    D = np.zeros(N)
    A = np.zeros((N, N))
    Vx = np.zeros(N * N)
    Ex = np.zeros((N * N, N * N))
    for i, n1 in enumerate(nodes):
        for j, n2 in enumerate(nodes):
            Vx[i * N + j] = knode(G.nodes[n1], G.nodes[n2])
    edges = [(index[a], index[b], d) for a, b, d in G.edges(data=True)]
    for i1, j1, e1 in edges:
        for i2, j2, e2 in edges:
            Ex[i1 * N + i2, j1 * N + j2] = kedge(e1, e2)
            if i2 != j2:
                Ex[i1 * N + j2, j1 * N + i2] = kedge(e1, e2)
            if i1 != j1:
                Ex[j1 * N + j2, i1 * N + i2] = kedge(e1, e2)
                if i2 != j2:
                    Ex[j1 * N + i2, i1 * N + j2] = kedge(e1, e2)
    for i, j, e in edges:
        w = e.get(weight, 1.0)
        D[i] += w
        if i != j:
            D[j] += w
        A[i, j] = w
        A[j, i] = w
    Dx = np.kron(D / (1.0 - q), D / (1.0 - q))
    Ax = np.kron(A, A)
    linsys = np.diag(Dx / Vx) - Ax * Ex
    qx = np.ones(N * N) * q * q / q0 / q0
    solution = np.linalg.solve(linsys, Dx * qx)
    return solution.reshape(N, -1) if nodal else np.ones(N * N).dot(solution)


class Hybrid:
    NONE = 0
    SP = 1
    SP2 = 2
    SP3 = 3


unlabeled_graph1 = nx.Graph(title="U1")
unlabeled_graph1.add_nodes_from([0, 1, 2])
unlabeled_graph1.add_edges_from([(0, 1), (0, 2)])

unlabeled_graph2 = nx.Graph(title="U2")
unlabeled_graph2.add_nodes_from([0, 1, 2])
unlabeled_graph2.add_edges_from([(0, 1), (0, 2), (1, 2)])

labeled_graph1 = nx.Graph(title="H2O")
labeled_graph1.add_node("O1", hybridization=Hybrid.SP2, charge=1)
labeled_graph1.add_node("H1", hybridization=Hybrid.SP3, charge=-1)
labeled_graph1.add_node("H2", hybridization=Hybrid.SP, charge=2)
labeled_graph1.add_edge("O1", "H1", order=1, length=0.5)
labeled_graph1.add_edge("O1", "H2", order=2, length=1.0)

labeled_graph2 = nx.Graph(title="H2")
labeled_graph2.add_node("H1", hybridization=Hybrid.SP, charge=1.0)
labeled_graph2.add_node("H2", hybridization=Hybrid.SP, charge=-1.0)
labeled_graph2.add_edge("H1", "H2", order=2, length=1.0)

weighted_graph1 = nx.Graph(title="H2O")
weighted_graph1.add_node("O1", hybridization=Hybrid.SP2, charge=1)
weighted_graph1.add_node("H1", hybridization=Hybrid.SP3, charge=-1)
weighted_graph1.add_node("H2", hybridization=Hybrid.SP, charge=2)
weighted_graph1.add_edge("O1", "H1", order=1, length=0.5, w=1.0)
weighted_graph1.add_edge("O1", "H2", order=2, length=1.0, w=2.0)

weighted_graph2 = nx.Graph(title="H2")
weighted_graph2.add_node("H1", hybridization=Hybrid.SP, charge=1)
weighted_graph2.add_node("H2", hybridization=Hybrid.SP, charge=1)
weighted_graph2.add_edge("H1", "H2", order=2, length=1.0, w=3.0)

vario_graph1 = nx.Graph(title="H2O")
vario_graph1.add_node("O1", rings=(5, 6))
vario_graph1.add_node("H1", rings=(3,))
vario_graph1.add_node("H2", rings=(2, 3, 4))
vario_graph1.add_edge("O1", "H1", spectrum=(3, 4), w=1.0)
vario_graph1.add_edge("O1", "H2", spectrum=(3, 5), w=2.0)

vario_graph2 = nx.Graph(title="H2")
vario_graph2.add_node("H1", rings=(3, 4))
vario_graph2.add_node("H2", rings=(3,))
vario_graph2.add_edge("H1", "H2", spectrum=(2, 4), w=3.0)

case_dict = {
    "unlabeled": {
        "graphs": [unlabeled_graph1, unlabeled_graph2],
        "knode": Constant(1.0, c_bounds="fixed"),
        "kedge": Constant(1.0, c_bounds="fixed"),
        "q": [0.01, 0.05, 0.1, 0.5],
    },
    "labeled": {
        "graphs": [labeled_graph1, labeled_graph2],
        "knode": TensorProduct(hybridization=KroneckerDelta(0.3), charge=SquareExponential(1.) + 0.01).normalized,
        "kedge": Additive(order=KroneckerDelta(0.3), length=SquareExponential(0.05)).normalized,
        "q": [0.01, 0.05, 0.1, 0.5],
    },
    "weighted": {
        "graphs": [weighted_graph1, weighted_graph2],
        "knode": Additive(hybridization=KroneckerDelta(0.3), charge=SquareExponential(1.0)).normalized,
        "kedge": TensorProduct(order=KroneckerDelta(0.3), length=SquareExponential(0.05)),
        "q": [0.01, 0.05, 0.1, 0.5],
    },
    "vario-features": {
        "graphs": [vario_graph1, vario_graph2],
        "knode": TensorProduct(rings=Convolution(KroneckerDelta(0.3))),
        "kedge": TensorProduct(spectrum=Convolution(SquareExponential(1.0))),
        "q": [0.01, 0.05, 0.1, 0.5],
    },
}
CASES = list(case_dict)


def graphs_of(case):
    """The case's graphs, weighted through the attribute ``w`` where they have it."""
    return case["graphs"]


def kernel(backend, case, q, **kw):
    return MGK(backend, case["knode"], case["kedge"], q=q, **kw)


def run_with(mlgk, G, **kw):
    weighted = all("w" in d for g in G for _, _, d in g.edges(data=True))
    return mlgk(_set(G, mlgk, weighted), **kw)


def _set(G, mlgk, weighted):
    from graphops import GraphSet

    names = mlgk._names()
    return GraphSet.from_networkx(G, weight="w" if weighted else None, **names)


def call(mlgk, X, Y=None, **kw):
    weighted = all("w" in d for g in X for _, _, d in g.edges(data=True))
    Xs = _set(X, mlgk, weighted)
    return mlgk(Xs, None if Y is None else _set(Y, mlgk, weighted), **kw)


def diag(mlgk, X, **kw):
    weighted = all("w" in d for g in X for _, _, d in g.edges(data=True))
    return mlgk.diag(_set(X, mlgk, weighted), **kw)


def test_mlgk_typecheck():
    mlgk = MarginalizedGraphKernel(TensorProduct(hybridization=KroneckerDelta(0.5)), Constant(1.0), q=0.5,
                                   backend="cpu")
    for pair in ([unlabeled_graph1, labeled_graph1], [unlabeled_graph1, weighted_graph1]):
        with pytest.raises(InputError, match="hybridization"):
            mlgk(pair)


@pytest.mark.parametrize("backend", ALL)
@pytest.mark.parametrize("name", CASES)
def test_mlgk_self_similarity(name, backend):
    case = case_dict[name]
    G = graphs_of(case)
    for q in case["q"]:
        mlgk = kernel(backend, case, q)
        R = np.asarray(call(mlgk, G))
        d = np.diag(R) ** -0.5
        K = np.diag(d).dot(R).dot(np.diag(d))
        assert R.shape == (len(G), len(G))
        assert np.count_nonzero(R - R.T) == 0
        assert R[0, 0] == pytest.approx(MLGK(G[0], case["knode"], case["kedge"], q, q), 1e-5)
        assert R[1, 1] == pytest.approx(MLGK(G[1], case["knode"], case["kedge"], q, q), 1e-5)
        assert K[0, 0] == pytest.approx(1, 2e-7)
        assert K[1, 1] == pytest.approx(1, 2e-7)


@pytest.mark.parametrize("backend", ALL)
@pytest.mark.parametrize("name", CASES)
def test_mlgk_cross_similarity(name, backend):
    case = case_dict[name]
    G = graphs_of(case)
    for q in case["q"]:
        mlgk = kernel(backend, case, q)
        R = np.asarray(call(mlgk, G))
        for x, y in zip(np.ravel(call(mlgk, G[:1], G)), R[:1, :].ravel()):
            assert x == pytest.approx(y, 1e-6)
        for x, y in zip(np.ravel(call(mlgk, G[1:], G)), R[1:, :].ravel()):
            assert x == pytest.approx(y, 1e-6)
        for x, y in zip(np.ravel(call(mlgk, G, G[:1])), R[:, :1].ravel()):
            assert x == pytest.approx(y, 1e-6)
        for x, y in zip(np.ravel(call(mlgk, G, G[1:])), R[:, 1:].ravel()):
            assert x == pytest.approx(y, 1e-6)


def finite_difference(mlgk, f):
    theta = mlgk.theta
    eps = 1e-3
    out = []
    for i in range(len(theta)):
        t = np.copy(theta)
        t[i] += eps
        mlgk.theta = t
        Rr = np.asarray(f())
        t = np.copy(theta)
        t[i] -= eps
        mlgk.theta = t
        Rl = np.asarray(f())
        mlgk.theta = theta
        out.append((Rr - Rl) / (2 * eps) / np.exp(theta)[i])  # dR/dt = dR/dlog t / t
    return out


@pytest.mark.parametrize("nodal", [True, False])
@pytest.mark.parametrize("backend", EXACT)
@pytest.mark.parametrize("name", CASES)
def test_mlgk_gradient(name, backend, nodal):
    case = case_dict[name]
    G = graphs_of(case)
    for q in case["q"]:
        mlgk = kernel(backend, case, q)
        R, dR = call(mlgk, G, nodal=nodal, eval_gradient=True)
        R, dR = np.asarray(R), np.asarray(dR)
        assert len(dR.shape) == 3
        assert R.shape[0] == dR.shape[0] and R.shape[1] == dR.shape[1]
        assert dR.shape[2] >= 1
        theta = np.exp(mlgk.theta)
        for i, dR_dt in enumerate(finite_difference(mlgk, lambda: call(mlgk, G, nodal=nodal))):
            assert np.allclose(dR[:, :, i] / theta[i], dR_dt, rtol=0.05, atol=0.05)


@pytest.mark.parametrize("backend", EXACT)
@pytest.mark.parametrize("name", CASES)
def test_mlgk_diag(name, backend):
    case = case_dict[name]
    G = graphs_of(case)
    for q in case["q"]:
        mlgk = kernel(backend, case, q)
        R = np.asarray(call(mlgk, G))
        D = diag(mlgk, G)
        assert len(D) == 2
        assert D[0] == pytest.approx(R[0, 0], 1e-7)
        assert D[1] == pytest.approx(R[1, 1], 1e-7)
        R_nodal = np.asarray(call(mlgk, G, nodal=True))
        d_nodal = np.diag(R_nodal) ** -0.5
        K_nodal = np.diag(d_nodal).dot(R_nodal).dot(np.diag(d_nodal))
        n = np.array([len(g.nodes) for g in G])
        N = np.cumsum(n)
        start, end = N - n, N
        assert R_nodal.shape == (N[-1], N[-1])
        assert np.count_nonzero(R_nodal - R_nodal.T) == 0
        for k, (i, j) in enumerate(zip(N - n, N)):
            gnd = MLGK(G[k], case["knode"], case["kedge"], q, q, nodal=True).ravel()
            sub = R_nodal[i:j, :][:, i:j].ravel()
            for r1, r2 in zip(sub, gnd):
                assert r1 == pytest.approx(r2, 1e-5)
        for i in range(N[-1]):
            assert K_nodal[i, i] == pytest.approx(1, 2e-7)
        D_nodal = diag(mlgk, G, nodal=True)
        assert len(D_nodal) == N[-1]
        for k in range(2):
            i, j = start[k], end[k]
            for r1, r2 in zip(D_nodal[i:j], np.diag(R_nodal[i:j, :][:, i:j])):
                assert r1 == pytest.approx(r2, 1e-7)


@pytest.mark.parametrize("nodal", [True, False])
@pytest.mark.parametrize("backend", EXACT)
@pytest.mark.parametrize("name", CASES)
def test_mlgk_diag_gradient(name, backend, nodal):
    case = case_dict[name]
    G = graphs_of(case)
    for q in case["q"]:
        mlgk = kernel(backend, case, q)
        R, dR = diag(mlgk, G, nodal=nodal, eval_gradient=True)
        assert len(dR.shape) == 2
        assert R.shape[0] == dR.shape[0]
        assert dR.shape[1] >= 1
        theta = np.exp(mlgk.theta)
        for i, dR_dt in enumerate(finite_difference(mlgk, lambda: diag(mlgk, G, nodal=nodal))):
            for a, b in zip((dR[:, i] / theta[i]).ravel(), dR_dt.ravel()):
                assert a == pytest.approx(b, rel=0.05, abs=0.05)


@pytest.mark.parametrize("backend", ALL)
@pytest.mark.parametrize("name", CASES)
def test_mlgk_lmin(name, backend):
    case = case_dict[name]
    G = graphs_of(case)
    for q in case["q"]:
        mlgk = kernel(backend, case, q)
        g = G[0]
        R0 = np.asarray(call(mlgk, [g], nodal=True, lmin=0))
        R1 = np.asarray(call(mlgk, [g], nodal=True, lmin=1))
        nodes = list(g.nodes)
        for i, n1 in enumerate(nodes):
            for j, n2 in enumerate(nodes):
                assert R0[i, j] == pytest.approx(R1[i, j] + case["knode"](g.nodes[n1], g.nodes[n2]),
                                                 abs=1e-6 if backend != "gpu32" else 1e-5)


@pytest.mark.parametrize("backend", EXACT)
@pytest.mark.parametrize("name", CASES)
def test_mlgk_starting_probability(name, backend):
    case = case_dict[name]
    G = graphs_of(case)
    for q in case["q"]:
        mlgk = kernel(backend, case, q, p=2.0)
        R = np.asarray(call(mlgk, G))
        R_nodal = np.asarray(call(mlgk, G, nodal=True))
        assert R[0, 0] == pytest.approx(MLGK(G[0], case["knode"], case["kedge"], q, q) * 2.0 ** 2, 1e-5)
        assert R[1, 1] == pytest.approx(MLGK(G[1], case["knode"], case["kedge"], q, q) * 2.0 ** 2, 1e-5)
        n = np.array([len(g.nodes) for g in G])
        N = np.cumsum(n)
        for i1, j1, g1 in zip(N - n, N, G):
            for i2, j2, g2 in zip(N - n, N, G):
                gnd = R_nodal[i1:j1, :][:, i2:j2]
                sub = np.asarray(call(mlgk, [g1], [g2], nodal=True))
                for r1, r2 in zip(sub.ravel(), gnd.ravel()):
                    assert r1 == pytest.approx(r2, 1e-5)


@pytest.mark.parametrize("backend", ALL)
def test_mlgk_large(backend):
    rng = np.random.default_rng(0)
    g = nx.Graph()
    n = 24
    for i, row in enumerate(rng.integers(0, 2, (n, n))):
        g.add_node(i, type=0)
        for j, pred in enumerate(row[:i]):
            if pred:
                g.add_edge(i, j, w=1)
    q = 0.5
    node_kernel = TensorProduct(type=KroneckerDelta(1.0))
    edge_kernel = Constant(1.0)
    mlgk = MGK(backend, node_kernel, edge_kernel, q=q)
    dot = np.asarray(call(mlgk, [g]))
    gold = MLGK(g, node_kernel, edge_kernel, q, q)
    assert dot.shape == (1, 1)
    assert dot.item() == pytest.approx(gold, rel=1e-6 if backend != "gpu32" else 1e-5)


def benzene(order=None):
    """C6H6 with element labels and bond lengths (Å), nodes in ``order``."""
    atoms = ["C"] * 6 + ["H"] * 6
    bonds = [(i, (i + 1) % 6, 1.39) for i in range(6)] + [(i, i + 6, 1.09) for i in range(6)]
    order = list(range(12)) if order is None else list(order)
    g = nx.Graph()
    for v in order:
        g.add_node(v, element=atoms[v])
    for a, b, length in bonds:
        g.add_edge(a, b, length=length)
    return g


@pytest.mark.parametrize("backend", ALL)
def test_mlgk_on_permuted_graph(backend):
    rng = np.random.default_rng(1)
    g = benzene()
    kernel_ = MGK(backend, TensorProduct(element=KroneckerDelta(0.5)), TensorProduct(length=SquareExponential(0.1)))
    for _ in range(10):
        h = benzene(rng.permutation(12))
        rel = 1e-6 if backend != "gpu32" else 1e-5
        assert np.asarray(call(kernel_, [g], [h])).item() == pytest.approx(np.asarray(call(kernel_, [g])).item(),
                                                                          rel=rel)


@pytest.mark.parametrize("backend", ALL)
def test_mlgk_self_loops(backend):
    """Dense random symmetric weights, negative ones and self-loops included."""
    kedge = Constant(1.0)
    knode = Constant(1.0)
    q = 0.1
    mlgk = MGK(backend, knode, kedge, q=q)
    np.random.seed(2)
    for _ in range(10):
        n = np.random.randint(4, 20)
        A = np.random.randn(n, n)
        A = A + A.T
        G = nx.from_numpy_array(A)
        for _, _, d in G.edges(data=True):
            d["w"] = d.pop("weight")
        K = np.asarray(call(mlgk, [G])).item()
        K0 = MLGK(G, knode, kedge, q, q, nodal=False)
        assert K == pytest.approx(K0, 5e-4)


def test_mlgk_fixed_hyperparameters():
    g = nx.Graph()
    g.add_node(0, feature=0)
    g.add_node(1, feature=1)
    g.add_node(2, feature=0)
    g.add_edge(0, 1, attribute=1.0)
    g.add_edge(0, 2, attribute=2.0)
    G = [g]
    knodeV = TensorProduct(feature=KroneckerDelta(0.5))
    knodeF = TensorProduct(feature=KroneckerDelta(0.5, h_bounds="fixed"))
    kedgeV = TensorProduct(attribute=SquareExponential(1.0))
    kedgeF = TensorProduct(attribute=SquareExponential(1.0, length_scale_bounds="fixed"))
    kernelVV = MarginalizedGraphKernel(knodeV, kedgeV, backend="cpu")
    kernelVF = MarginalizedGraphKernel(knodeV, kedgeF, backend="cpu")
    kernelFV = MarginalizedGraphKernel(knodeF, kedgeV, backend="cpu")
    kernelFF = MarginalizedGraphKernel(knodeF, kedgeF, backend="cpu")
    assert len(kernelVV.theta) == len(kernelVF.theta) + 1
    assert len(kernelVV.theta) == len(kernelFV.theta) + 1
    assert len(kernelVV.theta) == len(kernelFF.theta) + 2
    assert len(kernelVV.bounds) == len(kernelVF.bounds) + 1
    assert len(kernelVV.bounds) == len(kernelFV.bounds) + 1
    assert len(kernelVV.bounds) == len(kernelFF.bounds) + 2
    Rvv, dRvv = kernelVV(G, eval_gradient=True)
    Rvf, dRvf = kernelVF(G, eval_gradient=True)
    Rfv, dRfv = kernelFV(G, eval_gradient=True)
    Rff, dRff = kernelFF(G, eval_gradient=True)
    assert Rvv == pytest.approx(Rvf)
    assert Rvv == pytest.approx(Rfv)
    assert Rvv == pytest.approx(Rff)
    assert dRvv.shape[2] == dRvf.shape[2] + 1
    assert dRvv.shape[2] == dRfv.shape[2] + 1
    assert dRvv.shape[2] == dRff.shape[2] + 2

    def active(k):  # GraphDot's active_theta_mask: which of all hyperparameters are free
        return np.array([not h.fixed for h in (*k._kernel("node_kernel").hyperparameters,
                                               *k._kernel("edge_kernel").hyperparameters)])

    head = np.array([True])  # q
    assert dRvv[:, :, np.concatenate([head, active(kernelVF)])] == pytest.approx(dRvf)
    assert dRvv[:, :, np.concatenate([head, active(kernelFV)])] == pytest.approx(dRfv)
    assert dRvv[:, :, np.concatenate([head, active(kernelFF)])] == pytest.approx(dRff)


def test_mlgk_kernel_range_check():
    g = nx.Graph()
    g.add_node(0, feature=0)
    g.add_node(1, feature=1)
    g.add_edge(0, 1, attribute=1.0)
    G = [g]
    MarginalizedGraphKernel(node_kernel=KroneckerDelta(1e-7, on="feature"),
                            edge_kernel=TensorProduct(attribute=SquareExponential(1.0)), backend="cpu")(G)
    MarginalizedGraphKernel(node_kernel=TensorProduct(feature=KroneckerDelta(0.5)),
                            edge_kernel=TensorProduct(attribute=SquareExponential(1.0)), backend="cpu")(G)
    refused = [
        (TensorProduct(feature=KroneckerDelta(0)), TensorProduct(attribute=SquareExponential(1.0)), "can be 0"),
        (TensorProduct(feature=KroneckerDelta(0.5)) + 1, SquareExponential(1.0, on="attribute"), "can reach 2"),
        (TensorProduct(feature=KroneckerDelta(0.5)), TensorProduct(attribute=SquareExponential(1.0)) + 1,
         "can reach 2"),
        (TensorProduct(feature=KroneckerDelta(0.5)) * 2, TensorProduct(attribute=SquareExponential(1.0)),
         "can reach 2"),
        (TensorProduct(feature=KroneckerDelta(0.5)), TensorProduct(attribute=SquareExponential(1.0)) * 2,
         "can reach 2"),
    ]
    for node_kernel, edge_kernel, why in refused:
        with pytest.raises(InputError, match=why):
            MarginalizedGraphKernel(node_kernel=node_kernel, edge_kernel=edge_kernel, backend="cpu")(G)
