"""The ``graphops`` command: run, validate, plugins, bench."""
from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .errors import ConfigError, GraphopsError

__all__ = ["main"]

_USER_ERRORS = (GraphopsError, ValueError, TypeError, FileNotFoundError, PermissionError,
                IsADirectoryError)


def _table(rows: list[list[str]], title: str | None = None) -> Table:
    table = Table(title=title, show_lines=False)
    for head in rows[0]:
        table.add_column(head)
    for row in rows[1:]:
        table.add_row(*(escape(cell) for cell in row))
    return table


def cmd_run(args: argparse.Namespace, out: Console) -> int:
    from .pipeline import run_pipeline

    summary = run_pipeline(args.file, backend=args.backend, out=args.out)
    rows = [["step", "algorithm", "backend", "device", "seconds", "output", "why this backend"]]
    for s in summary.steps:
        rows.append([s.id, s.algorithm, s.backend, s.device, f"{s.seconds:.4f}", s.output or "-",
                     s.reason])
    out.print(_table(rows, title=f"{summary.pipeline}: {len(summary.steps)} step(s) in "
                                 f"{summary.seconds:.3f} s"))
    out.print(f"summary written to {summary.summary_path}")
    return 0


def cmd_validate(args: argparse.Namespace, out: Console) -> int:
    from .pipeline import load_pipeline

    failed = 0
    for file in args.files:
        try:
            loaded = load_pipeline(file)
        except ConfigError as exc:
            failed += 1
            print(f"ConfigError: {exc}", file=sys.stderr)
            continue
        out.print(f"{file}: valid ({len(loaded.model.graphs)} graph(s), {len(loaded.model.steps)} step(s))")
    return 1 if failed else 0


def plugin_rows() -> tuple[list[list[str]], list[str]]:
    """Rows (plugin, distribution, algorithm, backends, summary) and failure lines."""
    from .registry import get_registry

    reg = get_registry()
    rows = [["plugin", "distribution", "algorithm", "backends", "peers", "summary"]]
    for algo in sorted(reg.algorithms.values(), key=lambda a: a.name):
        peers = [k for k, b in algo.backends.items() if b.peer]
        rows.append([algo.plugin, reg.pm.distributions.get(algo.plugin, "?"), algo.name,
                     ", ".join(algo.own_backends()), ", ".join(peers) or "-", algo.summary])
    return rows, [str(e) for e in reg.failures.values()]


def cmd_plugins(args: argparse.Namespace, out: Console) -> int:
    from .device import gpu_status
    from .registry import get_registry

    rows, failures = plugin_rows()
    if args.json:
        keys = [h.lower() for h in rows[0]]
        print(json.dumps({"algorithms": [dict(zip(keys, r)) for r in rows[1:]],
                          "readers": sorted(get_registry().readers), "failures": failures}, indent=2))
        return 0
    out.print(_table(rows, title="graphops algorithms"))
    out.print("formats: " + ", ".join(sorted(get_registry().readers)) + ", tu")
    ok, why = gpu_status()
    out.print(f"gpu: {'usable' if ok else 'not usable'} ({why})")
    for line in failures:
        out.print(f"[red]failed plugin:[/red] {escape(line)}", markup=True, highlight=False)
    return 0


def cmd_bench(args: argparse.Namespace, out: Console) -> int:
    from .bench import markdown, rows_as_table, run_bench

    report = run_bench(args.paths or ["configs/bench"], repeat=args.repeat, warmup=args.warmup)
    if args.markdown:
        print(markdown(report))
    machine = ", ".join(f"{k}={v}" for k, v in report.machine.items())
    out.print(_table(rows_as_table(report), title=f"graphops bench {report.date} ({machine})"))
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(report.to_json())
    out.print(f"results written to {args.json}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="graphops", description="Plugin-based graph analytics on CPU and GPU")
    p.add_argument("-v", "--verbose", action="count", default=0, help="log backend choices (-vv: debug)")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a pipeline file, write its outputs, print a summary")
    r.add_argument("file")
    r.add_argument("--backend", help="override every step's backend (cpu, gpu, auto, ...)")
    r.add_argument("--out", help="folder for outputs and the summary (default: the file's output_dir)")
    v = sub.add_parser("validate", help="check pipeline files (structure and meaning) without running")
    v.add_argument("files", nargs="+")
    pl = sub.add_parser("plugins", help="list plugins, algorithms and backends")
    pl.add_argument("--json", action="store_true", help="machine-readable output")
    b = sub.add_parser("bench", help="time benchmark pipelines (default: configs/bench)")
    b.add_argument("paths", nargs="*", help="pipeline files or folders")
    b.add_argument("--repeat", type=int, help="timed runs per step (default: the file's bench.repeat)")
    b.add_argument("--warmup", type=int, help="untimed runs first (default: the file's bench.warmup)")
    b.add_argument("--json", default="bench-results.json", help="where to write the JSON results")
    b.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    return p


_COMMANDS = {"run": cmd_run, "validate": cmd_validate, "plugins": cmd_plugins, "bench": cmd_bench}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    level = logging.DEBUG if args.verbose > 1 else logging.INFO if args.verbose else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    out = Console(highlight=False, width=max(Console().width, 160))
    try:
        return _COMMANDS[args.command](args, out)
    except ConfigError as exc:
        print(f"ConfigError: {exc}", file=sys.stderr)
    except _USER_ERRORS as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
    return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
