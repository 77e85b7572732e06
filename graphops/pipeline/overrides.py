"""Values of a pipeline file set from outside (``graphops run FILE --set steps.sim.params.use_weight=true``,
``run_pipeline(..., overrides={...})``): each a dotted key path into the file, a step named by its id
(``steps.<id>...``), a graph by its name (``graphs.<name>...``), any other top-level key as itself.
The values go into the file's data before it is validated, so they meet the same checks and trails as
the file's own (``At steps[0] (id='sim', ...)``, ``At key: params.use_weight``); the run summary lists
them. On the command line a value is read as YAML reads a scalar or a flow collection (``true``, ``0.5``,
``[1, 2]``, ``{ge: 0.5}``, text)."""
from __future__ import annotations

import copy
import re
from typing import Any, Iterable, Mapping

from graphops.errors import ConfigError, ConfigIssue, InputError, InputTypeError, choices, did_you_mean

__all__ = ["parse_assignments", "apply_overrides", "check_overrides"]

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z0-9_][A-Za-z0-9_-]*)*$")
EXAMPLE = "steps.sim.params.use_weight=true"


def parse_assignments(texts: Iterable[str]) -> dict[str, Any]:
    """``KEY=VALUE`` lines (the command line's ``--set``) as ``{key: value}``, each value read as YAML;
    a later one of the same key wins."""
    from graphops.pipeline.yamlfile import load_yaml

    out: dict[str, Any] = {}
    for text in texts:
        key, eq, value = text.partition("=")
        key = key.strip()
        if not eq or not _KEY.match(key):
            raise InputError(f"--set {text!r}: give KEY=VALUE with a dotted key into the file, e.g. --set {EXAMPLE} "
                             f"or --set graphs.web.path=data/web.tsv")
        try:
            out[key] = load_yaml(value)
        except Exception as exc:  # a YAML error of the value: said with the key
            raise InputError(f"--set {key}: cannot read the value {value!r} as YAML ({str(exc).splitlines()[0]}); "
                             f"quote text with YAML's quotes, e.g. --set {key}='\"...\"'") from None
    return out


def check_overrides(function: str, overrides: Any) -> None:
    """``overrides`` is ``None`` or a mapping of dotted keys (str) to values."""
    if overrides is None:
        return
    if not isinstance(overrides, Mapping):
        raise InputTypeError(f"{function}: overrides must be a mapping of dotted keys to values, e.g. "
                             f"{{'steps.sim.params.use_weight': True}}, or None; got {type(overrides).__name__}")
    for key in overrides:
        if not isinstance(key, str) or not _KEY.match(key):
            raise InputError(f"{function}: overrides key {key!r} is not a dotted key into the file (e.g. "
                             f"'steps.sim.params.use_weight' or 'graphs.web.path')")


def apply_overrides(file: str, data: Any, overrides: Mapping[str, Any] | None) -> Any:
    """The file's data with ``overrides`` set (a copy); a key that names no step or graph of the file, or
    passes through a value that is not a mapping, is a ConfigError naming it and what the file has."""
    if not overrides:
        return data
    if not isinstance(data, dict):
        return data  # the file's own error (not a mapping) is reported as before
    data = _unshared(data)
    issues = []
    for key, value in overrides.items():
        problem = _set(data, key.split("."), value)
        if problem:
            issues.append(ConfigIssue((f"At --set {key}",), problem))
    if issues:
        raise ConfigError(file, issues)
    return data


def _unshared(value: Any) -> Any:
    """A copy in which no mapping or list is shared (a YAML alias made two places one object: a value
    set at one of them must not change the other)."""
    if isinstance(value, dict):
        return {k: _unshared(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unshared(v) for v in value]
    return copy.copy(value)


def _set(data: dict, parts: list[str], value: Any) -> str | None:
    head, rest = parts[0], parts[1:]
    node: Any = data
    if head == "steps" and rest:
        steps = data.get("steps") if isinstance(data.get("steps"), list) else []
        ids = [s.get("id") for s in steps if isinstance(s, dict)]
        if rest[0] not in ids:
            return (f"no step {rest[0]!r} in the file (a step is named by its id: steps.<id>.<key>). Steps: "
                    f"{choices([i for i in ids if isinstance(i, str)])}.{did_you_mean(rest[0], [str(i) for i in ids])}")
        node, parts = steps[ids.index(rest[0])], rest[1:]
        if not parts:
            return "name a key of the step (e.g. steps.<id>.params.<name> or steps.<id>.backend)"
    elif head == "graphs" and rest:
        graphs = data.get("graphs") if isinstance(data.get("graphs"), dict) else {}
        if rest[0] not in graphs:
            return (f"no graph {rest[0]!r} in the file. Graphs: {choices(list(graphs))}."
                    f"{did_you_mean(rest[0], list(graphs))}")
        node, parts = graphs, rest
    for i, part in enumerate(parts[:-1]):
        nxt = node.get(part) if isinstance(node, dict) else None
        if nxt is None:
            nxt = node[part] = {}
        if not isinstance(nxt, dict):
            return f"{'.'.join(parts[:i + 1])} is {nxt!r}, not a mapping, so it has no key {parts[i + 1]!r}"
        node = nxt
    node[parts[-1]] = value
    return None
