"""``graphops jaccard-sweep``: time the hybrid backend against its CPU share, per graph, and plot it.

    graphops jaccard-sweep configs/bench/jaccard_graphs.yaml --graphs rmat18,enron --out sweep/
    graphops jaccard-sweep configs/jaccard_example.yaml --backend cpu   # one backend per graph
    graphops jaccard-sweep --plot sweep/jaccard_sweep.json        # re-plot elsewhere

For every graph named (default: every graph of the file's ``graphs:`` section), times the
hybrid backend at CPU shares 0, 5, ..., 50 % (median of ``--repeat`` runs after a warm one),
and what the heuristic chose (``cpu_share`` left out), with the GPU-only time beside it.
Writes ``jaccard_sweep.json`` and, where matplotlib is installed, ``jaccard_sweep.png`` with
one panel per graph and the chosen share marked. ``--backend cpu`` (or ``gpu``) times that
backend alone on each graph instead (the sweep needs a GPU; this does not), JSON only.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

SHARES = tuple(round(0.05 * i, 2) for i in range(11))


def _point(g: Any, repeat: int, **params: Any) -> tuple[float, dict]:
    """Median ms of the hybrid backend with ``params``, and the split it reported."""
    import graphops as go
    from graphops.plugin import timed

    outcome = go.execute_call("jaccard", g, backend="hybrid", **params)  # warm; calibrates if asked
    ms = 1e3 * timed(lambda: go.run("jaccard", g, backend="hybrid", **params), repeat=repeat).median
    return ms, dict(outcome.details["split"])


def check_request(sources: Any, names: list[str] | None, backend: str, where: str = "") -> list[str]:
    """The graphs to time (every one of the file's by default); unknown names and a sweep without a
    usable GPU are refused before any graph is read."""
    from graphops.plugin import gpu_status
    from graphops.plugin import BackendUnavailableError, InputError, choices, did_you_mean

    known = list(sources.sources)
    for name in names or ():
        if name not in known:
            raise InputError(f"graphops jaccard-sweep: no graph {name!r} in {where or sources.base}. Graphs of the file: "
                             f"{choices(known)}.{did_you_mean(name, known)}")
    usable, why = gpu_status()
    if backend in ("hybrid", "gpu") and not usable:
        what = ("sweeps the hybrid backend's CPU share, which needs" if backend == "hybrid" else
                "was asked to time the gpu backend, which needs")
        raise BackendUnavailableError(f"graphops jaccard-sweep {what} a usable GPU ({why}). On this machine, time "
                                      f"the CPU backend on each graph with --backend cpu")
    return list(names or known)


def sweep(config: str | Path, names: list[str] | None = None, repeat: int = 3,
          shares: tuple[float, ...] = SHARES, backend: str = "hybrid") -> dict[str, Any]:
    from graphops.plugin import Sources

    sources = Sources.from_file(config)
    names = check_request(sources, names, backend, str(config))
    out: dict[str, Any] = {"file": str(config), "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "backend": backend,
                           "graphs": {}}
    for name in names:
        g = sources.get(name)
        out["graphs"][name] = _shares(g, repeat, shares) if backend == "hybrid" else _one(g, repeat, backend)
        print(f"{name}: {out['graphs'][name]['summary']}", file=sys.stderr)
    return out


def _one(g: Any, repeat: int, backend: str) -> dict[str, Any]:
    import graphops as go
    from graphops.plugin import timed

    ms = 1e3 * timed(lambda: go.run("jaccard", g, backend=backend), repeat=repeat, warmup=1).median
    return {"ms": ms, "summary": f"{backend} {ms:.2f} ms (median of {repeat})"}


def _shares(g: Any, repeat: int, shares: tuple[float, ...]) -> dict[str, Any]:
    import graphops as go
    from graphops.plugin import Device
    from graphops.plugin import Pairs
    from graphops.plugin import timed

    from .common import adjacency, work_stats

    gpu_ms = 1e3 * timed(lambda: go.run("jaccard", g, backend="gpu"), repeat=repeat, warmup=1).median
    points = []
    for share in shares:
        ms, split = _point(g, repeat, cpu_share=share)
        points.append({"share": share, "actual_share": split["cpu_share"], "ms": ms})
    auto_ms, chosen = _point(g, repeat)
    pairs = Pairs.edges_of(g).index(g, Device.GPU)
    stats = work_stats(adjacency(g.csr(Device.GPU), False, False), pairs.first, pairs.second)
    return {"gpu_ms": gpu_ms, "points": points, "auto_ms": auto_ms, "chosen_share": chosen["cpu_share"],
            "reason": chosen["reason"], "stats": stats,
            "summary": f"GPU only {gpu_ms:.2f} ms; heuristic share {100 * chosen['cpu_share']:.1f}% -> "
                       f"{auto_ms:.2f} ms ({chosen['reason']})"}


def plot(data: dict[str, Any], path: str | Path) -> bool:
    """One panel per graph: time against CPU share, GPU only as a line, the chosen share marked."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    graphs = data["graphs"]
    if data.get("backend", "hybrid") != "hybrid":
        return False  # one time per graph: the JSON says it all
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


def read_sweep(path: str | Path) -> dict[str, Any]:
    """An earlier sweep's JSON (``--plot``): a one-line InputError naming the file when it is not one."""
    from graphops.plugin import InputError

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"graphops jaccard-sweep --plot {str(path)!r}: not JSON (line {exc.lineno}, column "
                         f"{exc.colno}: {exc.msg}); give the jaccard_sweep.json a sweep wrote") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"graphops jaccard-sweep --plot {str(path)!r}: not a text file ({exc.reason} at byte "
                         f"{exc.start}); give the jaccard_sweep.json a sweep wrote") from None
    hybrid = isinstance(data, dict) and data.get("backend", "hybrid") == "hybrid"
    if not (isinstance(data, dict) and isinstance(data.get("graphs"), dict) and data["graphs"]
            and isinstance(data.get("date"), str) and all(_plottable(g, hybrid) for g in data["graphs"].values())):
        raise InputError(f"graphops jaccard-sweep --plot {str(path)!r}: JSON, but not what graphops jaccard-sweep "
                         f"writes (a date and, per graph, its points, GPU time and chosen share); give the "
                         f"jaccard_sweep.json a sweep wrote")
    return data


def _plottable(graph: Any, hybrid: bool) -> bool:
    """Whether one graph's entry of a sweep's JSON has what :func:`plot` reads, as numbers (``--backend cpu``:
    a time)."""
    def numbers(mapping: Any, *keys: str) -> bool:
        return isinstance(mapping, dict) and all(
            isinstance(mapping.get(k), (int, float)) and not isinstance(mapping.get(k), bool) for k in keys)

    if not hybrid:
        return numbers(graph, "ms")
    points = graph.get("points") if isinstance(graph, dict) else None
    return (isinstance(points, list) and all(numbers(p, "actual_share", "ms") for p in points)
            and numbers(graph, "gpu_ms", "chosen_share", "auto_ms") and numbers(graph.get("stats"), "degree_gini"))


def graph_names(text: str | None) -> list[str] | None:
    """``--graphs a,b`` as names (``None``: not given, every graph of the file); one naming no graph is refused."""
    from graphops.plugin import InputError

    if text is None:
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise InputError(f"graphops jaccard-sweep --graphs {text!r} names no graph; give names separated by commas "
                         f"(--graphs rmat18,enron), or leave --graphs out to time every graph of the file")
    return names


def main(args: argparse.Namespace) -> int:
    from graphops.plugin import InputError

    if args.plot:
        data = read_sweep(args.plot)
        out = Path(args.plot).with_suffix(".png")
    else:
        if not args.config:
            raise InputError("graphops jaccard-sweep: give a pipeline file, or --plot JSON")
        names = graph_names(args.graphs)
        folder = Path(args.out)
        folder.mkdir(parents=True, exist_ok=True)
        data = sweep(args.config, names, args.repeat, backend=args.backend)
        (folder / "jaccard_sweep.json").write_text(json.dumps(data, indent=2))
        print(f"results written to {folder / 'jaccard_sweep.json'}")
        out = folder / "jaccard_sweep.png"
    if data.get("backend", "hybrid") == "hybrid":
        print(f"plot written to {out}" if plot(data, out) else "matplotlib not installed: JSON only")
    return 0
