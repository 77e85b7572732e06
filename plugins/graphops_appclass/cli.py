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
