"""Parameters of ``classify`` and what its inputs must be."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from graphops.plugin import Params, Seed

OUTPUTS = ("fold", "accuracy", "n_test")
EXTRA = "pip install 'graphops[ml]' (scikit-learn)"


class ClassifyParams(Params):
    """Cross-validated accuracy of a classifier on a Gram matrix (rows and columns: the graphs of the
    set, in order) and the set's graph labels.

    * ``classifier``: ``svc`` (scikit-learn's SVC with ``kernel="precomputed"``).
    * ``C``: the SVC's regularization (> 0).
    * ``folds``: stratified folds (2 to 1000; at most the smallest class's size), shuffled with ``seed``
      (``sklearn.model_selection.StratifiedKFold(folds, shuffle=True, random_state=seed)``), so the
      accuracies are ``cross_val_score``'s on the same matrix; a seed beyond 2**32 - 1 (NumPy's legacy
      generator's range) is first mixed down by ``numpy.random.SeedSequence``.
    * ``normalize``: divide the matrix by √(k_ii k_jj) first (the cosine-normalized kernel).

    Output: a row per fold (``fold`` "1", "2", ...) and a last row ``fold`` "mean": ``accuracy`` and
    ``n_test`` (the graphs tested; the mean row: all of them).
    """

    classifier: Literal["svc"] = "svc"
    C: float = Field(1.0, gt=0, le=1e12)
    folds: int = Field(10, ge=2, le=1000)
    seed: Seed = 0
    normalize: bool = False

    def check_declared(self, graphs: Any = None, gram: Any = None) -> None:
        import importlib.util

        if importlib.util.find_spec("sklearn") is None:
            raise ValueError(f"classify needs scikit-learn, which is not installed: {EXTRA}")

    def check_inputs(self, graphs: Any = None, gram: Any = None) -> None:
        import numpy as np

        from graphops.plugin import Device, to_device

        n = graphs.n_graphs if hasattr(graphs, "n_graphs") else len(graphs)
        if gram.shape != (n, n):
            raise ValueError(f"the Gram matrix is {gram.shape[0]} x {gram.shape[1]} and the set has {n} graphs: give "
                             f"the Gram step of this same set (a square matrix, a row and a column per graph)")
        labels = graphs.graph_labels
        if labels is None:
            raise ValueError("the graph set has no graph labels to learn: read a set that has them (a TU data set's "
                             "_graph_labels.txt, or smiles: with label: <column>)")
        k = np.asarray(to_device(gram, Device.CPU), dtype=np.float64)
        if not np.isfinite(k).all():
            raise ValueError(f"the Gram matrix holds {int((~np.isfinite(k)).sum())} values that are not finite: "
                             "check the kernel step's parameters")
        if self.normalize:
            d = np.diag(k)
            if not (d > 0).all():
                raise ValueError(f"normalize: true divides by sqrt(k_ii k_jj), and {int((d <= 0).sum())} diagonal "
                                 f"entries are not positive: give the kernel step's own normalized matrix, or drop "
                                 f"normalize")
            with np.errstate(over="ignore", invalid="ignore"):
                if not np.isfinite(k / np.sqrt(np.outer(d, d))).all():
                    raise ValueError("the normalized Gram matrix overflows (values far beyond its diagonal): check "
                                     "the kernel step's parameters")
        y = np.asarray(to_device(labels, Device.CPU))
        if y.dtype.kind == "f" and not (np.isfinite(y).all() and (y == np.round(y)).all()):
            raise ValueError(f"the graph labels are not classes: {int((~np.isfinite(y) | (y != np.round(y))).sum())} "
                             f"are not whole numbers (e.g. {float(y[~np.isfinite(y) | (y != np.round(y))][0])!r}); give "
                             f"integer or text labels")
        _, counts = np.unique(y, return_counts=True)
        if len(counts) < 2:
            raise ValueError("every graph has the same label: a classifier needs two classes at least")
        if counts.min() < self.folds:
            raise ValueError(f"folds={self.folds} but the smallest class has {int(counts.min())} graphs (stratified "
                             f"folds need one per fold): give folds: {max(2, int(counts.min()))} or fewer")
