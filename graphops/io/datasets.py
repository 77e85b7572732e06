"""Public data sets by name: small ones ship with graphops, the rest are downloaded once.

``graphops.io.datasets.load("karate")`` and ``load("MUTAG")`` work on any install: they are
bundled (a few hundred KB). The other catalogued sets are looked for, in order, in

1. the folder named by ``GRAPHOPS_DATA`` (a local mirror for offline machines), laid out as
   ``graphs/<file>`` and ``tu/<NAME>/``;
2. graphops' user cache folder (``datasets/``), where downloads land;
3. their public origin: downloaded with pooch (progress bar for downloads over a second),
   verified by SHA-256 (of the file; for a TU set, of its member files after unzipping:
   :func:`folder_sha256`), then kept in the cache. ``GRAPHOPS_OFFLINE=1`` forbids downloads.

When none works, :class:`DatasetUnavailableError` says which file to put where. In YAML a
graph source reads ``{dataset: MUTAG}``.
"""
from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from graphops.errors import GraphopsError, choices, did_you_mean

__all__ = ["Dataset", "DatasetUnavailableError", "CATALOGUE", "list", "load", "path", "entry", "fetch",
           "folder_sha256"]

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
    url: str = ""  # public origin of the bytes (a TU set: its zip)
    sha256: str = ""  # of the file; of a TU folder: folder_sha256
    size: int = 0  # bytes (a TU set: its member files)


_SNAP = "SNAP (Stanford Large Network Dataset Collection); cite Leskovec & Krevl, 2014"
_DIMACS = "DIMACS10 / SuiteSparse Matrix Collection; cite Davis & Hu, 2011"
_TU = "TUDataset (Morris et al., 2020)"
_TU_URL = "https://www.chrsmrrs.com/graphkerneldatasets"
_GH = "https://raw.githubusercontent.com"
_CUGRAPH = "528ddde979df2243bf51c116d89a0ecdf85a39ee"  # rapidsai/cugraph commit
_GRAPHDATA = f"{_GH}/fahaizhong/graphdata/1800816d861ea15a37281e19a28b2d1cf7a7c633"  # its .mtx files have no header
CATALOGUE: dict[str, Dataset] = {d.name: d for d in [
    Dataset("karate", "graph", "graphs/karate.tsv", 34, 78,
            "W. W. Zachary, An information flow model for conflict and fission in small groups, "
            "J. Anthropol. Res. 33 (1977); edge list as in cuGraph's datasets", "Apache-2.0 (cuGraph)",
            bundled=True, read={"weight": "weight"}, url=f"{_GH}/rapidsai/cugraph/{_CUGRAPH}/datasets/karate.csv",
            sha256="cafc6edd35af09de010d712433e5bf985e8129d95f4173e045d1688c7f0151db", size=718),
    Dataset("MUTAG", "graphset", "tu/MUTAG", 3371, 3721,
            f"{_TU}; Debnath et al., J. Med. Chem. 34(2) (1991)", "public research data; cite both",
            bundled=True, url=f"{_TU_URL}/MUTAG.zip",
            sha256="70958cb6ff592d7f772cdf5aef2e1c1d620386d36b5b6177ef4c9d3140623f30", size=113148),
    Dataset("netscience", "graph", "graphs/cugraph_netscience.csv", 1461, 2742,
            "M. E. J. Newman (2006), coauthorships in network science; cuGraph's datasets",
            "Apache-2.0 (cuGraph)", read={"weight": 2, "dedupe": True},
            url=f"{_GH}/rapidsai/cugraph/{_CUGRAPH}/datasets/netscience.csv",
            sha256="08f0c25802ef33742e159baba04ea0cd6831eb78ff6f9fc6c5b83b3ce0b5e8c3", size=82418),
    Dataset("email-Eu-core", "graph", "graphs/cugraph_email-Eu-core.csv", 1005, 25571,  # arcs, as stored
            f"{_SNAP}; cuGraph's datasets", "Apache-2.0 (cuGraph)", directed=True,
            url=f"{_GH}/rapidsai/cugraph/{_CUGRAPH}/datasets/email-Eu-core.csv",
            sha256="08f43790f1693742ae4944ea3c815cbd5e1e0517c5cef6fe16cf503deaaa8efe", size=294982),
    Dataset("email-Enron", "graph", "graphs/Email-Enron.txt", 36692, 183831, _SNAP,
            "no licence stated; cite SNAP", read={"dedupe": True},
            url=f"{_GH}/jlow2499/INFS-770/dbbfc6063e46ee9836303d6c04c8bc56c36f5bd8/Email-Enron.txt",
            sha256="bd55e8948fb5f6be1ab1a9677582db6f18bce3272565249bb5049496b0cd4edf", size=4049288),
    Dataset("facebook_combined", "graph", "graphs/facebook_combined.txt", 4039, 88234,
            f"{_SNAP} (ego-Facebook)", "no licence stated; cite SNAP", url=f"{_GRAPHDATA}/facebook_combined.txt",
            sha256="f41c026ed8af3cc3359f1ca5573d0605fb09ae0eefa34544b820fd8c6e2ef296", size=854362),
    Dataset("luxembourg_osm", "graph", "graphs/luxembourg_osm.edges", 114599, 119666, _DIMACS,
            "ODbL (© OpenStreetMap contributors)", url=f"{_GRAPHDATA}/luxembourg_osm.mtx",
            sha256="eb75caea9ccf73b6af18e0f72a885e37eb036c3c450c4575734b3243ae28e9b4", size=1440952),
    Dataset("delaunay_n16", "graph", "graphs/delaunay_n16.edges", 65536, 196575, _DIMACS,
            "public research data; cite DIMACS10", url=f"{_GRAPHDATA}/delaunay_n16.mtx",
            sha256="b2128f432a1543d86af01223634e2a8864932fbd096c2bb38149b034551e544e", size=2292466),
    *(Dataset(name, "graphset", f"tu/{name}", v, e, _TU, "public research data; cite TUDataset",
              url=f"{_TU_URL}/{name}.zip", sha256=sha, size=size)
      for name, v, e, sha, size in [
          ("PTC_MR", 4915, 5054, "51fc5c3f022a56177d91c53ca503cfb081007a81f14b38379192b3b292b6b318", 158197),
          ("ENZYMES", 19580, 37282, "14e99d0c4ee56de204d23f91cbf692959afc1533fc52a460fb5317426f914799", 4879816),
          ("PROTEINS", 43471, 81044, "ce46f135d8ea968acc8aa8485cf486628196c52b05ac3355093094b45fa0c73d", 2762242),
          ("NCI1", 122747, 132753, "fa46c24f67502acfa1568b94dc1cb99c3c9a446d408a899be711723b7144444e", 4077794),
          ("NCI109", 122494, 132604, "04c9ac37f4269bd7d845af6bdc7c6ba58b1ec475c0bd1d00104f97934bc6d6ac",
           4070855)]),
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
    return Path(str(resources.files("graphops").joinpath("data")))


def path(name: str, download: bool = True) -> Path:
    """Where the data set's file (or TU folder) is on this machine: bundled, in the
    ``GRAPHOPS_DATA`` mirror, in the cache, or downloaded now (unless ``download`` is False or
    ``GRAPHOPS_OFFLINE=1``); a clear error if nowhere."""
    ds = _known(name)
    here = _here(ds)
    if here is not None:
        return here
    mirror = os.environ.get("GRAPHOPS_DATA")
    offline = _offline()
    if download and not offline:
        return fetch(ds.name)
    where = (f"GRAPHOPS_DATA={mirror!r} has no {ds.relpath!r}" if mirror
             else "GRAPHOPS_DATA is not set")
    why = "GRAPHOPS_OFFLINE is set" if offline else "it is not downloaded yet"
    raise DatasetUnavailableError(
        f"data set {ds.name!r} is not bundled with graphops, {where} and {why}. To use it, {_put(ds)}, or "
        f"allow the download. Origin: {ds.source}")


def _here(ds: Dataset) -> Path | None:
    """Where the data set is on this machine without downloading: bundled, mirror, cache; or ``None``."""
    if ds.bundled:
        return _bundled_root() / ds.relpath
    mirror = os.environ.get("GRAPHOPS_DATA")
    for place in ([Path(mirror) / ds.relpath] if mirror else []) + [_cache() / ds.relpath]:
        if place.exists():
            return place
    return None


def _offline() -> bool:
    return os.environ.get("GRAPHOPS_OFFLINE", "") not in ("", "0")


def _put(ds: Dataset) -> str:
    """How to provide a data set by hand: where its file or folder goes, from where, its hash."""
    if ds.kind == "graphset":
        expected = f"from {ds.url}, unzipped; SHA-256 of its files (folder_sha256) {ds.sha256}"
    else:
        expected = f"from {ds.url}; SHA-256 {ds.sha256}"
    return (f"put its {'folder' if ds.kind == 'graphset' else 'file'} at <mirror>/{ds.relpath} and set "
            f"GRAPHOPS_DATA=<mirror> ({expected})")


def _cache() -> Path:
    from graphops.base.dirs import cache_dir

    return cache_dir("datasets")


def file_sha256(file: Path) -> str:
    digest = hashlib.sha256()
    with open(file, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def folder_sha256(folder: str | os.PathLike) -> str:
    """SHA-256 of a folder's files: of the lines ``<name> <sha256 of the file>``, sorted by name."""
    files = sorted(p for p in Path(folder).iterdir() if p.is_file())
    return hashlib.sha256("\n".join(f"{p.name} {file_sha256(p)}" for p in files).encode()).hexdigest()


def fetch(name: str) -> Path:
    """Download a catalogued data set into the cache (verified; kept only when it matches) and
    return its path there."""
    ds = _known(name)
    if ds.bundled or not ds.url or _here(ds) is not None:
        return path(ds.name, download=False)
    if _offline():
        raise DatasetUnavailableError(f"data set {ds.name!r} is not here and GRAPHOPS_OFFLINE is set, which forbids "
                                      f"downloads: unset it to fetch {ds.name!r}, or {_put(ds)}")
    import pooch

    target = _cache() / ds.relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    bar = _DownloadBar(f"downloading {ds.name}")
    try:
        if ds.kind == "graph":
            got = pooch.retrieve(ds.url, known_hash=f"sha256:{ds.sha256}", fname=target.name,
                                 path=target.parent, progressbar=bar)
            return Path(got)
        staging = target.parent / f".{ds.name}.download"
        shutil.rmtree(staging, ignore_errors=True)
        pooch.retrieve(ds.url, known_hash=None, fname=f"{ds.name}.zip", path=staging, progressbar=bar,
                       processor=pooch.Unzip(extract_dir="files"))
        folder = next((p.parent for p in (staging / "files").rglob(f"{ds.name}_A.txt")), None)
        if folder is None or folder_sha256(folder) != ds.sha256:
            got = "no folder with the set's files" if folder is None else f"SHA-256 {folder_sha256(folder)}"
            shutil.rmtree(staging, ignore_errors=True)
            raise DatasetUnavailableError(f"data set {ds.name!r} downloaded from {ds.url} does not match the "
                                          f"catalogue ({got}; expected {ds.sha256}); nothing was kept")
        os.replace(folder, target)
        shutil.rmtree(staging, ignore_errors=True)
        return target
    except DatasetUnavailableError:
        raise
    except ValueError as exc:  # pooch: the file's hash does not match (the download is deleted)
        raise DatasetUnavailableError(f"data set {ds.name!r} downloaded from {ds.url} does not match the "
                                      f"catalogue: {exc}; nothing was kept") from None
    except Exception as exc:  # noqa: BLE001 - network failures come in many types
        raise DatasetUnavailableError(
            f"data set {ds.name!r} could not be downloaded from {ds.url} ({type(exc).__name__}: {exc}). On a "
            f"machine without network, {_put(ds)}") from None
    finally:
        bar.close()


class _DownloadBar:
    """pooch's progress-bar protocol (``total``, ``update``, ``reset``, ``close``) over graphops'
    own bar: shown for downloads lasting over a second on a terminal."""

    def __init__(self, what: str):
        self.what, self.total, self.done, self.bar = what, 0, 0, None

    def update(self, n: int) -> None:
        from graphops.base.work import _Bar

        if self.bar is None:
            self.bar = _Bar(None, self.what, max(int(self.total or 0), 1))
        self.done += n
        self.bar.advance(self.done)

    def reset(self) -> None:
        self.done = 0

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def load(name: str, device: str = "cpu", registry: Any = None, **options: Any) -> Any:
    """The data set as a :class:`Graph` or :class:`GraphSet` (pandas/NumPy, or cuDF/CuPy on ``gpu``).

    ``options`` override the catalogue's reading options (``directed``, ``dedupe``, ...);
    ``registry``: whose readers read its file (a pipeline's own registry; default the process's).
    """
    ds = _known(name)
    where = path(ds.name)
    if ds.kind == "graphset":
        from graphops.io.tu import read_tu

        return read_tu(where).to(device)
    from graphops.io import read_graph

    return read_graph(where, device=device, registry=registry, **{"directed": ds.directed, **ds.read, **options})


def list() -> Any:  # noqa: A001 - the catalogue's natural name, as in cugraph.datasets
    """The catalogue as a pandas frame: name, kind, vertices, edges, bundled, available (here,
    without downloading), source, licence, size (bytes), url and sha256."""
    import pandas as pd

    rows = []
    for ds in CATALOGUE.values():
        try:
            available = path(ds.name, download=False).exists()
        except DatasetUnavailableError:
            available = False
        rows.append({"name": ds.name, "kind": ds.kind, "vertices": ds.vertices, "edges": ds.edges,
                     "bundled": ds.bundled, "available": available, "source": ds.source,
                     "licence": ds.licence, "size": ds.size, "url": ds.url, "sha256": ds.sha256})
    return pd.DataFrame(rows, columns=_list(rows[0]))
