"""The README's set-up commands are the ones CI runs, in order, and they name files that exist."""
from __future__ import annotations

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
