"""Molecules from a file: a CSV (or TSV) whose column holds SMILES strings, read as a
:class:`~graphops.model.graphset.GraphSet` (:meth:`GraphSet.from_smiles`; the ``[chem]``
extra). A pipeline's ``graphs: {mols: {smiles: molecules.csv, column: smiles, label: active}}``
reads it. Every row that does not give a molecule is named by its line, never dropped."""
from __future__ import annotations

import os

from graphops.base.device import Device
from graphops.errors import InputError, did_you_mean
from graphops.model.graphset import GraphSet

__all__ = ["read_smiles"]


def read_smiles(path: str | os.PathLike, column: str = "smiles", label: str | None = None,
                device: Device | str = "cpu") -> GraphSet:
    """The molecules of ``path``'s ``column`` (a header row names the columns; ``.tsv`` is
    tab-separated) as a GraphSet, named after the file; ``label``: a column of per-molecule labels
    (``graph_labels``)."""
    import pandas as pd

    from graphops.io.files import file_path

    path = file_path(path, where="read_smiles")
    if not path.is_file():
        raise InputError(f"{str(path)!r}: no such SMILES file")
    try:
        frame = pd.read_csv(path, sep="\t" if path.suffix.lower() == ".tsv" else ",", dtype=str,
                            keep_default_na=False, comment=None)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read it as a table with a header row ({type(exc).__name__}: "
                         f"{str(exc).strip().splitlines()[0] if str(exc).strip() else 'empty'})") from None
    for role, name in (("column", column), ("label", label)):
        if name is not None and name not in frame.columns:
            raise InputError(f"{path}: no {role} {name!r} in its header; its columns: "
                             f"{', '.join(map(repr, frame.columns))}.{did_you_mean(name, list(frame.columns))}")
    if frame.empty:
        raise InputError(f"{path}: a header and no rows; it needs at least one molecule")
    where = [f"{path}, line {i + 2}" for i in range(len(frame))]
    labels = None
    if label is not None:
        labels = pd.to_numeric(frame[label], errors="coerce")
        bad = [f"{where[i]}: label {v!r}" for i, v in enumerate(frame[label]) if pd.isna(labels.iloc[i])]
        if bad:
            raise InputError(f"{path}: {len(bad)} label(s) are not numbers: " + "; ".join(bad[:5]))
        labels = labels.to_numpy()
        if (labels == labels.astype("int64")).all():
            labels = labels.astype("int64")
    return GraphSet.from_smiles(frame[column].tolist(), name=path.stem, labels=labels, where=where).to(device)
