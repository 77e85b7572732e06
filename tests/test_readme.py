"""The README's set-up commands are the ones CI runs, and they name files that exist."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    command = ci[ci.index("# README test command:") + 1]
    assert f"```bash\n{command}\n```" in (ROOT / "README.md").read_text()


def test_readme_example_pipeline_exists():
    readme = (ROOT / "README.md").read_text()
    assert "graphops run configs/describe_example.yaml --out out" in readme
    assert (ROOT / "configs" / "describe_example.yaml").is_file()
