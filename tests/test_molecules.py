"""Molecules in (the [chem] extra): SMILES files as graph sets in Python and in pipelines, every
bad row named by its line, and the kernels on them used the way GraphDot users use them (an SVC
on a precomputed Gram matrix, a Gaussian process fitting the kernel's hyperparameters)."""
from __future__ import annotations

import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import graphops as go
from graphops.errors import ConfigError, InputError

pytest.importorskip("rdkit.Chem", reason="the [chem] extra (RDKit)")
ROOT = Path(__file__).resolve().parents[1]
MOLECULES = ROOT / "configs" / "data" / "molecules.csv"


def test_read_smiles_file_with_labels():
    gs = go.read_smiles(MOLECULES, column="smiles", label="nitro")
    assert len(gs) == 24 and gs.name == "molecules" and gs.graph_labels.sum() == 12
    assert set(gs.node_features) >= {"atomic_number", "charge", "aromatic"} and "order" in gs.edge_features


def test_bad_rows_are_named_by_line(tmp_path):
    f = tmp_path / "m.csv"
    f.write_text("smiles,y\nCCO,1\nC1CC,0\nc1ccccc1,1\nN(C)(C)(C)(C)C,0\n,1\n")
    with pytest.raises(InputError, match=rf"3 bad SMILES strings: {f}, line 3: 'C1CC' cannot be parsed.*{f}, line 5: "
                                         rf"'N\(C\)\(C\)\(C\)\(C\)C' is not a valid molecule.*{f}, line 6: '' is not a SMILES"):
        go.read_smiles(f)
    with pytest.raises(InputError, match=r"no column 'smile' in its header; its columns: 'smiles', 'y'. Did you mean "
                                         r"'smiles'\?"):
        go.read_smiles(f, column="smile")
    (tmp_path / "l.csv").write_text("smiles,y\nCCO,x\n")
    with pytest.raises(InputError, match=r"line 2: label 'x'"):
        go.read_smiles(tmp_path / "l.csv", label="y")


def _pipeline(tmp_path, graph):
    (tmp_path / "m.csv").write_text(MOLECULES.read_text())
    (tmp_path / "p.yaml").write_text(textwrap.dedent(f"""\
        version: 1
        name: p
        graphs:
          mols: {graph}
        steps:
          - {{id: k, algorithm: sp_kernel, inputs: {{graphs: mols}}, backend: cpu, output: k.npy}}
        """))
    return tmp_path / "p.yaml"


def test_pipeline_smiles_source(tmp_path):
    summary = go.run_pipeline(_pipeline(tmp_path, "{smiles: m.csv, column: smiles, label: nitro}"), out=tmp_path / "o")
    assert summary.steps[0].shape == [24, 24]
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "k.npy"),
                                  go.run("sp_kernel", go.read_smiles(MOLECULES), backend="cpu"))


@pytest.mark.parametrize("graph, message", [
    ("{smiles: m.csv, column: smile}", r"At graphs.mols\n==> At key: column\n=====> 'm.csv' has no column 'smile'.*"
                                       r"Did you mean 'smiles'"),
    ("{smiles: nowhere.csv}", r"At key: smiles\n=====> File not found: 'nowhere.csv'"),
    ("{path: m.csv, column: smiles}", r"'column' and 'label' name columns of a SMILES file"),
    ("{smiles: m.csv, label: activity}", r"At key: label\n=====> 'm.csv' has no column 'activity'"),
])
def test_pipeline_smiles_errors_at_load(tmp_path, graph, message):
    with pytest.raises(ConfigError, match=message):
        go.load_pipeline(_pipeline(tmp_path, graph))


def test_the_shipped_molecules_example_runs(tmp_path):
    summary = go.run_pipeline(ROOT / "configs" / "molecules_example.yaml", backend="cpu", out=tmp_path)
    K = np.load(tmp_path / "molecules_gram.npy")
    assert K.shape == (24, 24) and np.allclose(np.diag(K), 1.0)
    assert summary.steps[0].status == "ok"


def test_svc_and_gaussian_process_on_molecules():
    from sklearn.gaussian_process import GaussianProcessClassifier
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import SVC

    from graphops.kernels import KroneckerDelta, MarginalizedGraphKernel, TensorProduct

    gs = go.read_smiles(MOLECULES, label="nitro")
    y = gs.graph_labels
    kernel = MarginalizedGraphKernel(TensorProduct(atomic_number=KroneckerDelta(0.5), aromatic=KroneckerDelta(0.5)),
                                     TensorProduct(order=KroneckerDelta(0.5)), normalize=True, backend="cpu")
    scores = cross_val_score(make_pipeline(kernel, SVC(kernel="precomputed")), gs, y, cv=4)
    assert scores.mean() >= 0.75  # nitro groups are what the element/order kernel sees
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gpc = GaussianProcessClassifier(kernel=kernel).fit(gs, y)
    assert (gpc.predict(gs) == y).mean() >= 0.9
