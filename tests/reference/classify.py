"""The obvious check of ``classify``: scikit-learn's own cross_val_score of an SVC on the precomputed
kernel, with the same stratified, shuffled folds."""
from __future__ import annotations

import numpy as np


def accuracies(gram, labels, C=1.0, folds=10, seed=0, normalize=False):
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.svm import SVC

    k = np.asarray(gram, dtype=np.float64)
    if normalize:
        d = np.sqrt(np.diag(k))
        k = k / np.outer(d, d)
    cv = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    return cross_val_score(SVC(kernel="precomputed", C=C), k, np.asarray(labels), cv=cv)
