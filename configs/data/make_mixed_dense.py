"""Write the mixed dense benchmark set in TU format: 180 graphs of 10 nodes and 76 of 50 nodes.

Each graph is an Erdős–Rényi G(n, 0.5) graph with node labels in 0..3 and two continuous node
attributes, drawn from a fixed seed, so the files are reproducible:

    python configs/data/make_mixed_dense.py configs/data/mixed_dense
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np


def main(folder: str) -> None:
    rng = np.random.default_rng(20261121)
    sizes = [10] * 180 + [50] * 76
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    lines, indicator, labels, attrs, first = [], [], [], [], 1
    for g, n in enumerate(sizes, start=1):
        upper = np.triu(rng.random((n, n)) < 0.5, 1)
        for u, v in zip(*np.nonzero(upper)):
            lines += [f"{first + u}, {first + v}", f"{first + v}, {first + u}"]
        indicator += [str(g)] * n
        labels += [str(x) for x in rng.integers(0, 4, n)]
        attrs += [f"{a:.6f}, {b:.6f}" for a, b in rng.random((n, 2))]
        first += n
    name = out.name
    for part, rows in (("A", lines), ("graph_indicator", indicator), ("node_labels", labels),
                       ("node_attributes", attrs), ("graph_labels", ["0"] * len(sizes))):
        (out / f"{name}_{part}.txt").write_text("\n".join(rows) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).parent / "mixed_dense"))
