"""Genome assembly's use of Euler paths: a reader of k-mer files into de Bruijn graphs and a
writer that spells a tour of one back into a sequence (FASTA)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from graphops import InputError
from graphops.base.device import Device
from graphops.model.frames import to_family

__all__ = ["read_kmers", "spell", "write_fasta"]

WIDTH = 80  # FASTA line length


def read_kmers(path: str | Path, device: Device = Device.CPU, names: Any = None) -> Any:
    """A k-mer file (whitespace-separated k-mers, all of one length k >= 2; lines starting
    with '#' or '>' are skipped) as the edge frame of its de Bruijn graph: ``src`` (the
    k-mer's first k-1 letters), ``dst`` (its last k-1), ``kmer``, one row per k-mer in file order."""
    from graphops.base.device import host_pandas

    pd = host_pandas()

    path = Path(path)
    kmers: list[str] = []
    k = None
    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, 1):
            if line.startswith(("#", ">")):
                continue
            for token in line.split():
                if k is None:
                    k = len(token)
                    if k < 2:
                        raise InputError(f"{path}:{line_no}: k-mer {token!r} has {k} letter; k-mers need at least 2")
                elif len(token) != k:
                    raise InputError(f"{path}:{line_no}: k-mer {token!r} has {len(token)} letters and the first "
                                     f"one {k}; all k-mers of a file must have the same length")
                kmers.append(token)
    if not kmers:
        raise InputError(f"{path}: no k-mers found (expected k-mers separated by spaces or new lines)")
    frame = pd.DataFrame({"src": [s[:-1] for s in kmers], "dst": [s[1:] for s in kmers], "kmer": kmers})
    return to_family(frame, device)


def spell(tour: Any) -> str:
    """The sequence a tour of a de Bruijn graph spells: its first vertex, then the last letter
    of each step's head. Vertex ids must be strings of one length (the (k-1)-mers)."""
    src, dst = (tour[c] for c in ("src", "dst"))
    src = src.to_pandas() if hasattr(src, "to_pandas") else src
    dst = dst.to_pandas() if hasattr(dst, "to_pandas") else dst
    if len(dst) == 0:
        return ""
    first = src.iloc[0]
    if not isinstance(first, str):
        raise InputError(f"spelling a sequence needs a de Bruijn graph, whose vertex ids are (k-1)-mers (strings); "
                         f"this tour's vertices are {type(first).__name__}s. Read k-mers with format: kmers")
    heads = dst.to_numpy(dtype=object)
    lengths = np.fromiter((len(h) for h in heads), np.int64, len(heads))
    if (lengths != len(first)).any():
        raise InputError("spelling a sequence needs vertex ids that are all (k-1)-mers of one length")
    return first + "".join(h[-1] for h in heads)


def write_fasta(tour: Any, path: str | Path) -> None:
    """Write :func:`spell`'s sequence as FASTA (one record, 80 letters a line)."""
    seq = spell(tour)
    name = Path(path).name.split(".")[0] or "sequence"
    with open(path, "w", encoding="ascii", errors="strict") as fh:
        fh.write(f">{name} assembled by graphops euler ({len(seq)} bases from {len(tour)} k-mers)\n")
        for i in range(0, len(seq), WIDTH):
            fh.write(seq[i:i + WIDTH] + "\n")


def read_fasta(path: str | Path) -> str:
    """The sequence of a one-record FASTA file (header lines skipped, lines joined)."""
    text = Path(path).read_text(encoding="ascii")
    return "".join(line.strip() for line in text.splitlines() if not line.startswith(">"))


