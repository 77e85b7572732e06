"""``classify`` on the CPU: scikit-learn's SVC on the precomputed kernel, stratified folds."""
from __future__ import annotations

from typing import Any

import numpy as np

from graphops.plugin import Device, to_device

from .params import ClassifyParams


def labels(graphs: Any) -> np.ndarray:
    """The set's graph labels (what the backend needs of the set), on the host."""
    return np.asarray(to_device(graphs.graph_labels, Device.CPU))


def run(y: np.ndarray, gram: Any, params: ClassifyParams) -> dict[str, Any]:
    """Per fold: the SVC fit on the training rows and columns, scored on the test rows against the
    training columns (as ``cross_val_score`` slices a precomputed kernel)."""
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import SVC

    k = np.asarray(to_device(gram, Device.CPU), dtype=np.float64)
    if params.normalize:
        d = np.sqrt(np.clip(np.diag(k), np.finfo(float).tiny, None))
        k = k / np.outer(d, d)
    seed = params.seed if params.seed < 2**32 else int(np.random.SeedSequence(params.seed).generate_state(1)[0])
    folds = StratifiedKFold(n_splits=params.folds, shuffle=True, random_state=seed)
    accuracy, tested = [], []
    for train, test in folds.split(k, y):
        model = SVC(kernel="precomputed", C=params.C).fit(k[np.ix_(train, train)], y[train])
        accuracy.append(float(model.score(k[np.ix_(test, train)], y[test])))
        tested.append(len(test))
    return {"fold": [str(i + 1) for i in range(len(accuracy))] + ["mean"],
            "accuracy": np.asarray(accuracy + [float(np.mean(accuracy))]),
            "n_test": np.asarray(tested + [int(sum(tested))], dtype=np.int64)}
