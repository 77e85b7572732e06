"""The ``graphops`` command: run, validate, plugins, bench, and the commands plugins add.

Errors: a :class:`graphops.GraphopsError` (bad input, a config problem, an unusable output
folder, a failed step) or an OS error about a named file is printed as one line, exit 1.
Ctrl-C prints one line, exit 130. Anything else is a bug: its traceback is printed with a
sentence saying so (``-vv`` shows tracebacks for every error).

Output: one rich console (:func:`console`) with markup, emoji codes and highlighting off, so
text from files and plugins (``:ok:``, ``[red]``) is printed as written; styles are given as
:class:`rich.text.Text` spans, never as markup in a string.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
import traceback
from pathlib import Path
from typing import Any, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from graphops.cli.options import bounded, given
from graphops.errors import ConfigError, Interrupted, PipelineError, error_line, is_user_error

__all__ = ["main", "build_parser", "console"]


def console() -> Console:
    """The command line's console: every text printed as written (no markup, no ``:name:`` emoji codes,
    no highlighting), at least 160 columns wide."""
    return Console(markup=False, emoji=False, highlight=False, width=max(Console().width, 160))


def _table(rows: list[list[str]], title: str | None = None) -> Table:
    table = Table(title=None if title is None else Text(title), show_lines=False)
    for head in rows[0]:
        table.add_column(Text(head))
    for row in rows[1:]:
        table.add_row(*(Text(cell) for cell in row))
    return table


def _print_steps(summary: Any, out: Console) -> None:
    rows = [["step", "algorithm", "status", "backend", "device", "seconds", "output", "why this backend"]]
    for s in summary.steps:
        rows.append([s.id, s.algorithm, s.status, s.backend or "-", s.device or "-", f"{s.seconds:.4f}",
                     s.output or "-", s.reason or "-"])
    out.print(_table(rows, title=f"{summary.pipeline}: {len(summary.steps)} step(s) in {summary.seconds:.3f} s"))


def cmd_run(args: argparse.Namespace, out: Console) -> int:
    from graphops.pipeline import run_pipeline
    from graphops.pipeline.overrides import parse_assignments

    try:
        summary = run_pipeline(args.file, backend=args.backend, out=args.out, keep_going=args.keep_going,
                               cluster=args.cluster, cluster_timeout=args.cluster_timeout,
                               overrides=parse_assignments(args.set or ()), cache=not args.no_cache)
    except (PipelineError, Interrupted) as exc:
        _print_steps(exc.summary, out)
        raise
    _print_steps(summary, out)
    out.print(f"summary written to {summary.summary_path}")
    return 0


def cmd_validate(args: argparse.Namespace, out: Console) -> int:
    """Each file checked; a valid one's line, then what it would do beyond its steps: writing outside
    its folder (a warning on stderr), command lines of its own (``bench.commands``)."""
    from graphops.pipeline import load_pipeline
    from graphops.pipeline.confine import trust_note
    from graphops.pipeline.overrides import parse_assignments

    failed = 0
    for file in args.files:
        try:
            loaded = load_pipeline(file, overrides=parse_assignments(args.set or ()))
        except ConfigError as exc:
            failed += 1
            print(f"ConfigError: {exc}", file=sys.stderr)
            continue
        out.print(f"{file}: valid ({len(loaded.model.graphs)} graph(s), {len(loaded.model.steps)} step(s))")
        note = trust_note(loaded)
        if note:
            print(f"warning: {note}", file=sys.stderr)
        used = {g for step in loaded.model.steps for g in step.inputs.values()}
        apart = [g for g in loaded.model.graphs if g in used and loaded.sources.kind(g) == "daskgraph"]
        if apart and loaded.model.cluster is None:  # (the run may still be given --cluster ADDRESS)
            out.print(f"  partitioned graph(s) {', '.join(map(repr, apart))}: read by a Dask cluster's workers; "
                      f"run with --cluster ADDRESS, or add a cluster: section")
        for line in _cluster_notes(loaded.model.cluster):
            out.print(f"  {line}")
        commands = (loaded.model.bench.commands if loaded.model.bench else None) or {}
        for line in (loaded.model.bench.setup if loaded.model.bench else None) or []:
            out.print(f"  bench setup: {line}  (run by graphops bench only with --commands)")
        for name, line in commands.items():
            out.print(f"  bench command {name}: {line}  (run by graphops bench only with --commands)")
    return 1 if failed else 0


def _cluster_notes(cluster: Any) -> list[str]:
    """What ``validate`` says of a file's cluster that the file alone cannot decide: a list of
    worker counts is a sweep (graphops bench), and a local cluster larger than this machine's
    cores is refused by a run here (the file may be meant for a larger machine)."""
    from graphops.engine.cluster import local_worker_limit

    if cluster is None or cluster.workers is None:
        return []
    sizes = cluster.workers if isinstance(cluster.workers, list) else [cluster.workers]
    notes = []
    if isinstance(cluster.workers, list):
        notes.append(f"cluster.workers {sizes}: a sweep, which graphops bench times one size at a time; graphops "
                     f"run takes one count")
    cores, most = local_worker_limit()
    if cluster.kind == "local" and max(sizes) > most:
        notes.append(f"cluster.workers {max(sizes)}: a local cluster starts one process per worker, and this machine "
                     f"has {cores} core(s): a run here takes {most} workers or fewer")
    return notes


def plugin_rows() -> tuple[list[list[str]], list[str]]:
    """Rows (plugin, distribution, algorithm, backends, summary) and failure lines."""
    from graphops.host.registry import get_registry

    reg = get_registry()
    rows = [["plugin", "distribution", "algorithm", "backends", "peers", "summary"]]
    for algo in sorted(reg.algorithms.values(), key=lambda a: a.name):
        peers = [k for k, b in algo.backends.items() if b.peer]
        rows.append([algo.plugin, reg.pm.distributions.get(algo.plugin, "?"), algo.name,
                     ", ".join(algo.own_backends()), ", ".join(peers) or "-", algo.summary])
    return rows, [str(e) for e in reg.failures.values()]


def cmd_plugins(args: argparse.Namespace, out: Console) -> int:
    from graphops.base.device import gpu_status
    from graphops.host.registry import get_registry

    reg = get_registry()
    rows, failures = plugin_rows()
    commands = {name: f"{c.summary} (plugin {c.plugin})" for name, c in sorted(reg.commands.items())}
    if args.json:
        keys = [h.lower() for h in rows[0]]
        print(json.dumps({"algorithms": [dict(zip(keys, r)) for r in rows[1:]], "commands": commands,
                          "readers": sorted(reg.readers), "generators": sorted(reg.generators),
                          "failures": failures}, indent=2))
        return 0
    out.print(_table(rows, title="graphops algorithms"))
    out.print("formats: " + ", ".join(sorted(reg.readers)) + ", tu")
    out.print("generators: " + ", ".join(f"{g.name} ({g.plugin})" for g in sorted(reg.generators.values(),
                                                                                 key=lambda g: g.name)))
    for name, text in commands.items():
        out.print(f"command: graphops {name} — {text}")
    ok, why = gpu_status()
    out.print(f"gpu: {'usable' if ok else 'not usable'} ({why})")
    for line in failures:
        out.print(Text.assemble(("failed plugin:", "red"), " ", line))
    return 0


def _check_targets(targets: dict[str, str | None]) -> None:
    """Each file a command will write (``--json``: path) can be written: asked before any work."""
    from graphops.errors import OutputError
    from graphops.io.outputs import file_problem
    from graphops.io.plots import plot_problem

    for option, path in targets.items():
        problem = path and (file_problem(path) or (option == "--plot" and plot_problem()))
        if problem:
            raise OutputError(f"{option} {path}: cannot write there: {problem}; nothing was run. Choose another "
                              f"path with {option} PATH")


def cmd_bench(args: argparse.Namespace, out: Console) -> int:
    from graphops.cli.bench import markdown, rows_as_table, run_bench

    _check_targets({"--json": args.json, "--plot": args.plot})
    report = run_bench(args.paths or ["configs/bench"], repeat=args.repeat, warmup=args.warmup,
                       commands=args.commands, workers=args.workers)
    if args.markdown:
        print(markdown(report))
    machine = ", ".join(f"{k}={v}" for k, v in report.machine.items())
    out.print(_table(rows_as_table(report), title=f"graphops bench {report.date} ({machine})"))
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(report.to_json())
    out.print(f"results written to {args.json}")
    if args.plot:
        from graphops.io.plots import bench_picture

        picture = bench_picture(report.rows, args.plot, title=f"graphops bench {report.date}")
        out.print(f"picture written to {picture}")
    for text in report.invalid:  # a file that did not load: its whole error, and the exit status says so
        print(text, file=sys.stderr)
    return 1 if report.invalid else 0


def cmd_cache(args: argparse.Namespace, out: Console) -> int:
    """The run cache: its entries listed, or cleared."""
    from graphops.pipeline import cache

    if args.action == "clear":
        n = cache.clear()
        out.print(f"removed {n} cached result(s) from {cache.cache_root()}")
        return 0
    found = cache.entries()
    if getattr(args, "json", False):
        print(json.dumps({"folder": str(cache.cache_root()), "entries": found}, indent=1))
        return 0
    rows = [["key", "algorithm", "backend", "bytes", "created"]]
    rows += [[e["key"][:16], str(e["algorithm"]), str(e["backend"] or "-"), f"{e['bytes']:,}", str(e["created"])]
             for e in found]
    out.print(_table(rows, title=f"run cache {cache.cache_root()}: {len(found)} result(s), "
                                 f"{sum(e['bytes'] for e in found):,} bytes"))
    return 0


def cmd_datasets(args: argparse.Namespace, out: Console) -> int:
    """``datasets list`` (the catalogue), ``fetch NAME...`` (download into the cache, print where),
    ``path NAME...`` (where each is here, downloading nothing)."""
    from graphops.io import datasets

    if args.action == "list":
        frame = datasets.list()
        if args.json:
            print(frame.to_json(orient="records", indent=2))
            return 0
        cols = ["name", "kind", "vertices", "edges", "size", "bundled", "available", "licence"]
        rows = [cols] + [[f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v) for v in r]
                         for r in frame[cols].itertuples(index=False)]
        out.print(_table(rows, title="graphops data sets (graphops datasets fetch NAME downloads one)"))
        return 0
    for name in args.names:
        print(datasets.fetch(name) if args.action == "fetch" else datasets.path(name, download=False))
    return 0


_COMMANDS = {"run": cmd_run, "validate": cmd_validate, "plugins": cmd_plugins, "bench": cmd_bench,
             "datasets": cmd_datasets, "cache": cmd_cache}


def _builtin_parsers(sub: Any) -> None:
    r = sub.add_parser("run", help="run a pipeline file, write its outputs, print a summary")
    r.add_argument("file")
    r.add_argument("--backend", type=given("--backend", "backend", "to keep each step's own"),
                   help="override every step's backend (cpu, gpu, auto, ...)")
    r.add_argument("--out", type=given("--out", "folder", "for the file's output_dir", path=True),
                   help="folder for outputs and the summary (default: the file's output_dir); every output stays "
                        "inside it, whatever the file says")
    r.add_argument("--keep-going", action="store_true", help="run the remaining steps after one fails (a step "
                   "reading a failed step's result is not run)")
    r.add_argument("--no-cache", action="store_true", help="compute every step, reading and keeping nothing in the "
                   "run cache (default: a step whose inputs, parameters, plugin and backend are unchanged is read "
                   "from it)")
    r.add_argument("--set", action="append", metavar="KEY=VALUE", help="set a value of the file, by dotted key "
                   "(steps.<id>.params.<name>=true, graphs.<name>.path=data/x.tsv); checked as the file's own; repeat "
                   "for more")
    r.add_argument("--cluster", metavar="ADDRESS", help="run the steps that split their work on this Dask scheduler "
                   "(e.g. tcp://host:8786), instead of the file's cluster: section; connected to only when a step "
                   "splits its work", type=given("--cluster", "address", "for the file's cluster: section"))
    r.add_argument("--cluster-timeout", type=bounded("--cluster-timeout", float, gt=0, le=3600), metavar="SECONDS",
                   help="how long the scheduler has to answer, above 0 and at most 3600 (default 10)")
    v = sub.add_parser("validate", help="check pipeline files (structure and meaning) without running")
    v.add_argument("files", nargs="+")
    v.add_argument("--set", action="append", metavar="KEY=VALUE", help="as for run: values set over each file's")
    pl = sub.add_parser("plugins", help="list plugins, algorithms, backends, commands and failures")
    pl.add_argument("--json", action="store_true", help="machine-readable output")
    c = sub.add_parser("cache", help="the run cache of pipeline steps: list its results, or clear it")
    acts = c.add_subparsers(dest="action", required=True)
    acts.add_parser("list", help="every cached result: key, algorithm, backend, size, when").add_argument(
        "--json", action="store_true", help="machine-readable output")
    acts.add_parser("clear", help="remove every cached result (nothing else of the folder)")
    d = sub.add_parser("datasets", help="public data sets by name: list, fetch (download once), path")
    actions = d.add_subparsers(dest="action", required=True)
    dl = actions.add_parser("list", help="the catalogue: sizes, licences, whether each is here")
    dl.add_argument("--json", action="store_true", help="machine-readable output")
    actions.add_parser("fetch", help="download data sets into the cache (checked by SHA-256); print where they "
                       "are").add_argument("names", nargs="+", metavar="NAME")
    actions.add_parser("path", help="print where data sets are here (bundled, GRAPHOPS_DATA or the cache), "
                       "downloading nothing").add_argument("names", nargs="+", metavar="NAME")
    b = sub.add_parser("bench", help="time benchmark pipelines (default: configs/bench)")
    b.add_argument("paths", nargs="*", help="pipeline files or folders")
    b.add_argument("--repeat", type=bounded("--repeat", int, ge=1, le=1000), metavar="N",
                   help="timed runs per step, 1 to 1000 (default: the file's bench.repeat)")
    b.add_argument("--warmup", type=bounded("--warmup", int, ge=0, le=100), metavar="N",
                   help="untimed runs first, 0 to 100 (default: the file's bench.warmup)")
    b.add_argument("--commands", action="store_true",
                   help="also run the files' bench.commands: programs a file names, each timed in a fresh process "
                        "(without it they are listed, not run); only for files you trust")
    b.add_argument("--workers", type=_worker_counts, metavar="N[,N...]",
                   help="cluster sizes to sweep, e.g. 1,2,4: a file with a local cluster starts one of each size "
                        "in turn for its cluster steps (default: the file's cluster.workers)")
    b.add_argument("--json", default="bench-results.json",
                   help="where to write the JSON results (default bench-results.json, in the current folder)")
    b.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    b.add_argument("--plot", nargs="?", const="bench-results.png", default=None, metavar="PNG",
                   help="also draw the times (log scale, with the memory floor) as a picture "
                        "(default bench-results.png; needs graphops[plot])")


def _worker_counts(text: str) -> list[int]:
    """``--workers 1,2,4``: cluster sizes, by the rule of the file key ``cluster.workers``."""
    from graphops.pipeline.schema import MAX_WORKERS, worker_counts_problem

    words = [w.strip() for w in text.split(",")]
    counts = [int(w) if w.isascii() and w.isdigit() else w for w in words]
    if worker_counts_problem(counts) is not None:
        raise argparse.ArgumentTypeError(f"--workers {text!r}: give distinct cluster sizes from 1 to {MAX_WORKERS}, "
                                         f"separated by commas (e.g. --workers 1,2,4)")
    return counts


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, except that a help text which is not a valid %-format (a plugin's
    "100% literal", "%e") is shown as written instead of crashing ``--help``."""

    def _expand_help(self, action: argparse.Action) -> str:
        try:
            return super()._expand_help(action)
        except (KeyError, TypeError, ValueError):
            return str(action.help)

    def _format_text(self, text: str) -> str:
        try:
            return super()._format_text(text)
        except (KeyError, TypeError, ValueError):
            return super()._format_text(text.replace("%", "%%"))


def literal(text: str) -> str:
    """``text`` for argparse's help and descriptions, which %-format what they show: every ``%`` doubled."""
    return str(text).replace("%", "%%")


class _Parser(argparse.ArgumentParser):
    """An argument parser with the crash-proof help formatter, and ``-q/--quiet`` on every command
    (before or after the command name)."""

    def __init__(self, *args: Any, **kwargs: Any):
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)
        self.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                          help="no progress lines or bars")


def build_parser(registry: Any = None) -> argparse.ArgumentParser:
    """The argument parser: built-in commands, then each command a plugin registered (a plugin
    whose arguments function raises loses its command, with a warning, not the whole CLI)."""
    p = _Parser(prog="graphops", description="Plugin-based graph analytics on CPU and GPU")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="log backend choices (-vv: debug, and tracebacks for every error)")
    sub = p.add_subparsers(dest="command", required=True)
    _builtin_parsers(sub)
    for name, cmd in sorted((registry.commands if registry is not None else {}).items()):
        if _arguments_work(name, cmd):
            text = f"{cmd.summary} (plugin {cmd.plugin})"
            cp = sub.add_parser(name, help=literal(text), description=text)
            if cmd.arguments is not None:
                cmd.arguments(cp)
    return p


def _arguments_work(name: str, cmd: Any) -> bool:
    """Whether a plugin command's arguments function runs (tried on a scratch parser first)."""
    if cmd.arguments is None:
        return True
    try:
        cmd.arguments(_Parser(prog=f"graphops {name}"))
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - one plugin's bug must not take the command line down
        logging.getLogger("graphops").warning(
            "command %r of plugin %r is left out: its arguments function raised %s: %s", name, cmd.plugin,
            type(exc).__name__, exc)
        return False
    return True


def _plugin_command(registry: Any, name: str) -> Any:
    from graphops.host.algorithm import load_target

    target = registry.commands[name].target
    return lambda args, out: int(load_target(target)(args) or 0)


def _report(exc: BaseException, verbose: int) -> int:
    """Print an error the way the module doc says; return the exit code."""
    if isinstance(exc, KeyboardInterrupt):
        summary = getattr(exc, "summary", None)
        where = f" ({exc}); run summary: {summary.summary_path}" if summary is not None else ""
        print(f"graphops: interrupted{where}", file=sys.stderr)
        return 130
    if isinstance(exc, ConfigError):
        print(f"ConfigError: {exc}", file=sys.stderr)
        return 1
    summary = getattr(exc, "summary", None)
    tail = f"; run summary: {summary.summary_path}" if summary is not None else ""
    if is_user_error(exc):
        if verbose > 1:
            traceback.print_exception(exc)
        print(f"{type(exc).__name__}: {exc}{tail}", file=sys.stderr)
        return 1
    traceback.print_exception(exc.__cause__ if isinstance(exc, PipelineError) and exc.__cause__ else exc)
    what = str(exc) if isinstance(exc, PipelineError) else error_line(exc)
    print(f"graphops: {what}{tail}\nThis is a bug (in graphops or in the plugin that ran), not a problem with "
          f"your input: please report it with the traceback above.", file=sys.stderr)
    return 1


def _registry_or_none() -> Any:
    from graphops.host.registry import get_registry

    try:
        return get_registry()
    except Exception as exc:  # the built-in commands still work, and say what went wrong
        logging.getLogger("graphops").warning("plugin commands unavailable: %s", exc)
        return None


class _Held(logging.Filter):
    """Holds the records of the ``graphops`` logger back (plugin failures found while the parser is
    built), to be shown once after the command is known: ``plugins`` lists them itself."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def filter(self, record: logging.LogRecord) -> bool:
        self.records.append(record)
        return False


def _show_deprecations() -> None:
    """graphops' own deprecations (a renamed pipeline key or input, a moved module: each says the
    release the old name goes in) are shown on the command line, once each, as one line; Python
    hides a library's DeprecationWarning from a program's user."""
    import warnings

    warnings.filterwarnings("default", category=DeprecationWarning, message=r".*(goes in|until graphops) 0\.3")
    shown = warnings.showwarning

    def one_line(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001 - warnings' API
        if category is DeprecationWarning and "0.3" in str(message):
            print(f"graphops: deprecated: {message}", file=sys.stderr)
            return
        shown(message, category, filename, lineno, file, line)

    warnings.showwarning = one_line


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 error, 130 interrupted)."""
    _show_deprecations()
    log, held = logging.getLogger("graphops"), _Held()
    log.addFilter(held)
    try:
        registry = _registry_or_none()
        args = build_parser(registry).parse_args(argv)
    except KeyboardInterrupt as exc:
        return _report(exc, 0)
    except SystemExit:  # --help, or a usage error: say what went wrong with the plugins too
        log.removeFilter(held)
        for record in held.records:
            log.handle(record)
        raise
    finally:
        log.removeFilter(held)
    level = logging.DEBUG if args.verbose > 1 else logging.INFO if args.verbose else logging.WARNING
    root = logging.getLogger()
    if not root.handlers:  # a process of its own: print records from `level` up, whoever logs them (Dask's
        shown = logging.StreamHandler()  # scheduler logs at INFO: 46 lines of a 2-worker run under --quiet)
        shown.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        shown.setLevel(level)
        root.addHandler(shown)
        root.setLevel(logging.WARNING)
    log.setLevel(level)  # graphops' own messages only: Numba's debug log is huge
    for record in held.records if args.command != "plugins" else ():
        log.handle(record)
    out = console()
    handler = _COMMANDS.get(args.command) or _plugin_command(registry, args.command)
    try:
        from graphops.base.work import quiet  # NumPy: not for --help

        with quiet() if getattr(args, "quiet", False) else contextlib.nullcontext():
            return handler(args, out)
    except (Exception, KeyboardInterrupt) as exc:
        return _report(exc, args.verbose)


def entry() -> None:
    """The ``graphops`` console script (and ``python -m graphops``): :func:`main`, then a prompt exit.

    After the exit handlers have run and the streams are flushed, the interpreter's own teardown
    (every module's objects, Numba's worker threads) has nothing left to do for a command line
    process, yet took 0.17 s of a 1.3 s ``graphops appclass`` call on a 2-core machine; so the
    process leaves at once. With a thread of the user's still running (which Python would wait
    for), or a stream that cannot be flushed, it exits the usual way."""
    import atexit
    import os
    import threading

    try:
        code = main()
    except SystemExit as exc:  # --help, a usage error
        code = exc.code
    run_handlers = getattr(atexit, "_run_exitfuncs", None)
    others = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    if run_handlers is None or others or not isinstance(code, (int, type(None))):
        sys.exit(code)
    run_handlers()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    os._exit(int(code or 0))


if __name__ == "__main__":  # pragma: no cover
    entry()
