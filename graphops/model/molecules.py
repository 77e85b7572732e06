"""Molecules in: RDKit molecules or SMILES strings as the arrays of a
:class:`~graphops.model.graphset.GraphSet` (``GraphSet.from_rdkit``, ``GraphSet.from_smiles``),
atoms as nodes and bonds as (undirected) edges, with GraphDot's feature names where it has them
(``Graph.from_rdkit``) — the optional ``[chem]`` extra (RDKit).

Node features: ``atomic_number`` (also the node label), ``charge`` (formal), ``hcount`` (total
hydrogens), ``hybridization`` (RDKit's ``HybridizationType`` as an integer), ``aromatic`` (0/1),
``chiral`` (RDKit's ``ChiralType``; 0 for ring atoms, as GraphDot). Edge features: ``order``
(1, 1.5, 2, 3: ``GetBondTypeAsDouble``), ``aromatic``, ``conjugated``, ``in_ring`` (0/1),
``stereo`` (``BondStereo`` as an integer); the edge label is the bond type (``BondType`` as an
integer: 1 single, 2 double, 3 triple, 12 aromatic). ``ring_list``, as GraphDot: a sequence
feature, the sizes of the rings (RDKit's ring perception) each atom is in, sorted, ``(0,)`` for an
atom in none (read it with ``Convolution``). GraphDot's ``ring_stereo`` (its own ring-plane
heuristic) has no counterpart here.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from graphops.errors import InputError
from graphops.model.sequences import sequence_array

__all__ = ["ATOM_FEATURES", "BOND_FEATURES", "molecule_arrays", "parse_smiles"]

ATOM_FEATURES = ("atomic_number", "charge", "hcount", "hybridization", "aromatic", "chiral")
BOND_FEATURES = ("order", "aromatic", "conjugated", "in_ring", "stereo")
SHOWN = 5  # bad rows named in one error


def _chem() -> Any:
    from graphops.base.device import require

    return require("rdkit.Chem", "molecules (pip install 'graphops[chem]')")


def _atoms(mol: Any) -> list[tuple]:
    return [(a.GetAtomicNum(), a.GetFormalCharge(), a.GetTotalNumHs(), int(a.GetHybridization()),
             int(a.GetIsAromatic()), 0 if a.IsInRing() else int(a.GetChiralTag())) for a in mol.GetAtoms()]


def _bonds(mol: Any) -> list[tuple]:
    return [(b.GetBeginAtomIdx(), b.GetEndAtomIdx(), int(b.GetBondType()), b.GetBondTypeAsDouble(),
             int(b.GetIsAromatic()), int(b.GetIsConjugated()), int(b.IsInRing()), int(b.GetStereo()))
            for b in mol.GetBonds()]


def _ring_list(mol: Any) -> list[list[int]]:
    rings: list[list[int]] = [[] for _ in range(mol.GetNumAtoms())]
    for ring in mol.GetRingInfo().AtomRings():
        for i in ring:
            rings[i].append(len(ring))
    return [sorted(r) if r else [0] for r in rings]


def molecule_arrays(mols: Sequence[Any], name: str = "molecules", labels: Any = None,
                    where: Sequence[str] | None = None) -> dict[str, Any]:
    """The GraphSet fields of RDKit molecules (see the module for the features).

    :param labels: optional per-molecule labels (``graph_labels``), e.g. a target to learn
    :param where: how to name each molecule in an error (default ``molecule i``)
    """
    mols = list(mols)
    if not mols:
        raise InputError("GraphSet.from_rdkit: no molecules; it needs at least one")
    _chem()
    bad = [f"{where[i] if where else f'molecule {i}'}: " + ("not an RDKit molecule (None: did its SMILES parse?)"
                                                           if m is None else "no atoms")
           for i, m in enumerate(mols) if m is None or m.GetNumAtoms() == 0]
    if bad:
        raise InputError(_listed(bad, "molecule"))
    atoms = [_atoms(m) for m in mols]
    bonds = [_bonds(m) for m in mols]
    node_ptr = np.concatenate([[0], np.cumsum([len(a) for a in atoms])]).astype(np.int64)
    edge_ptr = np.concatenate([[0], np.cumsum([len(b) for b in bonds])]).astype(np.int64)
    a = np.asarray([row for rows in atoms for row in rows], dtype=np.float64).reshape(-1, len(ATOM_FEATURES))
    b = np.asarray([row for rows in bonds for row in rows], dtype=np.float64).reshape(-1, 8)
    shift = np.repeat(node_ptr[:-1], np.diff(edge_ptr))
    node_features = {k: a[:, j].astype(np.int64) for j, k in enumerate(ATOM_FEATURES)}
    node_features["ring_list"] = sequence_array([r for m in mols for r in _ring_list(m)], "ring_list")
    edge_features = {k: (b[:, 3 + j] if k == "order" else b[:, 3 + j].astype(np.int64))
                     for j, k in enumerate(BOND_FEATURES)}
    graph_labels = None if labels is None else np.asarray(labels)
    if graph_labels is not None and len(graph_labels) != len(mols):
        raise InputError(f"GraphSet.from_rdkit: {len(graph_labels)} labels for {len(mols)} molecules; give one per "
                         f"molecule")
    return dict(node_ptr=node_ptr, edge_ptr=edge_ptr, src=b[:, 0].astype(np.int64) + shift,
                dst=b[:, 1].astype(np.int64) + shift, directed=False,
                node_labels=node_features["atomic_number"].copy(), edge_labels=b[:, 2].astype(np.int64),
                graph_labels=graph_labels, name=name, node_features=node_features, edge_features=edge_features)


def parse_smiles(strings: Sequence[Any], where: Sequence[str] | None = None) -> list[Any]:
    """RDKit molecules of SMILES strings; every string that does not parse (or sanitize) is named
    with RDKit's reason, in one error — never dropped."""
    Chem = _chem()
    from rdkit import RDLogger

    strings = list(strings)
    mols, bad = [], []
    RDLogger.DisableLog("rdApp.*")  # RDKit's own messages are put in the error instead
    try:
        for i, s in enumerate(strings):
            at = where[i] if where else f"row {i}"
            if not isinstance(s, str) or not s.strip():
                bad.append(f"{at}: {s!r} is not a SMILES string")
                mols.append(None)
                continue
            mol = Chem.MolFromSmiles(s.strip(), sanitize=False)
            if mol is None:
                bad.append(f"{at}: {s!r} cannot be parsed as SMILES")
            else:
                try:
                    Chem.SanitizeMol(mol)
                except Exception as exc:  # RDKit raises its own types (valence, kekulization)
                    bad.append(f"{at}: {s!r} is not a valid molecule ({str(exc).strip().splitlines()[0]})")
                    mol = None
            mols.append(mol)
    finally:
        RDLogger.EnableLog("rdApp.*")
    if bad:
        raise InputError(_listed(bad, "SMILES string") + ". Fix or remove those rows")
    return mols


def _listed(bad: list[str], what: str) -> str:
    more = f"; and {len(bad) - SHOWN} more" if len(bad) > SHOWN else ""
    return f"{len(bad)} bad {what}{'s' if len(bad) > 1 else ''}: " + "; ".join(bad[:SHOWN]) + more
