"""``graphops degree-top FILE -k 5``: a command this plugin adds to the graphops CLI."""
from __future__ import annotations


def top(args):
    import graphops as go

    degrees = go.run("degree", go.read_graph(args.file), backend="auto")
    print(degrees.sort_values(["degree", "vertex"], ascending=[False, True]).head(args.k).to_string(index=False))
    return 0
