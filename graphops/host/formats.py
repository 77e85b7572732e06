"""What plugins declare beside algorithms: :class:`Reader` (a graph file format) with the
:class:`ReadOptions` it is called with, and :class:`Command` (a ``graphops`` subcommand).

Both are re-exported by :mod:`graphops.host.algorithm` and offered by :mod:`graphops.plugin`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping

from graphops.host import declared
from graphops.host.declared import TARGET as _TARGET
from graphops.host.targets import Sources, target_arguments

__all__ = ["Reader", "ReadOptions", "Command"]


@dataclass(frozen=True)
class Reader:
    """A graph file format: name, file suffixes, and the ``"module:function"`` reading one file.

    The contract, one signature for every reader (checked when the registry is built; a reader
    that does not follow it is not used, and ``graphops plugins`` says why)::

        def read(path: pathlib.Path, device: graphops.Device, options: graphops.ReadOptions) -> frame

    It returns an edge frame (pandas, or cuDF when ``device`` is GPU); columns are then picked
    by name or position as the caller asks (``options.roles``). ``options.columns`` names the
    leading columns of a file without a header row. ``options.header`` and ``options.ids`` are
    for text formats: a format lists the options it honours in ``options`` (graphops' text
    formats: ``("header", "ids")``), and asking another format for them is an error before
    anything is read. A format whose graphs come as two files names a ``nodes`` function too, of
    the same signature, returning a node frame with an ``id`` column (used for
    ``read_graph(..., nodes=path)`` and YAML ``nodes:``), and may offer a convenience
    ``function``, published as ``graphops.read_<name>``. A format whose edges have a direction
    by nature (k-mers: prefix -> suffix) sets ``directed``; reading it with the other
    directedness is then an error, and leaving it out gives the format's.
    """

    name: str
    suffixes: tuple[str, ...]
    target: str
    summary: str = ""
    nodes: str | None = None
    function: str | None = None
    directed: bool | None = None  # graphs of the format are directed (True) or not (False) by nature
    options: tuple[str, ...] = ()  # the ReadOptions beyond columns it honours: "header", "ids"
    plugin: str = field(default="", compare=False)
    distribution: str = field(default="", compare=False)  # set by the registry: "name version", for messages

    def __post_init__(self) -> None:
        declared.name("reader", self.name)
        owner = f"reader {self.name!r}"
        for field_name in ("target", "nodes", "function"):  # each named as itself in the message
            declared.target(owner, field_name, getattr(self, field_name), optional=field_name != "target")
        suffixes = declared.names(owner, "suffixes", self.suffixes)
        bad = [x for x in suffixes if not re.fullmatch(r"\.[A-Za-z0-9_+-]+", x)]
        if bad:
            raise ValueError(f"{owner}: suffixes look like '.csv' (a dot, then letters or digits: the last "
                             f"suffix of a file name); got {bad[0]!r}")
        object.__setattr__(self, "suffixes", suffixes)
        declared.text(owner, "summary", self.summary)
        declared.flag(owner, "directed", self.directed, optional=True)
        object.__setattr__(self, "options", declared.names(owner, "options", self.options))
        bad = [o for o in self.options if o not in ReadOptions.TEXT]
        if bad:
            raise ValueError(f"reader {self.name!r}: options are among {list(ReadOptions.TEXT)}; got {bad}")

    def check_contract(self, sources: Any = None) -> None:
        """A :class:`ValueError` unless ``target`` (and ``nodes``) take ``(path, device, options)``
        and ``function`` exists, read from their source without importing them (``sources``: a
        :class:`graphops.host.targets.Sources` reading each module once)."""
        sources = sources or Sources()
        if self.function is not None:
            try:
                sources.check_defined(self.function)
            except ValueError as exc:
                raise ValueError(f"reader {self.name!r}: function {self.function}: {exc}") from None
        for what, target in (("target", self.target), ("nodes", self.nodes)):
            if target is None:
                continue
            args = target_arguments(target, sources)
            names = [a.arg for a in (*args.posonlyargs, *args.args)]
            required = len(names) - len(args.defaults)
            if len(names) < 3 or required > 3 or args.vararg is not None:
                raise ValueError(f"reader {self.name!r}: {what} {target} takes ({', '.join(names)}); a reader "
                                 f"takes (path, device, options) (graphops.ReadOptions)")


@dataclass(frozen=True)
class ReadOptions:
    """What the caller of a reader asked for (:class:`Reader`'s third argument).

    :param columns: names of the leading columns of a file without a header row (``None``: the
        file's own names, or ``"0"``, ``"1"``, ... without a header)
    :param header: text formats: ``"auto"`` (the first line is a header only when it cannot be
        data), ``True`` or ``False``
    :param ids: text formats: ``"auto"``, ``"integer"`` or ``"string"``
    :param roles: ``{"src": .., "dst": .., "weight": ..}`` as the caller picks them (names,
        positions or ``None``): a text reader checks and converts those columns
    """

    TEXT: ClassVar[tuple[str, ...]] = ("header", "ids")

    columns: tuple[str, ...] | None = None
    header: Any = "auto"
    ids: str = "auto"
    roles: Mapping[str, Any] = field(default_factory=dict)

    def asked(self) -> list[str]:
        """The text options given other than their defaults."""
        return [k for k, default in (("header", "auto"), ("ids", "auto")) if getattr(self, k) != default]


@dataclass(frozen=True)
class Command:
    """A subcommand a plugin adds to the ``graphops`` command line: ``graphops <name> ...``.

    :param name: the subcommand (``[a-z][a-z0-9-]*``); built-in commands keep their names
    :param summary: one line for ``graphops --help``
    :param target: ``"module:function"`` called with the parsed ``argparse.Namespace``;
        returns the exit code (imported only when the command runs)
    :param arguments: optional ``function(parser)`` adding the command's arguments to its
        ``argparse`` parser (keep it light: it runs whenever the CLI starts)
    """

    name: str
    summary: str
    target: str
    arguments: Callable[[Any], None] | None = None
    plugin: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        declared.name("command", self.name, re.compile(r"^[a-z][a-z0-9-]*$"), "[a-z][a-z0-9-]*")
        owner = f"command {self.name!r}"
        if not (isinstance(self.target, str) and _TARGET.match(self.target)):
            raise ValueError(f"command target must look like 'package.module:function'; got {self.target!r}")
        declared.text(owner, "summary", self.summary)
        if self.arguments is not None and not callable(self.arguments):
            raise TypeError(f"{owner}: arguments must be a function(parser) adding the command's arguments, or "
                            f"None; got {self.arguments!r}")
