"""Sweep the hybrid backend's CPU share and plot time against share, per graph.

    python -m graphops_jaccard.sweep configs/bench/jaccard_graphs.yaml --out sweep/
    python -m graphops_jaccard.sweep --plot sweep/jaccard_sweep.json     # re-plot elsewhere

For every graph that a ``hybrid`` jaccard step of the file uses, times the hybrid
backend at CPU shares 0, 5, ..., 50 % (median of ``--repeat`` runs after a warm one),
and what the heuristic chose (``cpu_share`` left out), with the GPU-only time beside
it. Writes ``jaccard_sweep.json`` and, where matplotlib is installed,
``jaccard_sweep.png`` with one panel per graph and the chosen share marked.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

SHARES = tuple(round(0.05 * i, 2) for i in range(11))


def _time(fn: Any, repeat: int) -> float:
    from graphops.device import synchronize

    fn()
    times = []
    for _ in range(repeat):
        synchronize()
        t0 = time.perf_counter()
        fn()
        synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def sweep(config: str | Path, repeat: int = 3, shares: tuple[float, ...] = SHARES) -> dict[str, Any]:
    import graphops as go
    from graphops.device import Device

    from . import hybrid
    from .common import adjacency, work_stats

    loaded = go.load_pipeline(config)
    cache = loaded.sources
    names = list(dict.fromkeys(s.inputs["graph"] for s in loaded.model.steps
                               if s.algorithm == "jaccard" and s.backend == "hybrid"))
    out: dict[str, Any] = {"file": str(config), "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "graphs": {}}
    for name in names:
        g = cache.get(name)
        gpu_ms = 1e3 * _time(lambda: go.run("jaccard", g, backend="gpu"), repeat)
        points = []
        for share in shares:
            go.run("jaccard", g, backend="hybrid", cpu_share=share)
            actual = hybrid.last_split().cpu_share
            ms = 1e3 * _time(lambda: go.run("jaccard", g, backend="hybrid", cpu_share=share), repeat)
            points.append({"share": share, "actual_share": actual, "ms": ms})
        auto_ms = 1e3 * _time(lambda: go.run("jaccard", g, backend="hybrid"), repeat)
        chosen = hybrid.last_split()
        adj = adjacency(g.csr(Device.GPU), False, False)
        planned = go.dispatch.plan(loaded.registry.algorithm("jaccard"), {"graph": g}, "cpu", {})
        first, second = planned.params.pairs_on(Device.GPU)
        out["graphs"][name] = {"gpu_ms": gpu_ms, "points": points, "auto_ms": auto_ms,
                               "chosen_share": chosen.cpu_share, "reason": chosen.reason,
                               "stats": work_stats(adj, first, second)}
        print(f"{name}: GPU only {gpu_ms:.2f} ms; heuristic share {100 * chosen.cpu_share:.1f}% "
              f"-> {auto_ms:.2f} ms ({chosen.reason})", file=sys.stderr)
    return out


def plot(data: dict[str, Any], path: str | Path) -> bool:
    """One panel per graph: time against CPU share, GPU only as a line, the chosen share marked."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    graphs = data["graphs"]
    fig, axes = plt.subplots(1, len(graphs), figsize=(3.6 * len(graphs), 3.2), squeeze=False)
    for ax, (name, g) in zip(axes[0], graphs.items()):
        xs = [100 * p["actual_share"] for p in g["points"]]
        ax.plot(xs, [p["ms"] for p in g["points"]], "o-", label="hybrid")
        ax.axhline(g["gpu_ms"], color="grey", ls="--", label="GPU only")
        ax.plot([100 * g["chosen_share"]], [g["auto_ms"]], "r*", ms=14, label="heuristic's choice")
        ax.set_title(f"{name} (Gini {g['stats']['degree_gini']:.2f})", fontsize=9)
        ax.set_xlabel("CPU share of pairs (%)")
        ax.set_ylabel("ms")
        ax.set_ylim(bottom=0)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"jaccard hybrid: time against CPU share ({data['date'][:10]})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m graphops_jaccard.sweep", description=__doc__.split("\n")[0])
    ap.add_argument("config", nargs="?", help="benchmark pipeline with hybrid jaccard steps")
    ap.add_argument("--out", default=".", help="folder for jaccard_sweep.json / .png")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--plot", metavar="JSON", help="only draw the PNG from an earlier sweep's JSON")
    args = ap.parse_args(argv)
    if args.plot:
        data = json.loads(Path(args.plot).read_text())
        out = Path(args.plot).with_suffix(".png")
    else:
        if not args.config:
            ap.error("give a config file, or --plot JSON")
        data = sweep(args.config, args.repeat)
        folder = Path(args.out)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "jaccard_sweep.json").write_text(json.dumps(data, indent=2))
        out = folder / "jaccard_sweep.png"
    print(f"plot written to {out}" if plot(data, out) else "matplotlib not installed: JSON only")
    return 0


if __name__ == "__main__":
    sys.exit(main())
