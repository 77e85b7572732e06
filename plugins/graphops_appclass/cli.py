"""``graphops appclass DATA_VERTEX DATA_EDGES PATTERN_VERTEX PATTERN_EDGES``: MU printed exactly as
the reference programs print it (``%e``, one value per line, row-major)."""
from __future__ import annotations

import sys
import time
from typing import Any, TextIO

import numpy as np

from graphops.plugin import InputError

__all__ = ["main", "format_mu", "write_mu"]

_LINES_PER_WRITE = 1 << 16


def format_mu(mu: np.ndarray) -> str:
    """``"%e\\n"`` of every value, row-major (C's printf and Python's ``%`` agree digit for digit)."""
    return "".join(map("%e\n".__mod__, np.asarray(mu, dtype=np.float64).ravel().tolist()))


def write_mu(mu: Any, out: TextIO) -> None:
    """Write MU in the reference format, a block of rows at a time."""
    host = mu.get() if hasattr(mu, "get") else np.asarray(mu)
    flat = host.reshape(-1)
    for lo in range(0, len(flat), _LINES_PER_WRITE):
        out.write(format_mu(flat[lo:lo + _LINES_PER_WRITE]))


def _check_pair(data: Any, pattern: Any, args: Any) -> None:
    """Problems between the two graphs, named by their files (the call would name only roles)."""
    from .params import pair_problem

    problem = pair_problem(data, pattern)
    if problem is None:
        return
    kind, *v = problem
    if kind == "features":
        what, a, b = v
        fd, fp = ((args.data_vertex, args.pattern_vertex) if what == "node"
                  else (args.data_edges, args.pattern_edges))
        raise InputError(f"{fp}: the pattern has {b} {what} features per row but {fd} has {a}; the two "
                         f"graphs must have the same {what} feature columns")
    if kind == "no_edges":
        raise InputError(f"{args.pattern_edges}: the pattern has no edges (the header says 0 rows); a "
                         f"pattern needs at least one edge")
    pn, dn = v
    raise InputError(f"{args.pattern_vertex}: the pattern has {pn} vertices, more than the data graph's "
                     f"{dn} ({args.data_vertex}); are the data and pattern files swapped?")


def main(args: Any) -> int:
    import graphops as go

    from .io import read_appclass

    t0 = time.perf_counter()
    data = read_appclass(args.data_vertex, args.data_edges)
    pattern = read_appclass(args.pattern_vertex, args.pattern_edges)
    _check_pair(data, pattern, args)
    t1 = time.perf_counter()
    done = go.execute_call("appclass", data, pattern, backend=args.backend, schedule=args.schedule)
    t2 = time.perf_counter()
    write_mu(done.result, sys.stdout)
    sys.stdout.flush()
    if args.times:
        print(f"appclass: read {t1 - t0:.3f} s, compute {done.seconds:.3f} s on {done.backend} "
              f"({done.details.get('schedule')}), print {time.perf_counter() - t2:.3f} s", file=sys.stderr)
    return 0


def example(args: Any) -> int:
    """``graphops appclass-example FOLDER``: a data graph of uniform random arcs with features and
    a pattern sampled from it, written as the four files ``graphops appclass`` reads."""
    from pathlib import Path

    import graphops as go
    from graphops.plugin import InputError

    from .io import sample_pattern, write_appclass

    if not args.folder.strip():
        raise InputError("appclass-example: an empty FOLDER names no folder; give the folder to write the four "
                         "files in")
    folder = Path(args.folder)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"appclass-example: {str(folder)!r} is a file; give a folder to write the four files in")
    sizes = (f"--nodes {args.nodes}, --edges {args.edges}, --node-features {args.node_features}, "
             f"--edge-features {args.edge_features}")
    try:  # made before the folder is: a case that cannot be made leaves nothing behind
        data = go.generate.gnm(args.nodes, args.edges, directed=True, seed=args.seed,
                               node_features=args.node_features, edge_features=args.edge_features)
        pattern = sample_pattern(data, args.pattern_nodes, args.seed)
    except InputError as exc:
        raise InputError(f"appclass-example ({sizes}): {exc}") from None
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"appclass-example: cannot create the folder {str(folder)!r} ({exc.strerror or exc}); "
                         f"give a folder you can write in") from None
    names = [folder / f"{g}.{kind}.csv" for g in ("data", "pattern") for kind in ("Vertex", "Edges")]
    write_appclass(data, names[0], names[1], args.digits)
    write_appclass(pattern, names[2], names[3], args.digits)
    print(f"wrote a data graph of {data.n_vertices:,} vertices and {data.n_edges:,} arcs and a pattern of "
          f"{pattern.n_vertices} vertices and {pattern.n_edges} arcs; run:\n  graphops appclass "
          + " ".join(str(n) for n in names))
    return 0
