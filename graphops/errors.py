"""Exception types shared by every part of graphops.

Bad arguments to a Python call raise the builtins ``ValueError``/``TypeError``;
the classes here add context a user needs to act: the config file and the
breadcrumb trail, the plugin and its distribution, the backend and what was tried.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Iterable, Sequence

__all__ = [
    "GraphopsError",
    "ConfigError",
    "ConfigIssue",
    "PluginError",
    "BackendUnavailableError",
    "ClusterUnavailableError",
    "ClusterWorkerLostError",
    "DeviceMemoryError",
    "MissingDependencyError",
    "InputError",
    "InputTypeError",
    "OutputError",
    "PipelineError",
    "Interrupted",
    "did_you_mean",
    "choices",
    "error_line",
]


class GraphopsError(Exception):
    """Base class of every error graphops raises on purpose.

    The command line prints these as one line; anything else reaching it is a bug and is
    shown with its traceback.
    """


class InputError(GraphopsError, ValueError):
    """Bad input: a graph, a parameter, a file's content. Still a ``ValueError`` for callers."""


class InputTypeError(GraphopsError, TypeError):
    """An argument of the wrong type (a frame where a Graph is needed, ...). Still a ``TypeError``."""


class OutputError(GraphopsError):
    """Outputs cannot be written where asked (found before any computing starts)."""


def did_you_mean(value: object, allowed: Iterable[str]) -> str:
    """Return ``" Did you mean 'x'?"`` for the closest allowed name, or ``""``."""
    if not isinstance(value, str) or len(value) > 200:  # a name is short; a long text is no misspelling
        return ""
    close = difflib.get_close_matches(value, [str(a) for a in allowed], n=1, cutoff=0.6)  # (YAML keys: any type)
    return f" Did you mean {close[0]!r}?" if close else ""


def error_line(exc: BaseException) -> str:
    """``"KeyError: 'x'"`` with the exception's notes after it, on one line (run summaries, the
    command line: a plugin's exception carries a note naming the plugin and its backend)."""
    return "; ".join([f"{type(exc).__name__}: {exc}", *(str(n) for n in getattr(exc, "__notes__", ()))])


def choices(allowed: Iterable[str]) -> str:
    """Format allowed names as ``a, b, c`` (sorted), or ``(none)``."""
    names = sorted(str(a) for a in allowed)  # (a YAML key may be a number: 5 is shown as 5)
    return ", ".join(names) if names else "(none)"


@dataclass(frozen=True)
class ConfigIssue:
    """One problem in a config file: where it is (breadcrumbs) and what is wrong."""

    where: tuple[str, ...]
    message: str

    def render(self) -> str:
        lines = [f"==> {crumb}" for crumb in self.where]
        lines.append(f"=====> {self.message}")
        return "\n".join(lines)


class ConfigError(GraphopsError, ValueError):
    """A pipeline file is invalid; carries the file and every issue found in it.

    ``str(err)`` is the cfgv-style report::

        configs/web.yaml is invalid (1 error)
        ==> At steps[0] (id='deg', algorithm='describe')
        ==> At key: backend
        =====> Unknown backend 'gpx'. Allowed: auto, cpu, gpu. Did you mean 'gpu'?
    """

    def __init__(self, file: str, issues: Sequence[ConfigIssue]):
        self.file = file
        self.issues = tuple(issues)
        super().__init__(self._render())

    def _render(self) -> str:
        n = len(self.issues)
        head = f"{self.file} is invalid ({n} error{'s' if n != 1 else ''})"
        return "\n".join([head, *(issue.render() for issue in self.issues)])


class PluginError(GraphopsError):
    """A plugin could not be loaded or registered something invalid.

    :ivar plugin: the plugin's (entry point) name
    :ivar distribution: ``"name version"`` of the distribution that ships it, if known
    """

    def __init__(self, message: str, *, plugin: str | None = None, distribution: str | None = None):
        self.plugin = plugin
        self.distribution = distribution
        super().__init__(message)


class BackendUnavailableError(GraphopsError, RuntimeError):
    """An explicitly requested backend cannot run here; the message says why and how to fix it."""


class ClusterUnavailableError(GraphopsError, ConnectionError):
    """The Dask scheduler a run was told to use does not answer; the message names it and the fix."""


class DeviceMemoryError(GraphopsError, MemoryError):
    """A part of a cluster call ran out of memory (GPU or host) on its worker; the message names
    the algorithm, the part, the worker, what it asked for when known, and the fix. Raised on the
    worker and sent back by Dask (it pickles with its message and attributes).

    :ivar algorithm: the algorithm's name
    :ivar part: the part, for people (``pairs 0:1,000``, ``Gram rows 0:250``, a task's key)
    :ivar worker: the worker's address
    :ivar requested: the bytes the failed allocation asked for, when its error said
    """

    def __init__(self, message: str, *, algorithm: str | None = None, part: str | None = None,
                 worker: str | None = None, requested: int | None = None):
        super().__init__(message)
        self.algorithm, self.part, self.worker, self.requested = algorithm, part, worker, requested

    def __reduce__(self) -> tuple:
        # Dask pickles a task's error through tblib, which rebuilds a class without __reduce__ by
        # MemoryError.__new__: refused for this mixin ("not safe"). Rebuilt by the class itself:
        return type(self), (str(self),), self.__dict__


class ClusterWorkerLostError(GraphopsError, RuntimeError):
    """Dask gave up on a task of a cluster call: the workers that ran it died (more times than
    ``distributed.scheduler.allowed-failures``); the message names the task, the worker and the fix.

    :ivar task: the task's key
    :ivar worker: the address of the last worker that died running it
    """

    def __init__(self, message: str, *, task: object = None, worker: str | None = None):
        super().__init__(message)
        self.task, self.worker = task, worker


class MissingDependencyError(GraphopsError, ImportError):
    """An optional package is needed for what was asked; the message names the extra to install."""


class PipelineError(GraphopsError):
    """A pipeline step failed; the run summary (already written) says which and why.

    :ivar summary: the :class:`graphops.pipeline.RunSummary` of the run
    :ivar step: the id of the step that failed first (``None`` when the run stopped before its steps)
    :ivar failed: the ids of every step that failed (several with ``keep_going``)
    """

    def __init__(self, message: str, *, summary: object = None, step: str | None = None,
                 failed: Sequence[str] = ()):
        self.summary = summary
        self.step = step
        self.failed = tuple(failed)
        super().__init__(message)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a pipeline run, raised after the run summary was written.

    :ivar summary: the run summary, whose interrupted step has status ``"interrupted"``
    """

    def __init__(self, message: str, *, summary: object = None):
        self.summary = summary
        super().__init__(message)


def is_user_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a problem of the input, a file or the machine, to be said in one line
    (a :class:`GraphopsError`, or an ``OSError`` about a named file), rather than a bug.

    For a :class:`PipelineError` the step's own error decides.
    """
    if isinstance(exc, PipelineError) and exc.__cause__ is not None:
        exc = exc.__cause__
    return isinstance(exc, GraphopsError) or (isinstance(exc, OSError) and bool(exc.filename))
