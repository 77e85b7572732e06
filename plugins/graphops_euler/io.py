"""Graphs in and tours out for ``euler``: the generators of Eulerian graphs (random closed walks,
symmetric digraphs, de Bruijn graphs of k-mers), a reader of k-mer files into de Bruijn graphs,
and a writer that spells a tour of one back into a sequence (FASTA)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from graphops.plugin import Device, Graph, InputError, ReadOptions, device_of, host_pandas, new_frame, to_family

from .params import DeBruijn, RandomCycles

pd = host_pandas()  # the real pandas, also under cudf.pandas

__all__ = ["read_kmers", "spell", "write_fasta", "random_cycles", "symmetric", "dna", "de_bruijn"]

WIDTH = 80  # FASTA line length


def read_kmers(path: str | Path, device: Device = Device.CPU, options: ReadOptions | None = None) -> Any:
    """A k-mer file (whitespace-separated k-mers, all of one length k >= 2; lines starting
    with '#' or '>' are skipped) as the edge frame of its de Bruijn graph: ``src`` (the
    k-mer's first k-1 letters), ``dst`` (its last k-1), ``kmer``, one row per k-mer in file order."""
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


# generators ---------------------------------------------------------------------------------
def random_cycles(n: int, cycles: int, length: int, directed: bool = True, seed: int = 42,
                  device: str = "cpu") -> Graph:
    """An Eulerian multigraph: the union of ``cycles`` closed random walks of ``length`` steps
    on vertices ``0..n-1`` (each step to a uniform vertex, so self-loops and repeated edges
    happen), cycle ``j > 0`` starting at a vertex of cycle ``j - 1`` so that all edges are
    connected. ``cycles * length`` edges; every vertex balanced (even degree when undirected).

    Few long cycles make a "deep" graph, many short ones a "shallow" graph. ``device="gpu"``
    draws with CuPy and gives a cuDF graph (CuPy's random stream: other edges than the CPU's).
    """
    p = RandomCycles.check("random_cycles", n=n, cycles=cycles, length=length, directed=directed, seed=seed)
    n, cycles, length, directed, seed = p.n, p.cycles, p.length, p.directed, p.seed
    if device not in ("cpu", "gpu"):
        raise InputError(f"random_cycles: device must be 'cpu' or 'gpu'; got {device!r}")
    dev = Device.CPU if device == "cpu" else Device.GPU
    xp = dev.xp
    if dev is Device.CPU:
        rng: Any = np.random.default_rng(seed)
        integers = lambda hi, size: rng.integers(0, hi, size, dtype=np.int64)  # noqa: E731
    else:
        grng = xp.random.RandomState(seed)
        integers = lambda hi, size: grng.randint(0, hi, size, dtype=np.int64)  # noqa: E731
    walk = integers(n, (cycles, length))
    if cycles > 1 and length == 1:  # one self-loop each: all at the first cycle's vertex
        walk[1:, 0] = walk[0, 0]
    elif cycles > 1:  # cycle j starts where cycle j-1 passes: at one of its positions 1.., which keep their vertex
        walk[1:, 0] = walk[xp.arange(cycles - 1), 1 + integers(length - 1, cycles - 1)]
    src = walk.reshape(-1)
    dst = xp.roll(walk, -1, axis=1).reshape(-1)
    nodes = new_frame(dev, {"id": xp.arange(n, dtype=np.int64)})
    return Graph.from_edgelist(new_frame(dev, {"src": src, "dst": dst}), directed=directed, nodes=nodes)


def symmetric(graph: Graph) -> Graph:
    """The symmetric digraph of ``graph``: each edge ``u-v`` as the two arcs ``u→v`` and ``v→u``
    (an arc of a directed graph gets its reverse). Eulerian when the graph is connected.
    Edge rows ``2i`` and ``2i+1`` come from row ``i``; vertices without edges are left out."""
    src, dst = graph.src_index, graph.dst_index
    xp = device_of(src).xp
    both_src = xp.stack([src, dst], axis=1).reshape(-1)
    both_dst = xp.stack([dst, src], axis=1).reshape(-1)
    ids = graph.original_ids
    frame = new_frame(graph.device, {"src": ids(both_src), "dst": ids(both_dst)})
    return Graph.from_edgelist(frame, directed=True)


def dna(length: int, seed: int = 42) -> str:
    """A uniform random DNA string (A, C, G, T) of ``length`` bases."""
    if length < 1:
        raise InputError(f"dna: length must be at least 1; got {length}")
    return "".join(np.array(list("ACGT"))[np.random.default_rng(seed).integers(0, 4, length)])


def de_bruijn(sequence: str | None = None, k: int = 21, length: int = 1000, seed: int = 42,
              shuffle: bool = True) -> Graph:
    """The de Bruijn graph of a string's k-mers: vertices are (k-1)-mers (string ids), each
    k-mer ``s[i:i+k]`` an arc from its prefix to its suffix (column ``kmer``), in shuffled
    order unless ``shuffle=False``. An Euler path spells the string back when no (k-1)-mer
    repeats. Without ``sequence``, a random DNA string of ``length`` bases (:func:`dna`)."""
    p = DeBruijn.check("de_bruijn", sequence=sequence, k=k, length=length, seed=seed, shuffle=shuffle)
    sequence, k, length, seed, shuffle = p.sequence, p.k, p.length, p.seed, p.shuffle
    seq = dna(length, seed) if sequence is None else str(sequence)
    if not 2 <= k <= len(seq):
        raise InputError(f"de_bruijn: k must be in 2..len(sequence) = {len(seq)}; got {k}")
    kmers = np.array([seq[i:i + k] for i in range(len(seq) - k + 1)], dtype=object)
    if shuffle:
        kmers = kmers[np.random.default_rng([seed, 2]).permutation(len(kmers))]
    frame = pd.DataFrame({"src": [s[:-1] for s in kmers], "dst": [s[1:] for s in kmers], "kmer": kmers})
    return Graph.from_edgelist(frame, directed=True)
