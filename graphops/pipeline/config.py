"""Reading a pipeline file: its YAML parsed safely (:mod:`graphops.pipeline.yamlfile`), and the
breadcrumbs of its errors (``At steps[0] (id='x', algorithm='jaccard')``, ``At key: params.q``),
for the file as a whole (``graphops.pipeline.load``) and for its ``graphs:`` section alone
(``Sources.from_file``)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from graphops.errors import ConfigError, ConfigIssue
from graphops.host.validation import format_loc
from graphops.pipeline.yamlfile import AliasBudgetError, DuplicateKeysError, load_yaml

__all__ = ["read_config", "config_error", "crumbs", "step_crumb"]


def config_error(file: str, message: str, *where: str) -> ConfigError:
    """One problem of ``file`` as a ConfigError, at the breadcrumbs ``where``."""
    return ConfigError(file, [ConfigIssue(tuple(where), message)])


def read_config(path: str | os.PathLike) -> tuple[str, Any]:
    """The file's display name and its parsed YAML; missing, unreadable or bad YAML (a syntax error,
    an alias bomb, a repeated key: :mod:`graphops.pipeline.yamlfile`) is a ConfigError."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise config_error(file, f"File not found (resolved to {str(Path(path).resolve())!r})") from None
    except (PermissionError, IsADirectoryError, UnicodeDecodeError) as exc:
        raise config_error(file, f"Cannot read the file: {exc}") from None
    try:
        return file, load_yaml(text)
    except DuplicateKeysError as exc:
        raise ConfigError(file, [ConfigIssue(crumbs(exc.data, d.where + (d.key,)), d.message)
                                 for d in exc.duplicates]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = (f"At line {mark.line + 1}, column {mark.column + 1}",) if mark else ()
        problem = getattr(exc, "problem", None) or str(exc)
        what = "" if isinstance(exc, (AliasBudgetError, yaml.constructor.ConstructorError)) else "YAML syntax error: "
        raise config_error(file, f"{what}{problem}", *where) from None
    except RecursionError:
        raise config_error(file, "The YAML is nested too deeply to read (hundreds of levels); a pipeline file "
                                 "needs a few") from None


def crumbs(data: Any, loc: tuple) -> tuple[str, ...]:
    """The breadcrumbs of a place in the file's data (a pydantic location): the step or graph, then
    the key within it."""
    loc = tuple(p for p in loc if p != "[key]")
    out: list[str] = []
    if len(loc) >= 2 and loc[0] == "steps" and isinstance(loc[1], int):
        out.append(step_crumb(data, loc[1]))
        loc = loc[2:]
    elif len(loc) >= 2 and loc[0] == "graphs":
        out.append(f"At graphs.{loc[1]}")
        loc = loc[2:]
    if loc:
        out.append(f"At key: {format_loc(loc)}")
    return tuple(out)


def step_crumb(data: Any, index: int) -> str:
    """``At steps[i] (id=..., algorithm=...)``: a step named as the file names it."""
    steps = data.get("steps") if isinstance(data, dict) else None
    step = steps[index] if isinstance(steps, list) and index < len(steps) else None
    if not isinstance(step, dict):
        return f"At steps[{index}]"
    named = [f"{k}={step[k]!r}" for k in ("id", "algorithm") if k in step]
    return f"At steps[{index}]" + (f" ({', '.join(named)})" if named else "")
