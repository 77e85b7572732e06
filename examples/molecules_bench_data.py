"""Writes configs/data/molecules_bench.csv: 2,000 distinct small organic molecules for the molecule
benchmark (configs/bench/mg_kernel_molecules.yaml), made the same way every run: ring scaffolds
(benzene, pyridine, naphthalene, indole, cyclohexane, ...) with up to three substituents drawn
from common groups (methyl, hydroxyl, amine, halogens, carboxyl, nitro, ...), each checked and
written canonically by RDKit. The label ``nitro`` says whether a nitro group is present.

    python examples/molecules_bench_data.py            # needs the chem extra (RDKit)
"""
from __future__ import annotations

import csv
import random
import sys
from pathlib import Path

from rdkit import Chem, RDLogger

SCAFFOLDS = [
    "c1cc({0})cc({1})c1{2}", "c1cc({0})nc({1})c1{2}", "c1ccc2cc({0})c({1})cc2c1{2}", "C1CC({0})CC({1})C1{2}",
    "c1c({0})oc({1})c1{2}", "c1c({0})sc({1})c1{2}", "c1nc({0})nc({1})c1{2}", "c1cc(-c2ccc({0})cc2)cc({1})c1{2}",
    "c1ccc2[nH]c({0})c({1})c2c1{2}", "c1cc2ncc({0})cc2c({1})c1{2}", "O=C1CC({0})CC({1})C1{2}", "C1C({0})CN({1})C1{2}",
    "c1cc({0})c2ccccc2n1{2}{1}", "C1CC({0})OC({1})C1{2}", "c1c({0})[nH]c({1})n1{2}", "C(C({0})C({1}))C{2}",
]
GROUPS = ["", "", "C", "CC", "O", "N", "Cl", "F", "Br", "C(=O)O", "C(=O)N", "[N+](=O)[O-]", "OC", "C#N", "S",
          "C(F)(F)F", "C=O", "NC(=O)C", "CCO", "c1ccccc1"]


def molecules(count: int, seed: int = 0) -> list[tuple[str, int]]:
    rng = random.Random(seed)
    nitro = Chem.MolFromSmarts("[N+](=O)[O-]")
    seen: dict[str, int] = {}
    while len(seen) < count:
        scaffold = rng.choice(SCAFFOLDS)
        smiles = scaffold.format(*(rng.choice(GROUPS) for _ in range(3))).replace("()", "")
        mol = Chem.MolFromSmiles(smiles)
        if mol is None:
            continue
        canonical = Chem.MolToSmiles(mol)
        seen.setdefault(canonical, int(mol.HasSubstructMatch(nitro)))
    return list(seen.items())


def main(path: str = "configs/data/molecules_bench.csv", count: int = 2000) -> None:
    RDLogger.DisableLog("rdApp.*")  # invalid combinations are skipped
    rows = molecules(count)
    with Path(path).open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["smiles", "nitro"])
        out.writerows(rows)
    print(f"{path}: {len(rows)} molecules, {sum(n for _, n in rows)} with a nitro group")


if __name__ == "__main__":
    main(*sys.argv[1:2])
