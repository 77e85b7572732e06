"""Public data sets by name: small ones ship with graphops, the rest come from a local mirror.

``graphops.datasets.load("karate")`` and ``load("MUTAG")`` work on any install: they are
bundled (a few hundred KB). The other catalogued sets are read from the folder named by
``GRAPHOPS_DATA``, laid out as ``graphs/<file>`` and ``tu/<NAME>/``; without it, loading
one raises :class:`DatasetUnavailableError` saying which file to put where. In YAML a
graph source reads ``{dataset: MUTAG}``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from .errors import GraphopsError, choices, did_you_mean

__all__ = ["Dataset", "DatasetUnavailableError", "CATALOGUE", "list", "load", "path", "entry"]

_list = list  # the module defines a function named list


class DatasetUnavailableError(GraphopsError, LookupError):
    """A catalogued data set is neither bundled nor found in the ``GRAPHOPS_DATA`` mirror."""


@dataclass(frozen=True)
class Dataset:
    """One catalogue entry: where it lives (relative to a mirror), how to read it, where it is from."""

    name: str
    kind: str  # "graph" or "graphset"
    relpath: str  # inside the bundled folder and inside a mirror
    vertices: int
    edges: int
    source: str
    licence: str
    bundled: bool = False
    directed: bool = False
    read: dict = field(default_factory=dict)  # read_graph options (weight, dedupe, ...)


_SNAP = "SNAP (Stanford Large Network Dataset Collection); cite Leskovec & Krevl, 2014"
_DIMACS = "DIMACS10 / SuiteSparse Matrix Collection; cite Davis & Hu, 2011"
_TU = "TUDataset (Morris et al., 2020)"
CATALOGUE: dict[str, Dataset] = {d.name: d for d in [
    Dataset("karate", "graph", "graphs/karate.tsv", 34, 78,
            "W. W. Zachary, An information flow model for conflict and fission in small groups, "
            "J. Anthropol. Res. 33 (1977); edge list as in cuGraph's datasets", "Apache-2.0 (cuGraph)",
            bundled=True, read={"weight": "weight"}),
    Dataset("MUTAG", "graphset", "tu/MUTAG", 3371, 3721,
            f"{_TU}; Debnath et al., J. Med. Chem. 34(2) (1991)", "public research data; cite both",
            bundled=True),
    Dataset("netscience", "graph", "graphs/cugraph_netscience.csv", 1461, 2742,
            "M. E. J. Newman (2006), coauthorships in network science; cuGraph's datasets",
            "Apache-2.0 (cuGraph)", read={"weight": 2, "dedupe": True}),
    Dataset("email-Eu-core", "graph", "graphs/cugraph_email-Eu-core.csv", 1005, 25571,  # arcs, as stored
            f"{_SNAP}; cuGraph's datasets", "Apache-2.0 (cuGraph)", directed=True),
    Dataset("email-Enron", "graph", "graphs/Email-Enron.txt", 36692, 183831, _SNAP,
            "no licence stated; cite SNAP", read={"dedupe": True}),
    Dataset("facebook_combined", "graph", "graphs/facebook_combined.txt", 4039, 88234,
            f"{_SNAP} (ego-Facebook)", "no licence stated; cite SNAP"),
    Dataset("luxembourg_osm", "graph", "graphs/luxembourg_osm.edges", 114599, 119666, _DIMACS,
            "ODbL (© OpenStreetMap contributors)"),
    Dataset("delaunay_n16", "graph", "graphs/delaunay_n16.edges", 65536, 196575, _DIMACS,
            "public research data; cite DIMACS10"),
    *(Dataset(name, "graphset", f"tu/{name}", v, e, _TU, "public research data; cite TUDataset")
      for name, v, e in [("PTC_MR", 4915, 5054), ("ENZYMES", 19580, 37282), ("PROTEINS", 43471, 81044),
                         ("NCI1", 122747, 132753), ("NCI109", 122494, 132604)]),
]}


def entry(name: str) -> Dataset | None:
    """The catalogue entry called ``name`` (case-insensitive), or ``None``."""
    if name in CATALOGUE:
        return CATALOGUE[name]
    folded = {k.lower(): v for k, v in CATALOGUE.items()}
    return folded.get(str(name).lower())


def _known(name: str) -> Dataset:
    found = entry(name)
    if found is None:
        raise DatasetUnavailableError(f"Unknown data set {name!r}. Known: {choices(CATALOGUE)}."
                                      f"{did_you_mean(name, CATALOGUE)}")
    return found


def dataset_problem(name: str) -> str | None:
    """Why ``name`` cannot be a data set (an unknown name), or ``None``; availability is
    checked when it is loaded, like a GPU is checked when a step runs."""
    return None if entry(name) is not None else (
        f"Unknown data set {name!r}. Known: {choices(CATALOGUE)}.{did_you_mean(name, CATALOGUE)}")


def _bundled_root() -> Path:
    return Path(str(resources.files(__package__).joinpath("data")))


def path(name: str) -> Path:
    """Where the data set's file (or TU folder) is on this machine; a clear error if nowhere."""
    ds = _known(name)
    if ds.bundled:
        return _bundled_root() / ds.relpath
    mirror = os.environ.get("GRAPHOPS_DATA")
    if mirror and (Path(mirror) / ds.relpath).exists():
        return Path(mirror) / ds.relpath
    where = (f"GRAPHOPS_DATA={mirror!r} has no {ds.relpath!r}" if mirror
             else "GRAPHOPS_DATA is not set")
    raise DatasetUnavailableError(
        f"data set {ds.name!r} is not bundled with graphops and {where}. To use it, put its "
        f"{'folder' if ds.kind == 'graphset' else 'file'} at <mirror>/{ds.relpath} and set "
        f"GRAPHOPS_DATA=<mirror>. Origin: {ds.source}")


def load(name: str, device: str = "cpu", **options: Any) -> Any:
    """The data set as a :class:`Graph` or :class:`GraphSet` (pandas/NumPy, or cuDF/CuPy on ``gpu``).

    ``options`` override the catalogue's reading options (``directed``, ``dedupe``, ...).
    """
    ds = _known(name)
    where = path(ds.name)
    if ds.kind == "graphset":
        from .tu import read_tu

        return read_tu(where).to(device)
    from .io import read_graph

    return read_graph(where, device=device, **{"directed": ds.directed, **ds.read, **options})


def list() -> Any:  # noqa: A001 - the catalogue's natural name, as in cugraph.datasets
    """The catalogue as a pandas frame: name, kind, vertices, edges, bundled, available, source, licence."""
    import pandas as pd

    rows = []
    for ds in CATALOGUE.values():
        try:
            available = path(ds.name).exists()
        except DatasetUnavailableError:
            available = False
        rows.append({"name": ds.name, "kind": ds.kind, "vertices": ds.vertices, "edges": ds.edges,
                     "bundled": ds.bundled, "available": available, "source": ds.source,
                     "licence": ds.licence})
    return pd.DataFrame(rows, columns=_list(rows[0]))
