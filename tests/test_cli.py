"""The graphops command: run, validate, plugins, bench (called in-process through main)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from graphops.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "configs" / "describe_example.yaml"


def test_run_writes_outputs_and_summary(tmp_path, capsys):
    assert main(["run", str(EXAMPLE), "--backend", "cpu", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "karate-stats" in printed and "summary written to" in printed
    summary = json.loads((tmp_path / "describe_example.summary.json").read_text())
    step = summary["steps"][0]
    assert step["backend"] == "cpu" and step["device"] == "cpu" and step["seconds"] > 0
    assert step["shape"] == [1, 9] and (tmp_path / "karate_describe.csv").exists()


def test_validate_reports_config_errors(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\ngraphs: {}\nsteps: []\n")
    assert main(["validate", str(EXAMPLE), str(bad)]) == 1
    captured = capsys.readouterr()
    assert f"{EXAMPLE}: valid (1 graph(s), 1 step(s))" in captured.out.replace("\n", "")
    assert captured.err == (f"ConfigError: {bad} is invalid (2 errors)\n==> At key: graphs\n"
                            f"=====> Needs at least 1 entry (got none)\n==> At key: steps\n"
                            f"=====> Needs at least 1 entry (got none)\n")


def test_run_reports_bad_backend_without_traceback(capsys, tmp_path):
    assert main(["run", str(EXAMPLE), "--backend", "tpu", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err == ("PipelineError: step 'karate-stats' (describe) failed: InputError: describe: unknown backend "
                   "'tpu'. Offered: auto, cpu, gpu, networkx. Did you mean 'gpu'?; run summary: "
                   f"{tmp_path / 'describe_example.summary.json'}\n")


def test_plugins_lists_describe(capsys):
    assert main(["plugins", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    row = next(a for a in info["algorithms"] if a["algorithm"] == "describe")
    assert row["backends"] == "cpu, gpu" and row["peers"] == "networkx" and row["plugin"] == "describe"
    assert main(["plugins"]) == 0
    assert "describe" in capsys.readouterr().out


def bench_on_a_path(tmp_path, steps, bench):
    """Run ``graphops bench`` on a file of ``steps`` over the path 0-1-...-200 (graph ``g``);
    the JSON report."""
    (tmp_path / "g.txt").write_text("".join(f"{i} {i + 1}\n" for i in range(200)))
    cfg = tmp_path / "b.yaml"
    cfg.write_text("version: 1\ngraphs: {g: {path: g.txt}}\nsteps:\n"
                   + "".join(f"  - {{id: s{k}, {step}, inputs: {{graph: g}}}}\n" for k, step in enumerate(steps))
                   + f"bench: {bench}\n")
    out_json = tmp_path / "r.json"
    assert main(["bench", str(cfg), "--json", str(out_json)]) == 0
    return json.loads(out_json.read_text())


def test_bench_prints_table_and_json(tmp_path, capsys):
    report = bench_on_a_path(tmp_path, ["algorithm: describe, backend: networkx", "algorithm: describe, backend: cpu"],
                             "{repeat: 3, warmup: 1, baseline: networkx}")
    assert "speed-up" in capsys.readouterr().out
    rows = {r["backend"]: r for r in report["rows"]}
    assert len(rows["cpu"]["times"]) == 3 and rows["networkx"]["speedup"] == pytest.approx(1.0)
    assert rows["cpu"]["speedup"] > 0 and rows["cpu"]["floor"] > 0 and rows["networkx"]["peer"]
    assert "cpu" in report["machine"]["copy_GBps"]


def test_bench_work_floor_is_the_lookups_at_the_measured_random_read_rate(tmp_path, capsys, monkeypatch):
    """jaccard declares its least lookups (Σ min(d_u, d_v)); the bench divides them by the
    random-read rate it measured on the row's device and prints the ratio beside the memory floor."""
    monkeypatch.setattr("graphops.cli.bench.measure_random_reads", lambda: {"cpu": 1e9})
    report = bench_on_a_path(tmp_path, ["algorithm: jaccard, backend: cpu"], "{repeat: 2, warmup: 0}")  # Σ min = 398
    assert "work floor (x over)" in capsys.readouterr().out
    (row,) = report["rows"]
    assert row["work_floor"] == pytest.approx(398 / 1e9)
    assert report["machine"]["random_reads_G_per_s"] == {"cpu": 1.0}


def test_a_row_on_gpu_workers_has_the_floors_of_its_gpus_together():
    """One GPU a worker: a row on 4 GPU workers is measured against a quarter of one GPU's floors
    (their bandwidths add up), so its distance from them reads as the one-GPU row's does (4 GPUs
    against one GPU's floor printed 0x); a CPU cluster's workers share this machine, whose floor
    stands; the printed ratio keeps a decimal below 10x."""
    from graphops.cli import bench
    from graphops.pipeline.schema import BenchSettings

    def row(backend: str, device: str, workers: int, median: float) -> bench.BenchRow:
        return bench.BenchRow("f", "case", "s", backend, False, device, median=median, floor=8e9,
                              work_floor=4e9, workers=workers)

    rows = [row("gpu", "gpu", 0, 5.26), row("gpu", "gpu", 4, 1.38), row("cpu", "cpu", 2, 9.0)]
    bench._ratios(rows, BenchSettings(baseline="gpu"), {"gpu": 2e9, "cpu": 1e9}, {"gpu": 1e9, "cpu": 1e9})
    assert [r.floor for r in rows] == [4.0, 1.0, 8.0]
    assert [r.work_floor for r in rows] == [4.0, 1.0, 4.0]
    assert bench.floor_text(rows[1], rows[1].work_floor) == "1000.000 ms (1.4x)"
    assert bench.floor_text(rows[0], rows[0].floor) == "4000.000 ms (1.3x)"
    rows[2].median = 80.0
    assert bench.floor_text(rows[2], rows[2].floor) == "8000.000 ms (10x)"


@pytest.mark.parametrize("peaks, sharing, peak, said", [
    ({}, [], None, ""),
    ({"a": 5, "b": 9}, [], 9, ""),
    ({"a": 112 << 30, "b": 14 << 30, "c": 15 << 30}, ["a"], 15 << 30,
     "peak GiB/worker leaves out the worker on this process's GPU (112.0 GiB there, this process's memory included)"),
    ({"a": 7}, ["a"], 7, "peak GiB/worker: the worker shares this process's GPU, and counts its memory too"),
])
def test_a_worker_on_this_process_gpu_is_left_out_of_the_peak(peaks, sharing, peak, said):
    """A worker sharing this process's GPU reads this process's memory too (the graph it holds,
    the results landing here): the row's peak is another worker's where there is one, and the note
    says what was left out; with only shared workers the figure is theirs, and says so."""
    from graphops.cli import bench

    assert bench._worker_peak(peaks, sharing) == (peak, said)


def test_bench_drops_each_result_before_the_next_call(tmp_path, monkeypatch):
    """As a loop over calls does, so pooled memory (device pools, page-locked host buffers) is
    reused instead of every timed call getting new memory: no call starts while an earlier
    call's result is alive."""
    import gc
    import weakref

    import graphops.cli.bench as bench

    alive, seen = [], []
    real = bench.execute

    def execute(*args, **kwargs):
        gc.collect()
        seen.append(sum(r() is not None for r in alive))
        outcome = real(*args, **kwargs)
        alive.append(weakref.ref(outcome.result))
        return outcome

    monkeypatch.setattr(bench, "execute", execute)
    report = bench_on_a_path(tmp_path, ["algorithm: describe, backend: cpu"], "{repeat: 4, warmup: 1}")
    assert len(report["rows"][0]["times"]) == 4 and seen == [0] * 5


def test_bench_times_command_lines_each_in_a_fresh_process(tmp_path):
    """bench.commands: a cold-start row per command line (after the warm-up runs), and a command
    that fails is a row saying why, not a crash."""
    from graphops.cli.bench import run_bench

    (tmp_path / "g.txt").write_text("0 1\n1 2\n")
    cfg = tmp_path / "b.yaml"
    cfg.write_text("version: 1\ngraphs: {g: {path: g.txt}}\nsteps:\n"
                   "  - {id: a, algorithm: describe, inputs: {graph: g}, backend: cpu}\n"
                   "bench:\n  repeat: 2\n  warmup: 1\n  commands:\n"
                   "    help: graphops --help\n"
                   "    write: python -c \"import pathlib, sys; pathlib.Path(sys.argv[1], 'x').write_text('1')\" {tmp}\n"
                   "    broken: graphops run no-such-file.yaml\n")
    rows = {r.step: r for r in run_bench([cfg], commands=True).rows}
    assert rows["help"].backend == "cli" and len(rows["help"].times) == 2 and rows["help"].median > 0
    assert rows["help"].case == "cold start: graphops --help"
    assert len(rows["write"].times) == 2  # {tmp} is an empty folder for each run
    assert rows["broken"].median is None and rows["broken"].note.startswith("failed: ")
    assert "no-such-file.yaml" in rows["broken"].note


def test_bench_setup_makes_the_commands_inputs_once(tmp_path):
    """bench.setup: run once before the command lines, untimed, writing into {data}, which the
    commands read; a setup that fails is every command's note, and nothing is timed."""
    from graphops.cli.bench import run_bench

    (tmp_path / "g.txt").write_text("0 1\n1 2\n")
    head = ("version: 1\ngraphs: {g: {path: g.txt}}\nsteps:\n"
            "  - {id: a, algorithm: describe, inputs: {graph: g}, backend: cpu}\n"
            "bench:\n  repeat: 2\n  warmup: 0\n")
    cfg = tmp_path / "b.yaml"
    cfg.write_text(head + "  setup:\n    - graphops appclass-example {data}/case --nodes 30 --edges 90\n"
                   "  commands:\n    appclass: graphops appclass --backend cpu {data}/case/data.Vertex.csv "
                   "{data}/case/data.Edges.csv {data}/case/pattern.Vertex.csv {data}/case/pattern.Edges.csv\n")
    rows = {r.step: r for r in run_bench([cfg], commands=True).rows}
    assert len(rows["appclass"].times) == 2, rows["appclass"].note
    cfg.write_text(head + "  setup: [graphops run no-such-file.yaml]\n  commands:\n    help: graphops --help\n")
    row = {r.step: r for r in run_bench([cfg], commands=True).rows}["help"]
    assert row.median is None and row.note.startswith("failed: the setup command 'graphops run no-such-file.yaml'")


def _registry_with(monkeypatch, plugin):
    from graphops.host.manager import make_plugin_manager
    from graphops.host.registry import Registry

    pm = make_plugin_manager(autoload=False, plugins=["describe"])
    pm.register(plugin, name="buggy")
    monkeypatch.setattr("graphops.host.registry.get_plugin_manager", lambda: pm)
    return Registry(pm)


def _bug(csr, params):
    return {"n": [1 / 0]}


class _Buggy:
    @staticmethod
    @__import__("graphops").hookimpl
    def graphops_register_algorithms():
        from graphops import Algorithm, Params

        return [Algorithm(name="buggy", params=Params, inputs=("graph",), outputs=("n",),
                          backends={"cpu": "tests.test_cli:_bug"})]


BUGGY = "version: 1\ngraphs: {g: {dataset: karate}}\nsteps: [{id: s, algorithm: buggy, inputs: {graph: g}}]\n"


def test_a_bug_shows_its_traceback_and_says_it_is_a_bug(tmp_path, capsys, monkeypatch):
    _registry_with(monkeypatch, _Buggy())
    (tmp_path / "p.yaml").write_text(BUGGY)
    assert main(["run", str(tmp_path / "p.yaml"), "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "ZeroDivisionError: division by zero" in err
    assert err.rstrip().endswith("This is a bug (in graphops or in the plugin that ran), not a problem with your "
                                 "input: please report it with the traceback above.")
    assert ("graphops: step 's' (buggy) failed: ZeroDivisionError: division by zero; graphops: raised inside backend "
            "'cpu' of algorithm 'buggy' (plugin 'buggy'): a bug of the plugin, not of the input; report it to the "
            "plugin's authors; run summary:") in err  # the plugin named on the one line too


def test_user_errors_are_one_line_and_verbose_shows_the_traceback(tmp_path, capsys):
    (tmp_path / "g.txt").write_text("1 2\n3 x\n")
    (tmp_path / "p.yaml").write_text("version: 1\ngraphs: {g: {path: g.txt}}\n"
                                     "steps: [{id: s, algorithm: describe, inputs: {graph: g}}]\n")
    assert main(["run", str(tmp_path / "p.yaml"), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"PipelineError: step 's' (describe) failed: InputError: {tmp_path / 'g.txt'}, line 2, "
                          f"column 2: dst id 'x' is not an integer")
    assert main(["-vv", "run", str(tmp_path / "p.yaml"), "--out", str(tmp_path / "o")]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_os_errors_about_named_files_are_one_line(capsys, tmp_path):
    assert main(["bench", str(tmp_path / "missing.yaml")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("FileNotFoundError: [Errno 2] no such benchmark file or folder") and err.count("\n") == 1


def test_output_folder_problems_are_one_line_before_any_work(tmp_path, capsys):
    (tmp_path / "afile").write_text("")
    assert main(["run", str(EXAMPLE), "--out", str(tmp_path / "afile" / "o")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("OutputError: cannot write outputs to ") and err.count("\n") == 1


def test_bench_runs_what_it_can_and_skips_the_rest_with_reasons(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GRAPHOPS_DATA", raising=False)
    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "a_broken.yaml").write_text("version: 1\ngraphs: {}\nsteps: []\n")
    (folder / "b_missing_data.yaml").write_text(
        "version: 1\ngraphs: {n: {dataset: NCI1}, k: {dataset: karate}}\nsteps:\n"
        "  - {id: nci, algorithm: describe, inputs: {graph: n}, backend: cpu}\n"
        "  - {id: kar, algorithm: describe, inputs: {graph: k}, backend: cpu}\n"
        "bench: {repeat: 1, warmup: 0}\n")
    (folder / "c_gpu.yaml").write_text(
        "version: 1\ngraphs: {k: {dataset: karate}}\nsteps:\n"
        "  - {id: g, algorithm: describe, inputs: {graph: k}, backend: gpu}\n"
        "bench: {repeat: 1, warmup: 0}\n")
    out = tmp_path / "r.json"
    assert main(["bench", str(folder), "--json", str(out)]) == 1  # a file did not load: its error, exit 1
    assert "a_broken.yaml is invalid (2 errors)\n==> At key: graphs" in capsys.readouterr().err
    rows = json.loads(out.read_text())["rows"]
    notes = {r["step"]: r["note"] for r in rows}
    assert rows[0]["note"].startswith("skipped: ") and "a_broken.yaml is invalid (2 errors)" in rows[0]["note"]
    assert notes["nci"].startswith("skipped: data set 'NCI1' is not bundled with graphops")
    assert notes["kar"] == "" and next(r for r in rows if r["step"] == "kar")["median"] > 0
    if not __import__("graphops").gpu_available():
        assert notes["g"].startswith("skipped: ")


_ODD = "100% literal, %e, %(prog)s, %d and {braces} [red]markup[/red]"


class _Percent:
    """A plugin whose every text that reaches the command line holds %-codes, braces and markup."""

    @staticmethod
    @__import__("graphops").hookimpl
    def graphops_register_algorithms():
        from graphops import Algorithm, Params

        return [Algorithm(name="percent", params=Params, inputs=("graph",), outputs=("n",),
                          backends={"cpu": "tests.test_cli:_bug"}, summary=_ODD)]

    @staticmethod
    @__import__("graphops").hookimpl
    def graphops_register_commands():
        from graphops import Command

        def arguments(parser):
            parser.add_argument("--level", help=_ODD)
            parser.add_argument("--fine", default=3, help="default %(default)s")

        return [Command(name="percent", summary=_ODD, target="tests.test_cli:_bug", arguments=arguments)]


class _BadArguments:
    @staticmethod
    @__import__("graphops").hookimpl
    def graphops_register_commands():
        from graphops import Command

        def arguments(parser):
            raise RuntimeError("broken arguments")

        return [Command(name="broken", summary="x", target="tests.test_cli:_bug", arguments=arguments)]


@pytest.mark.parametrize("argv", [["--help"], ["-h"], ["percent", "--help"], ["run", "--help"],
                                  ["appclass", "--help"], ["jaccard-sweep", "-h"]])
def test_help_never_crashes_on_percent_signs(monkeypatch, capsys, argv):
    from graphops.host.manager import make_plugin_manager
    from graphops.host.registry import Registry

    pm = make_plugin_manager(autoload=True)
    pm.register(_Percent(), name="percent")
    registry = Registry(pm)
    monkeypatch.setattr("graphops.cli.command._registry_or_none", lambda: registry)
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    if argv[0] in ("--help", "-h"):
        assert "100% literal, %e, %(prog)s, %d and {braces} [red]markup[/red] (plugin percent)" in out
        assert "appclass" in out and "(%e, one value per line)" in out
    if argv[0] == "percent":
        assert out.count(_ODD) == 2 and "default 3" in out  # description, --level; %(default)s still works


def test_plugin_texts_are_shown_as_written_in_plugins(monkeypatch, capsys):
    from graphops.host.manager import make_plugin_manager
    from graphops.host.registry import Registry

    pm = make_plugin_manager(autoload=False, plugins=["describe"])
    pm.register(_Percent(), name="percent")
    monkeypatch.setattr("graphops.host.registry.get_plugin_manager", lambda: pm)
    monkeypatch.setattr("graphops.cli.command._registry_or_none", lambda: Registry(pm))
    monkeypatch.setattr("graphops.host.registry._REGISTRIES", {})
    assert main(["plugins"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "{braces} [red]markup[/red]" in out


def test_a_plugin_command_whose_arguments_raise_is_left_out_with_a_warning(monkeypatch, capsys, caplog):
    from graphops.host.manager import make_plugin_manager
    from graphops.host.registry import Registry

    pm = make_plugin_manager(autoload=False, plugins=["describe"])
    pm.register(_BadArguments(), name="bad")
    monkeypatch.setattr("graphops.cli.command._registry_or_none", lambda: Registry(pm))
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "broken" not in capsys.readouterr().out
    assert "command 'broken' of plugin 'bad' is left out: its arguments function raised RuntimeError" in caplog.text


@pytest.mark.parametrize("option, target", [("--json", "afile/r.json"), ("--json", "."), ("--plot", "afile/r.png")])
def test_bench_checks_its_output_files_before_any_work(tmp_path, capsys, monkeypatch, option, target):
    (tmp_path / "afile").write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("graphops.cli.bench.run_bench", lambda *a, **k: pytest.fail("the benchmark ran"))
    assert main(["bench", "configs/bench", option, target]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"OutputError: {option} {target}: cannot write there: ") and err.count("\n") == 1
    assert err.rstrip().endswith(f"nothing was run. Choose another path with {option} PATH")


@pytest.mark.parametrize("command", [["plugins"], ["validate", str(EXAMPLE)]])
def test_each_plugin_failure_is_printed_once(tmp_path, capsys, caplog, monkeypatch, command):
    from graphops.host.manager import make_plugin_manager
    from graphops.host.registry import Registry

    (tmp_path / "broken_plugin_module.py").write_text("raise RuntimeError('boom at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    made = {}

    def registry(pm=None):
        if "r" not in made:
            made["r"] = Registry(make_plugin_manager(autoload=False, plugins=["describe", "broken_plugin_module"]))
        return made["r"]

    monkeypatch.setattr("graphops.cli.command._registry_or_none", registry)
    monkeypatch.setattr("graphops.host.registry.get_registry", registry)
    assert main(command) == 0
    captured = capsys.readouterr()
    assert (captured.out + captured.err + caplog.text).count("boom at import") == 1


@pytest.mark.parametrize("argv, code", [(["--help"], 0), (["nosuch"], 2), (["validate", str(EXAMPLE)], 0)])
def test_the_console_script_runs_exit_handlers_flushes_and_keeps_the_exit_code(argv, code):
    """``entry`` leaves without the interpreter's teardown, but only after the exit handlers ran and
    the output was flushed; usage errors keep argparse's code 2."""
    script = ("import atexit, sys\n"
              "from graphops.cli.command import entry\n"
              "atexit.register(lambda: print('handler ran', end=''))\n"
              f"sys.argv = ['graphops', *{argv!r}]\n"
              "entry()\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == code, out.stderr
    assert out.stdout.endswith("handler ran")
    assert "Traceback" not in out.stderr


# --- a file's own programs run only when asked -------------------------------------------------------

SKIPPED = ("skipped: the file's bench.commands run programs it names on this machine; pass --commands to run them "
           "(graphops bench FILE --commands) if you trust the file")


def _commanding(tmp_path):
    (tmp_path / "g.txt").write_text("0 1\n1 2\n")
    cfg = tmp_path / "b.yaml"
    cfg.write_text("version: 1\ngraphs: {g: {path: g.txt}}\nsteps:\n"
                   "  - {id: a, algorithm: describe, inputs: {graph: g}, backend: cpu}\n"
                   "bench:\n  repeat: 1\n  warmup: 0\n  commands:\n"
                   "    pwn: sh -c 'echo pwned > pwned.txt'\n")
    return cfg


def test_bench_runs_a_files_commands_only_with_commands(tmp_path, capsys):
    """``graphops bench FILE`` ran ``sh -c 'echo pwned > ...'`` from the file; now it lists the command and
    says how to run it, and ``--commands`` runs it."""
    cfg = _commanding(tmp_path)
    assert main(["bench", str(cfg), "--json", str(tmp_path / "r.json")]) == 0
    assert not (tmp_path / "pwned.txt").exists()
    (row,) = [r for r in json.loads((tmp_path / "r.json").read_text())["rows"] if r["step"] == "pwn"]
    assert row["case"] == "cold start: sh -c 'echo pwned > pwned.txt'" and row["note"] == SKIPPED
    assert row["times"] == [] and row["median"] is None
    assert main(["bench", str(cfg), "--commands", "--json", str(tmp_path / "r.json")]) == 0
    assert (tmp_path / "pwned.txt").read_text() == "pwned\n"


def test_run_bench_takes_commands_as_a_bool(tmp_path):
    from graphops.cli.bench import run_bench
    from graphops.errors import InputTypeError

    with pytest.raises(InputTypeError) as info:
        run_bench([_commanding(tmp_path)], commands="yes")
    assert str(info.value) == ("run_bench: commands must be True (run the files' bench.commands) or False; got "
                               "'yes' (str)")


def test_validate_lists_a_files_bench_commands(tmp_path, capsys):
    cfg = _commanding(tmp_path)
    assert main(["validate", str(cfg)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{cfg}: valid (1 graph(s), 1 step(s))",
        "  bench command pwn: sh -c 'echo pwned > pwned.txt'  (run by graphops bench only with --commands)"]
    assert not (tmp_path / "pwned.txt").exists()


def test_validate_and_run_warn_of_a_file_trusted_to_write_outside(tmp_path, capsys):
    (tmp_path / "pipe").mkdir()
    (tmp_path / "victim").mkdir()
    (tmp_path / "victim" / "notes.csv").write_text("precious\n")
    cfg = tmp_path / "pipe" / "p.yaml"
    cfg.write_text("version: 1\nallow_outside_output_dir: true\ngraphs: {g: {dataset: karate}}\nsteps:\n"
                   "  - {id: s, algorithm: describe, inputs: {graph: g}, backend: cpu, output: ../../victim/notes.csv}\n")
    note = (f"{cfg} sets allow_outside_output_dir: true and will write 1 file(s) outside its output folder "
            f"{str(tmp_path / 'pipe' / 'out')!r}: step 's': output {str(tmp_path / 'victim' / 'notes.csv')!r}. Run it "
            f"only if you trust it; graphops run --out DIR keeps every output inside DIR")
    assert main(["validate", str(cfg)]) == 0
    assert capsys.readouterr().err == f"warning: {note}\n"
    assert main(["run", str(cfg), "--out", str(tmp_path / "o" / "inner")]) == 1
    assert "would be written outside the output folder" in capsys.readouterr().err
    assert (tmp_path / "victim" / "notes.csv").read_text() == "precious\n"


@pytest.mark.parametrize("argv, message", [
    (["--out", ""], "argument --out: --out '' names no folder; give one, or leave --out out for the file's output_dir"),
    (["--backend", ""], "argument --backend: --backend '' names no backend; give one, or leave --backend out to keep "
                        "each step's own"),
    (["--cluster", ""], "argument --cluster: --cluster '' names no address; give one, or leave --cluster out for the "
                        "file's cluster: section"),
])
def test_run_refuses_empty_options(tmp_path, capsys, argv, message):
    """``--out ''`` wrote into the current folder, ``--backend ''`` meant no override."""
    with pytest.raises(SystemExit) as info:
        main(["run", str(EXAMPLE), *argv])
    assert info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"graphops run: error: {message}"


# --- text printed as written ---------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["evilp.back:ok:x", "[bold]b[/bold] :smile: :thumbs_up:", "[red]x", "\\[x]"])
def test_the_console_prints_user_text_as_written(monkeypatch, capsys, text):
    """``graphops plugins`` printed a failure naming 'evilp.back:ok:x' as 'evilp.back🆗x'; every table cell,
    title and line goes through the one console, which takes no markup and no emoji codes."""
    from graphops.cli.command import _table, console

    monkeypatch.setattr("graphops.cli.command.plugin_rows",
                        lambda: ([["plugin", "summary"], [text, text]], [f"plugin {text!r}: bad target {text}"]))
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert f"failed plugin: plugin {text!r}: bad target {text}" in out and out.count(text) >= 3
    printer = console()
    with printer.capture() as captured:
        printer.print(_table([["a"], [text]], title=text))
        printer.print(text)
    assert captured.get().count(text) == 3


def test_a_bench_command_that_names_no_installed_program_is_its_rows_note(tmp_path):
    from graphops.cli.bench import run_bench

    cfg = tmp_path / "b.yaml"
    cfg.write_text("version: 1\ngraphs: {g: {dataset: karate}}\nsteps: [{id: s, algorithm: describe, inputs: "
                   "{graph: g}}]\nbench:\n  repeat: 1\n  warmup: 0\n  commands: {gone: no-such-program-here x}\n")
    row = {r.step: r for r in run_bench([cfg], commands=True).rows}["gone"]
    assert row.median is None and row.note == "failed: program 'no-such-program-here': not found"


def test_validate_says_a_partitioned_graph_needs_a_cluster_at_run(tmp_path, capsys):
    (tmp_path / "a.csv").write_text("0,1\n1,2\n")
    (tmp_path / "p.yaml").write_text('version: 1\ngraphs:\n  big: {path: "*.csv", partitioned: true}\n'
                                     "steps: [{id: s, algorithm: jaccard, inputs: {graph: big}}]\n")
    assert main(["validate", str(tmp_path / "p.yaml")]) == 0
    assert "partitioned graph(s) 'big': read by a Dask cluster's workers; run with --cluster ADDRESS" in \
        capsys.readouterr().out
