"""Helpers for plugin authors' tests: the same gates graphops applies to its own plugins.

    from graphops.engine.testing import check_algorithm

    def test_degree():
        check_algorithm("degree", reference=lambda g: {"vertex": ..., "degree": ...})

``check_algorithm`` checks that every own backend shares one signature, runs each backend
that can run here on small graphs (pandas in), checks that it returns the declared columns
(or an array) in the input's frame family, that it left its inputs' CSR arrays as they were
(the host arrays are read-only, CuPy ones are not: a GPU backend writing into them is found
here), and compares it with a slow reference.
"""
from __future__ import annotations

import ast
import hashlib
from typing import Any, Callable

import numpy as np
import pandas as pd

from graphops.base.device import Device, to_device
from graphops.host.algorithm import Algorithm
from graphops.host.contract import backend_problem
from graphops.host.targets import target_arguments

__all__ = ["check_signatures", "backend_signature", "check_algorithm", "tiny_graphs"]


def backend_signature(target: str) -> str:
    """The parameters of a backend function, read from its source without importing it.

    Return annotations may differ (NumPy on the CPU, CuPy on the GPU); parameters may not.

    Reading the source keeps this check possible where the GPU backend's imports would fail.
    """
    return ast.unparse(_backend_args(target))


def _backend_args(target: str) -> ast.arguments:
    try:
        return target_arguments(target)
    except ValueError as exc:
        raise AssertionError(f"backend {exc}") from None


def _algorithm(algorithm: Algorithm | str, registry: Any = None) -> Algorithm:
    if isinstance(algorithm, Algorithm):
        return algorithm
    from graphops.host.registry import get_registry

    return (registry or get_registry()).algorithm(algorithm)


def check_signatures(algorithm: Algorithm | str, registry: Any = None) -> None:
    """Assert the backend contract (:class:`~graphops.host.algorithm.Backend`) on every backend of
    ``algorithm`` (or the algorithm registered under that name): each target exists and takes one
    argument per input slot and then the params (a cluster backend the client first) — the check
    the registry makes when it is built (:mod:`graphops.host.contract`) — and every own (non-peer)
    backend has the same signature."""
    algorithm = _algorithm(algorithm, registry)
    for name, b in algorithm.backends.items():
        problem = backend_problem(algorithm, b)
        if problem is not None:
            raise AssertionError(f"{algorithm.name}: backend {name!r} ({b.target}): {problem}")
    own = {name: algorithm.backends[name] for name in algorithm.own_backends()}
    sigs = {name: backend_signature(b.target) for name, b in own.items()}
    first = next(iter(sigs))
    for name, sig in sigs.items():
        if sig != sigs[first]:
            raise AssertionError(f"{algorithm.name}: backend {name!r} has signature ({sig}), which "
                                 f"differs from {first!r} ({sigs[first]})")


def tiny_graphs() -> dict[str, Any]:
    """Small undirected graphs that catch the usual mistakes: one edge, a triangle with a tail,
    a self-loop and a repeated edge, isolated vertices, weights, string ids."""
    from graphops.model.graph import Graph

    def g(src, dst, weights=None, nodes=None):
        df = pd.DataFrame({"src": src, "dst": dst})
        if weights is not None:
            df["w"] = weights
        nf = None if nodes is None else pd.DataFrame({"id": nodes})
        return Graph.from_edgelist(df, weight="w" if weights is not None else None, nodes=nf)

    return {
        "single_edge": g([0], [1]),
        "triangle_tail": g([0, 1, 2, 2], [1, 2, 0, 3]),
        "loop_and_repeat": g([0, 0, 1, 1], [0, 1, 0, 2]),
        "isolated": g([10, 20], [20, 30], nodes=[10, 20, 30, 40, 50]),
        "weighted": g([0, 0, 1, 1, 2], [1, 2, 2, 3, 3], [0.5, 2.0, 1.5, 0.25, 3.0]),
        "names": g(["ann", "bob", "cy"], ["bob", "cy", "ann"]),
    }


def _inputs_for(algo: Algorithm, graph: Any) -> list[Any]:
    first = algo.inputs[0]
    if "graph" in first.kinds:
        return [graph]
    from graphops.model.graphset import GraphSet

    return [GraphSet.from_graphs([graph, graph])]


def _fingerprints(algo: Algorithm, backend: str, inputs: dict[str, Any]) -> dict[str, str]:
    """A digest of every CSR array the backend gets (``slot.field``), on its device; a backend with
    ``prepare`` gets the plugin's own structure, not looked at here."""
    spec = algo.backends[backend]
    if spec.prepare is not None:
        return {}
    out = {}
    for slot, obj in inputs.items():
        if not hasattr(obj, "csr"):
            continue
        for field, a in obj.csr(Device(spec.device)).arrays().items():
            host = np.ascontiguousarray(to_device(a, Device.CPU))
            out[f"{slot}.{field}"] = hashlib.sha1(host.tobytes()).hexdigest()
    return out


def _compare(algo: Algorithm, got: Any, want: Any, rtol: float, where: str) -> None:
    if not hasattr(got, "columns"):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, err_msg=where)
        return
    want = pd.DataFrame(want)
    for col in want.columns:
        a, b = got[col].to_numpy(), want[col].to_numpy()
        if a.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, rtol=rtol, err_msg=f"{where}, column {col!r}")
        else:
            assert a.tolist() == b.tolist(), f"{where}, column {col!r}: {a.tolist()} != {b.tolist()}"


def check_algorithm(algorithm: Algorithm | str, reference: Callable[..., Any] | None = None,
                    graphs: dict[str, Any] | None = None, params: dict[str, Any] | None = None,
                    rtol: float = 1e-12, registry: Any = None) -> dict[str, str]:
    """Run the gates on every own backend of ``algorithm``; return ``{backend: "ok" | why skipped}``.

    :param reference: ``reference(graph, **params)`` -> the expected columns (dict or frame) or
        array, computed the slow, obvious way
    :param graphs: name -> Graph to run on (default: :func:`tiny_graphs`)
    :raises AssertionError: naming the backend, the graph and what differs
    """
    from graphops.engine.dispatch import execute_plan, plan
    from graphops.errors import BackendUnavailableError

    algo = _algorithm(algorithm, registry)
    check_signatures(algo)
    report = {}
    for backend in algo.own_backends():
        try:
            for name, graph in (graphs or tiny_graphs()).items():
                inputs = dict(zip(algo.slot_names, _inputs_for(algo, graph)))
                planned = plan(algo, inputs, backend, dict(params or {}), registry)  # may say it cannot run here
                before = _fingerprints(algo, backend, planned.inputs)
                got = execute_plan(planned).result
                where = f"{algo.name}: backend {backend!r} on graph {name!r}"
                changed = [k for k, v in _fingerprints(algo, backend, planned.inputs).items() if before.get(k) != v]
                assert not changed, (f"{where}: the backend wrote into its input array(s) {', '.join(changed)}; "
                                     f"inputs are shared by later calls: copy an array before changing it")
                if algo.result == "frame":
                    assert isinstance(got, pd.DataFrame), f"{where}: pandas in, {type(got).__name__} out"
                    assert list(got.columns) == [c for c in algo.outputs if c in got.columns], where
                if reference is not None:
                    _compare(algo, got, reference(*_inputs_for(algo, graph), **(params or {})), rtol, where)
            report[backend] = "ok"
        except BackendUnavailableError as exc:
            report[backend] = f"skipped: {exc}"
    return report
