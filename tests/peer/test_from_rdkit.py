"""GraphDot's tests of ``Graph.from_rdkit`` and ``Graph.from_smiles`` (test/graph/test_from_rdkit.py,
test_from_smiles.py, GraphDot 0.8), ported to
``GraphSet.from_rdkit`` / ``GraphSet.from_smiles``: the same molecules, the same feature names
and values. Left out, with why: ``bond_type='type'`` (graphops keeps the bond type as the edge
label and ``order`` as a feature, both always) and ``ring_stereo`` (GraphDot's own ring-plane
heuristic). ``ring_list`` is a sequence feature (read with ``Convolution``)."""
from __future__ import annotations

import numpy as np
import pytest

from graphops import GraphSet
from graphops.errors import InputError

Chem = pytest.importorskip("rdkit.Chem", reason="the [chem] extra (RDKit)")


def one(smi):
    return GraphSet.from_rdkit([Chem.MolFromSmiles(smi)])


def test_from_rdkit_linear_hydrocarbon():
    for i in range(2, 10):
        g = one("C" * i)
        assert g.n_nodes == i and g.n_edges == i - 1


@pytest.mark.parametrize("smi, atomic_number", [("CC", 6), ("NN", 7), ("OO", 8)])
def test_from_rdkit_feature_atomic_number(smi, atomic_number):
    g = one(smi)
    assert (g.node_features["atomic_number"] == atomic_number).all()
    assert (g.node_labels == atomic_number).all()  # the node label too


@pytest.mark.parametrize("smi, charge", [("[C+]C", 1), ("[C++]C", 2), ("[C-]C", -1), ("[C--]C", -2), ("[C+2]C", 2),
                                         ("[C+3]C", 3), ("[C-2]C", -2), ("[C-3]C", -3)])
def test_from_rdkit_feature_atom_charge(smi, charge):
    assert one(smi).node_features["charge"][0] == charge


def test_a_molecule_rdkit_refuses_is_named():
    """GraphDot's list has ('[C+4]C', 4); RDKit 2026.09 refuses that molecule (valence), so there is
    nothing to convert: from_smiles names it with RDKit's reason."""
    with pytest.raises(InputError, match=r"row 0: '\[C\+4\]C' is not a valid molecule \(Explicit valence"):
        GraphSet.from_smiles(["[C+4]C"])


@pytest.mark.parametrize("smi, hcount", [("CC", 3), ("C=C", 2), ("C#C", 1)])
def test_from_rdkit_feature_atom_hcount(smi, hcount):
    assert (one(smi).node_features["hcount"] == hcount).all()


@pytest.mark.parametrize("smi, hybridization", [("CC", "SP3"), ("C=C", "SP2"), ("C#C", "SP")])
def test_from_rdkit_feature_atom_hybridization(smi, hybridization):
    assert (one(smi).node_features["hybridization"] == int(getattr(Chem.HybridizationType, hybridization))).all()


@pytest.mark.parametrize("smi, aromatic", [("C1CCCCC1", False), ("c1ccccc1", True), ("C1=CC=CC=C1", True)])
def test_from_rdkit_feature_atom_aromatic(smi, aromatic):
    assert (one(smi).node_features["aromatic"] == int(aromatic)).all()


@pytest.mark.parametrize("smi, chiral", [("[C@H](F)(Cl)Br", "CHI_TETRAHEDRAL_CW"),
                                         ("[C@@H](F)(Cl)Br", "CHI_TETRAHEDRAL_CCW")])
def test_from_rdkit_feature_atom_chiral(smi, chiral):
    assert one(smi).node_features["chiral"][0] == int(getattr(Chem.ChiralType, chiral))


@pytest.mark.parametrize("smi, order", [("CC", 1.0), ("C=C", 2.0), ("C#C", 3.0), ("c1ccccc1", 1.5)])
def test_from_rdkit_feature_bond_order(smi, order):
    assert (one(smi).edge_features["order"] == order).all()


@pytest.mark.parametrize("smi, aromatic", [("CC", False), ("C=C", False), ("C#C", False), ("c1ccccc1", True),
                                           ("C1=CC=CC=C1", True)])
def test_from_rdkit_feature_bond_aromatic(smi, aromatic):
    assert (one(smi).edge_features["aromatic"] == int(aromatic)).all()


@pytest.mark.parametrize("smi, conjugated", [("CC", False), ("C=C", False), ("C=C-C=C", True), ("C#C-C#C", True),
                                             ("C#C", False), ("c1ccccc1", True), ("C1=CC=CC=C1", True)])
def test_from_rdkit_feature_bond_conjugated(smi, conjugated):
    assert (one(smi).edge_features["conjugated"] == int(conjugated)).all()


@pytest.mark.parametrize("smi, stereo", [(r"F/C=C/F", "STEREOE"), (r"F\C=C/F", "STEREOZ"), (r"F\C=C\F", "STEREOE"),
                                         (r"F/C=C\F", "STEREOZ")])
def test_from_rdkit_feature_bond_stereo(smi, stereo):
    assert one(smi).edge_features["stereo"][1] == int(getattr(Chem.BondStereo, stereo))


# graphops' own additions --------------------------------------------------------------------------
def test_in_ring_and_bond_type_label():
    g = one("C1CC1C=C")
    assert g.edge_features["in_ring"].tolist() == [1, 1, 0, 0, 1]
    assert g.edge_labels.tolist() == [1, 1, 1, 2, 1]


def test_many_molecules_batch_with_labels():
    smiles = ["CCO", "c1ccccc1O", "C=CC#N", "[NH4+]"]
    gs = GraphSet.from_smiles(smiles, labels=[1, 0, 1, 0])
    assert len(gs) == 4 and gs.graph_labels.tolist() == [1, 0, 1, 0]
    for i, smi in enumerate(smiles):
        mol = Chem.MolFromSmiles(smi)
        g = gs[i]
        assert g.n_vertices == mol.GetNumAtoms() and g.n_edges == mol.GetNumBonds()
    assert not gs.directed and np.array_equal(gs.node_ptr, [0, 3, 10, 14, 15])


def test_bad_smiles_are_named_never_dropped():
    with pytest.raises(InputError, match=r"3 bad SMILES strings: file.csv, line 3: 'C1CC' cannot be parsed as SMILES; "
                                         r"file.csv, line 4: 'N\(C\)\(C\)\(C\)\(C\)C' is not a valid molecule "
                                         r"\(Explicit valence.*; file.csv, line 5: '' is not a SMILES string"):
        GraphSet.from_smiles(["CCO", "C1CC", "N(C)(C)(C)(C)C", ""],
                             where=[f"file.csv, line {i}" for i in (2, 3, 4, 5)])
    with pytest.raises(InputError, match="molecule 1: not an RDKit molecule"):
        GraphSet.from_rdkit([Chem.MolFromSmiles("C"), None])


@pytest.mark.parametrize("smi, ring_list", [
    ("CC", [0]), ("CCNC", [0]), ("COC", [0]), ("C1CC1", [3]), ("C1CCC1", [4]), ("C1CCCC1", [5]),
    ("C1CCCCC1", [6]), ("c1ccccc1", [6]), ("C1=CC=CC=C1", [6]), ("C12(CCC2)CC1", [3, 4]),
])
def test_from_rdkit_feature_atom_ring_list(smi, ring_list):
    rings = one(smi)[0].nodes["ring_list"].iloc[0]
    assert set(rings) == set(ring_list)


# GraphDot's test/graph/test_from_smiles.py (its cases are commented out there; they hold here)
@pytest.mark.parametrize("smi", ["CC", "CCC", "CCCC", "C=C", "C=C-C", "C=C-C=C", "CN", "CCN", "C=CN", "CC=N"])
def test_from_smiles_linear(smi):
    import re

    g = GraphSet.from_smiles([smi])
    assert g.n_nodes == len(re.sub("[^CNOH]", "", smi))
    assert g.n_edges == g.n_nodes - 1


@pytest.mark.parametrize("smi", ["C1CC1", "C1CCC1", "C1CCCC1"])
def test_from_smiles_cyclic(smi):
    import re

    g = GraphSet.from_smiles([smi])
    assert g.n_nodes == len(re.sub("[^CNOH]", "", smi))
    assert g.n_edges == g.n_nodes
