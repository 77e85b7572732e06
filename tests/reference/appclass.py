"""Slow, literal NumPy reference of application classification (the spec's section 5, row-major,
every intermediate stored, PNNL's loop order for the MU update)."""
from __future__ import annotations

import numpy as np

DBL_MAX = np.finfo(np.float64).max


def normprob(z: np.ndarray) -> np.ndarray:
    """Column log-softmax in the reference programs' form: log(exp(z - m)) - log(sum)."""
    m = np.maximum(z.max(axis=0, initial=-np.inf), -DBL_MAX)
    e = np.exp(z - m)
    with np.errstate(divide="ignore"):
        return np.log(e) - np.log(e.sum(axis=0))


def distances(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``out[i, j] = sqrt(sum_f (y[j, f] - x[i, f])**2)``, summed over f in order from 0.0."""
    acc = np.zeros((len(x), len(y)))
    for f in range(x.shape[1]):
        d = y[None, :, f] - x[:, None, f]
        acc = acc + d * d
    return np.sqrt(acc)


def _scatter_max(floor: np.ndarray, keys: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    out = np.tile(floor, (n, 1))
    for e in range(len(keys)):
        out[keys[e]] = np.maximum(out[keys[e]], values[e])
    return out


def appclass(x, src, dst, a, y, psrc, pdst, b) -> np.ndarray:
    """MU (DV x PV) for data (features x, edges src->dst with features a) and pattern (y, psrc->pdst, b)."""
    dv, pv = len(x), len(y)
    dn = distances(y, x)
    de = distances(b, a)
    cv, mu = normprob(dn), normprob(-dn)
    ce, fe = normprob(de), normprob(-de)
    re = fe
    vr, vf = mu[:, psrc], mu[:, pdst]
    fmax = _scatter_max(vr.max(axis=0), dst, fe, dv)
    rmax = _scatter_max(vf.max(axis=0), src, re, dv)
    for _ in range(pv):
        vf = mu[:, pdst] - fmax
        vr = mu[:, psrc] - rmax
        fe = normprob(-ce + vr[src])
        re = normprob(-ce + vf[src])  # also gathered by source: a kept quirk of the reference
        fmax = _scatter_max(vr.max(axis=0), dst, fe, dv)
        rmax = _scatter_max(vf.max(axis=0), src, re, dv)
        mu = -cv
        for p in range(len(psrc)):
            mu[:, pdst[p]] += fmax[:, p]
            mu[:, psrc[p]] += rmax[:, p]
        mu = normprob(mu)
    return mu


def read(vertex_path, edge_path):
    """The reference file format, read the obvious way: (features, src, dst, edge features)."""
    def tokens(path):
        with open(path) as fh:
            t = fh.read().split()
        n, c = int(t[0]), int(t[1])
        return np.array(t[2:2 + n * c], dtype=np.float64).reshape(n, c)

    v, e = tokens(vertex_path), tokens(edge_path)
    return v[:, 1:], e[:, 0].astype(np.int64), e[:, 1].astype(np.int64), e[:, 2:]


def printed(mu: np.ndarray) -> str:
    return "".join("%e\n" % v for v in mu.ravel())
