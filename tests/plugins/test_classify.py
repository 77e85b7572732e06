"""classify: per-fold and mean accuracy equal scikit-learn's cross_val_score on the same Gram
matrix; the MUTAG example from molecules to an accuracy; what a wrong input is told."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import graphops as go
from graphops.errors import ConfigError, GraphopsError
from tests.reference.classify import accuracies

pytest.importorskip("sklearn")
ROOT = Path(__file__).resolve().parents[2]


def test_the_mutag_example_is_cross_val_score_on_its_gram_matrix(tmp_path):
    summary = go.run_pipeline(ROOT / "configs" / "mutag_classify_example.yaml", out=tmp_path)
    assert [s.status for s in summary.steps] == ["ok", "ok"] and summary.order == ["kernel", "accuracy"]
    got = pd.read_csv(tmp_path / "mutag_accuracy.csv")
    gram = np.load(tmp_path / "mutag_sp_gram.npy")
    want = accuracies(gram, go.read_tu(_mutag()).graph_labels, C=1.0, folds=10, seed=0)
    assert got["fold"].tolist() == [str(i) for i in range(1, 11)] + ["mean"]
    np.testing.assert_allclose(got["accuracy"].to_numpy()[:-1], want, rtol=0, atol=1e-12)
    assert abs(got["accuracy"].iloc[-1] - want.mean()) <= 0.03 and got["accuracy"].iloc[-1] > 0.75
    assert got["n_test"].iloc[-1] == 188


def _mutag():
    from graphops.io import datasets

    return datasets.path("MUTAG")


@pytest.mark.parametrize("normalize", [False, True])
def test_python_calls_equal_the_reference(normalize):
    graphs = go.read_tu(_mutag())
    gram = go.run("sp_kernel", graphs)
    out = go.run("classify", graphs, gram, C=3.0, folds=4, seed=7, normalize=normalize)
    want = accuracies(gram, graphs.graph_labels, C=3.0, folds=4, seed=7, normalize=normalize)
    np.testing.assert_allclose(out["accuracy"].to_numpy()[:-1], want, atol=1e-12)
    big = go.run("classify", graphs, gram, folds=4, seed=2**40)  # beyond NumPy's legacy seeds: mixed down
    assert len(big) == 5 and 0.5 < big["accuracy"].iloc[-1] <= 1.0


def test_wrong_inputs_are_told_what_to_fix(monkeypatch):
    graphs = go.read_tu(_mutag())
    gram = go.run("sp_kernel", graphs)
    with pytest.raises(GraphopsError, match=r"the Gram matrix is 187 x 187 and the set has 188 graphs"):
        go.run("classify", graphs, gram[1:, 1:])
    with pytest.raises(GraphopsError, match=r"folds=100 but the smallest class has 63 graphs.*folds: 63 or fewer"):
        go.run("classify", graphs, gram, folds=100)
    bad = gram.copy()
    bad[0, 1] = np.nan
    with pytest.raises(GraphopsError, match="holds 1 values that are not finite"):
        go.run("classify", graphs, bad)
    zero = gram.copy()
    zero[3, 3] = 0.0
    with pytest.raises(GraphopsError, match="1 diagonal entries are not positive"):
        go.run("classify", graphs, zero, normalize=True)
    import dataclasses

    for labels, shown in ((np.linspace(0.5, 1.5, 188), "0.5"), (np.where(np.arange(188) % 2, np.inf, 1.0), "inf")):
        odd = dataclasses.replace(graphs, graph_labels=labels)
        with pytest.raises(GraphopsError, match=f"are not whole numbers .e.g. {shown}"):
            go.run("classify", odd, gram)
    same = go.generate.gnp_set({10: 6}, p=0.5, seed=1)
    with pytest.raises(GraphopsError, match="every graph has the same label: a classifier needs two classes"):
        go.run("classify", same, np.eye(6))
    import networkx as nx

    unlabelled = go.GraphSet.from_networkx([nx.path_graph(3), nx.cycle_graph(4)])
    assert unlabelled.graph_labels is None
    with pytest.raises(GraphopsError, match="no graph labels to learn"):
        go.run("classify", unlabelled, np.eye(2))
    with pytest.raises(GraphopsError, match="input 'gram' takes a 2-D NumPy or CuPy array"):
        go.run("classify", graphs, [1, 2, 3])


def test_validate_names_the_extra_when_scikit_learn_is_missing(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "sklearn" else real(name, *a))
    with pytest.raises(ConfigError, match=r"classify needs scikit-learn, which is not installed: pip install "
                                          r"'graphops\[ml\]'"):
        go.load_pipeline(ROOT / "configs" / "mutag_classify_example.yaml")
