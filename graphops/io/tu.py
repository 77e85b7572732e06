"""Reader for TU-format graph collections (``DS_A.txt``, ``DS_graph_indicator.txt``, ...)."""
from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import numpy as np

from graphops.model.graphset import GraphSet
from graphops.errors import InputError
from graphops.base.device import host_pandas

pd = host_pandas()  # the real pandas, also under cudf.pandas

__all__ = ["read_tu", "tu_problem"]

_REQUIRED = ("A", "graph_indicator")


def _table(path: Path, dtype: Any) -> np.ndarray:
    try:
        frame = pd.read_csv(path, header=None, sep=",", skipinitialspace=True, dtype=dtype,
                            engine="c")
    except (ValueError, pd.errors.ParserError) as exc:
        raise InputError(f"{path}: not a comma-separated table of {np.dtype(dtype).name} ({exc})") from None
    if frame.isna().to_numpy().any():
        raise InputError(f"{path}: has empty or NaN fields")
    values = frame.to_numpy()
    return values[:, 0] if values.shape[1] == 1 else values


def _optional(folder: Path, ds: str, part: str, dtype: Any, rows: int) -> np.ndarray | None:
    path = folder / f"{ds}_{part}.txt"
    if not path.exists():
        return None
    values = _table(path, dtype)
    if len(values) != rows:
        raise InputError(f"{path}: has {len(values)} lines; expected {rows} (one per "
                         f"{'edge line of ' + ds + '_A.txt' if part.startswith('edge') else part.split('_')[0]})")
    return values


# Every file of a TU folder the reader opens when it is there: the required ones, then the optional.
_PARTS = _REQUIRED + ("node_labels", "node_attributes", "edge_labels", "edge_attributes", "graph_labels",
                      "graph_attributes")


def tu_problem(folder: Path) -> tuple[str, Path] | None:
    """Why the TU folder ``folder`` cannot be read, found without reading it, and the file it is
    about; ``None`` when it can: a required file missing (that file does not exist), or a file the
    reader would open that is not a regular file (a folder; a FIFO or a device, which could wait
    forever or never end, a link to one included)."""
    from graphops.io.files import special_file

    ds = folder.name
    missing = [folder / f"{ds}_{p}.txt" for p in _REQUIRED if not (folder / f"{ds}_{p}.txt").exists()]
    if missing:
        return (f"TU dataset {ds!r} lacks {', '.join(m.name for m in missing)}; the folder name must match the "
                f"file prefix (DS_A.txt for folder DS)", missing[0])
    for part in _PARTS:
        path = folder / f"{ds}_{part}.txt"
        odd = "a folder" if path.is_dir() else special_file(path)
        if odd:
            return (f"TU dataset {ds!r}: {path.name} is {odd}, not a regular file; reading it could wait forever "
                    f"or never end", path)
    return None


def _locate(path: str | Path) -> tuple[Path, str]:
    from graphops.io.files import file_path

    folder = file_path(path, where="read_tu")
    if not folder.is_dir():
        raise FileNotFoundError(errno.ENOENT, "TU dataset folder not found; pass the folder that holds "
                                "DS_A.txt and DS_graph_indicator.txt", str(path))
    found = tu_problem(folder)
    if found is None:
        return folder, folder.name
    problem, about = found
    if not about.exists():
        raise FileNotFoundError(errno.ENOENT, problem, str(about))
    raise InputError(problem)


def _canonical_edges(a: np.ndarray, n: int, ds: str) -> tuple[np.ndarray, np.ndarray]:
    """Keep each undirected edge once (first line of ``u,v``/``v,u``); return (edges, line ids)."""
    if a.ndim != 2 or a.shape[1] != 2:
        raise InputError(f"{ds}_A.txt: expected two ids per line")
    if a.size and (a.min() < 1 or a.max() > n):
        raise InputError(f"{ds}_A.txt: node ids must lie in 1..{n} (the lines of "
                         f"{ds}_graph_indicator.txt); found {int(a.min())}..{int(a.max())}")
    u, v = a[:, 0] - 1, a[:, 1] - 1
    key = np.minimum(u, v) * n + np.maximum(u, v)
    _, first = np.unique(key, return_index=True)
    first.sort()
    return np.stack([u[first], v[first]], 1), first


def read_tu(path: str | Path, name: str | None = None) -> GraphSet:
    """Read a TU dataset folder (e.g. ``.../MUTAG``) into a host :class:`GraphSet`.

    Edges listed in both directions are kept once (with the label of the first line);
    node labels, edge labels, node/edge attributes and graph labels/attributes are read
    when their files exist.
    """
    folder, ds = _locate(path)
    indicator = _table(folder / f"{ds}_graph_indicator.txt", np.int64)
    n = len(indicator)
    if n and (np.any(np.diff(indicator) < 0) or indicator[0] < 1):
        raise InputError(f"{ds}_graph_indicator.txt: graph ids must be sorted and start at 1")
    n_graphs = int(indicator[-1]) if n else 0
    node_ptr = np.zeros(n_graphs + 1, np.int64)
    np.cumsum(np.bincount(indicator - 1, minlength=n_graphs), out=node_ptr[1:])
    a = _table(folder / f"{ds}_A.txt", np.int64).reshape(-1, 2)
    edges, lines = _canonical_edges(a, n, ds)
    g_src, g_dst = indicator[edges[:, 0]], indicator[edges[:, 1]]
    if np.any(g_src != g_dst):
        k = int(np.flatnonzero(g_src != g_dst)[0])
        raise InputError(f"{ds}_A.txt: edge {edges[k, 0] + 1},{edges[k, 1] + 1} joins graphs "
                         f"{g_src[k]} and {g_dst[k]}")
    order = np.argsort(g_src, kind="stable")
    edges, lines = edges[order], lines[order]
    edge_ptr = np.zeros(n_graphs + 1, np.int64)
    np.cumsum(np.bincount(g_src - 1, minlength=n_graphs), out=edge_ptr[1:])
    pick = (lambda x: None if x is None else x[lines])
    return GraphSet(
        node_ptr=node_ptr, edge_ptr=edge_ptr,
        src=np.ascontiguousarray(edges[:, 0]), dst=np.ascontiguousarray(edges[:, 1]),
        node_labels=_optional(folder, ds, "node_labels", np.int64, n),
        node_attrs=_as2d(_optional(folder, ds, "node_attributes", np.float64, n)),
        edge_labels=pick(_optional(folder, ds, "edge_labels", np.int64, len(a))),
        edge_attrs=_as2d(pick(_optional(folder, ds, "edge_attributes", np.float64, len(a)))),
        graph_labels=_optional(folder, ds, "graph_labels", np.int64, n_graphs),
        graph_attrs=_optional(folder, ds, "graph_attributes", np.float64, n_graphs),
        name=name or ds,
    )


def _as2d(values: np.ndarray | None) -> np.ndarray | None:
    if values is None:
        return None
    return np.ascontiguousarray(values.reshape(len(values), -1))
