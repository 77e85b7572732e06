"""The README's set-up commands are the ones CI runs, in order, and they name files that exist."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _ci_command(marker: str) -> str:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    return ci[ci.index(marker) + 1]


def test_ci_runs_both_readme_commands_in_order():
    readme = (ROOT / "README.md").read_text()
    install, tests = _ci_command("# README install command:"), _ci_command("# README test command:")
    assert f"```bash\n{install}\n```" in readme and f"```bash\n{tests}\n```" in readme
    assert readme.index(install) < readme.index(tests)
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.index(install) < ci.index(tests) and ci.count("-m venv") == 1  # one venv for both


def test_readme_example_pipeline_exists():
    readme = (ROOT / "README.md").read_text()
    assert "graphops run configs/describe_example.yaml --out out" in readme
    assert (ROOT / "configs" / "describe_example.yaml").is_file()


_FENCE = re.compile(r"(?:<!-- readme-test: skip \((?P<why>[^)]+)\) -->\n)?```(?P<lang>\w*)\n(?P<code>.*?)```", re.S)
_RUN = {"python", "bash", "sh", "console"}


def readme_blocks() -> list[tuple[int, str, str, str | None]]:
    """``(line, language, code, reason to skip or None)`` of every fenced block of the README."""
    text = (ROOT / "README.md").read_text()
    return [(text[:m.start("code")].count("\n"), m["lang"], m["code"], m["why"]) for m in _FENCE.finditer(text)]


def test_every_python_and_shell_block_runs_or_says_why_not():
    blocks = [b for b in readme_blocks() if b[1] in _RUN]
    assert len(blocks) >= 8
    for line, _, _, why in blocks:
        assert why is None or re.search(r"GPU|download|CI runs them", why), f"README.md:{line}: skipped because {why!r}"
    assert sum(why is None for *_, why in blocks) >= 6


def test_the_readme_blocks_run_on_a_cpu_machine_with_the_bundled_data(tmp_path, monkeypatch):
    """Every Python and shell block not marked, in order (Python blocks share one namespace), in a
    folder of their own beside the repository's configs and examples. The README's LocalCluster
    takes Dask's default dashboard port, which another process may hold (a second test run on the
    machine: Dask then warns and leaks a socket); here it takes a free one."""
    _free_dashboard_port(monkeypatch)
    for name in ("configs", "examples"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GRAPHOPS_DATA", raising=False)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("GRAPHOPS_DATA", None)
    namespace: dict = {"__name__": "readme"}
    for line, lang, code, why in readme_blocks():
        if lang not in _RUN or why is not None:
            continue
        if lang == "python":
            exec(compile(code, f"README.md:{line + 1}", "exec"), namespace)  # noqa: S102 - our README
        else:
            done = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=tmp_path, env=env,
                                  capture_output=True, text=True)
            assert done.returncode == 0, f"README.md:{line + 1}: {done.stderr[-2000:]}"


def _free_dashboard_port(monkeypatch) -> None:
    try:
        import distributed
    except ImportError:  # no Dask here: the README's Dask block is not run either
        return
    real = distributed.LocalCluster.__init__

    def init(self, *args, dashboard_address=":0", **kwargs):
        real(self, *args, dashboard_address=dashboard_address, **kwargs)

    monkeypatch.setattr(distributed.LocalCluster, "__init__", init)
