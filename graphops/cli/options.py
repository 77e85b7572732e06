"""Command-line options checked where they are parsed: numbers with their range, texts not empty.

``type=bounded("--repeat", int, ge=1, le=1000)`` makes argparse refuse ``--repeat 0`` as it
refuses a missing argument: exit code 2 and one line naming the option, the value and the range
(``graphops bench: error: argument --repeat: --repeat '0' is not a whole number from 1 to
1000``), before any work starts and never as a traceback from deep inside. An option that
overrides a pipeline key has that key's range (a test keeps them equal; the parser does not
import the pipeline models, which would cost ``graphops --help`` a sixth of a second).
Plugins get :func:`bounded` from ``graphops.plugin`` for their commands' options.

``type=given("--out", "a folder", "for the file's output_dir")`` refuses an empty text the same
way (``--out ''`` would otherwise mean the current folder, ``--backend ''`` no override).
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["Bounds", "bounded", "given"]

_KINDS = {int: "a whole number", float: "a number"}


@dataclass(frozen=True)
class Bounds:
    """A numeric range: ``kind`` (int or float) and its limits (``None``: open on that side)."""

    kind: type = int
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None

    def holds(self, value: float) -> bool:
        """Whether ``value`` is in range (NaN never is, nor an infinite float)."""
        return ((self.kind is int or math.isfinite(value)) and (self.ge is None or value >= self.ge) and (self.gt is None or value > self.gt)
                and (self.le is None or value <= self.le) and (self.lt is None or value < self.lt))

    @property
    def text(self) -> str:
        """``a whole number from 1 to 1000``, ``a number above 0 and at most 3600``, ..."""
        if self.ge is not None and self.le is not None:
            return f"{_KINDS[self.kind]} from {_number(self.ge)} to {_number(self.le)}"
        low = f"from {_number(self.ge)}" if self.ge is not None else f"above {_number(self.gt)}" if self.gt is not None else ""
        high = f"at most {_number(self.le)}" if self.le is not None else f"below {_number(self.lt)}" if self.lt is not None \
            else ""
        return " ".join([_KINDS[self.kind], " and ".join(p for p in (low, high) if p)]).rstrip()

    def parse(self, text: str) -> float:
        """``text`` as a number in range, else a ``ValueError``."""
        value = self.kind(text)
        if not self.holds(value):
            raise ValueError(text)
        return value


def bounded(option: str, kind: type = int, *, ge: float | None = None, gt: float | None = None,
            le: float | None = None, lt: float | None = None) -> Callable[[str], Any]:
    """An argparse ``type=`` for ``option``: the text as ``kind`` (int or float) within the bounds, else an
    ``ArgumentTypeError`` naming the option, the value and the range. The function's ``bounds`` says them."""
    if kind not in _KINDS:
        raise ValueError(f"bounded: kind must be int or float; got {kind!r}")
    bounds = Bounds(kind, ge, gt, le, lt)

    def parse(text: str) -> Any:
        try:
            return bounds.parse(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"{option} {text!r} is not {bounds.text}") from None

    parse.bounds = bounds  # type: ignore[attr-defined]
    parse.__name__ = _KINDS[kind]  # argparse's "invalid <name> value" if the message is ever lost
    return parse


def given(option: str, what: str, default: str, path: bool = False) -> Callable[[str], str]:
    """An argparse ``type=`` for ``option``: the text as given, or an ``ArgumentTypeError`` when it is empty
    (or, unless a ``path``, only blanks), naming the option, ``what`` it takes and ``default``: what leaving
    it out means."""

    def parse(text: str) -> str:
        if not (text if path else text.strip()):
            raise argparse.ArgumentTypeError(f"{option} {text!r} names no {what}; give one, or leave {option} out "
                                             f"{default}")
        return text

    parse.__name__ = what
    return parse


def _number(value: float) -> str:
    """A bound as written: ``1000000``, not ``1e+06``."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
