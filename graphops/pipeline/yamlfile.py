"""Pipeline YAML read safely: YAML 1.2 scalars, aliases within a budget, no repeated keys.

* **Booleans**: only ``true``/``false`` (any case variant YAML 1.2 allows). Under YAML 1.1 a bare
  ``on``, ``off``, ``yes`` or ``no`` is a boolean, so ``{kronecker_delta: {h: 0.5, on: label}}``
  would lose its ``on`` key; such a word given where a boolean is wanted stays text, and is refused
  there (``graphops.host.numbers``: a key or parameter that is a boolean takes only true/false).
* **Numbers** by YAML 1.2's core schema: integers in decimal (``010`` is ten), ``0o`` octal or ``0x``
  hex; floats such as ``1.5``, ``.5``, ``1e3``, ``-.inf``, ``.nan``. YAML 1.1's other forms are text:
  ``1:30`` (base 60), ``0b101``, ``1_000``. Nor is ``2024-01-31`` a date (1.2's core schema has no
  timestamps): it is the text as written. An explicit ``!!int``/``!!float`` tag takes the same forms.
* **Aliases** (``*name``) share the node of their anchor (``&name``), so a few lines can stand for
  billions of nodes ("billion laughs"). Whatever reads the data later (validation, an error message
  showing the value) may walk it whole. The nodes each alias stands for are counted while the file
  is composed, before anything is built, and a file whose aliases add more than
  :data:`MAX_ALIAS_NODES` is refused (:class:`AliasBudgetError`), wherever the alias sits. An alias
  inside its own anchor (a structure containing itself) is refused too.
* **Repeated keys** in any mapping (the last one would silently win) are collected with their lines
  and raised together once the file is read (:class:`DuplicateKeysError`, which carries the data, so
  the caller can say where each one is). A key given beside a merge (``<<: *defaults``) overrides the
  merged one, as YAML says: that is not a repeat.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import Node, ScalarNode, SequenceNode

__all__ = ["MAX_ALIAS_NODES", "SCALAR_CHARS_PER_NODE", "AliasBudgetError", "Duplicate", "DuplicateKeysError",
           "load_yaml"]

MAX_ALIAS_NODES = 250_000  # nodes a file's aliases may stand for, all together (a pipeline uses a few dozen)
SCALAR_CHARS_PER_NODE = 20  # a scalar reached through an alias counts one node more per this many characters
_MERGE = "tag:yaml.org,2002:merge"
_TAG = "tag:yaml.org,2002:"
# YAML 1.2 core schema (spec 10.3.2): the plain scalars that are integers and floats
_INT = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
                    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")


class AliasBudgetError(yaml.YAMLError):
    """Aliases that would expand past :data:`MAX_ALIAS_NODES`, or an alias inside its own anchor."""

    def __init__(self, problem: str, mark: Any):
        self.problem, self.problem_mark = problem, mark
        super().__init__(problem)


@dataclass(frozen=True)
class Duplicate:
    """A key given twice in one mapping: the mapping's place (keys and indices), the key, both lines."""

    where: tuple
    key: Any
    line: int
    first_line: int

    @property
    def message(self) -> str:
        return f"Duplicate key {self.key!r} (line {self.line}; first at line {self.first_line})"


class DuplicateKeysError(yaml.YAMLError):
    """Keys given twice in a mapping; ``data`` is the file as read (the last of each repeated key)."""

    def __init__(self, data: Any, duplicates: list[Duplicate]):
        self.data, self.duplicates = data, tuple(duplicates)
        super().__init__("; ".join(f"{d.message} at {'.'.join(map(str, d.where + (d.key,)))}" for d in duplicates))


class _Loader(yaml.SafeLoader):
    """A SafeLoader with YAML 1.2 booleans, an alias budget and repeated keys found (module doc)."""

    def __init__(self, stream: Any):
        super().__init__(stream)
        self._aliased = 0  # nodes the aliases met so far stand for
        self._sizes: dict[Node, int] = {}
        self._open: set[str] = set()  # anchors whose node is being composed

    def compose_node(self, parent: Any, index: Any) -> Node:
        if self.check_event(yaml.AliasEvent):
            self._count_alias(self.peek_event())
            return super().compose_node(parent, index)
        anchor = self.peek_event().anchor
        if anchor is None:
            return super().compose_node(parent, index)
        self._open.add(anchor)
        try:
            return super().compose_node(parent, index)
        finally:
            self._open.discard(anchor)

    def _count_alias(self, event: Any) -> None:
        if event.anchor in self._open:
            raise AliasBudgetError(f"The alias *{event.anchor} is inside its own anchor &{event.anchor} (a "
                                   f"structure that contains itself); write the repeated part out", event.start_mark)
        node = self.anchors.get(event.anchor)
        if node is None:
            return  # PyYAML says "found undefined alias"
        self._aliased += self._size(node)
        if self._aliased > MAX_ALIAS_NODES:
            raise AliasBudgetError(f"The aliases up to *{event.anchor} stand for more than {MAX_ALIAS_NODES:,} "
                                   f"nodes (an alias bomb?); a pipeline file needs far fewer: write the repeated "
                                   f"parts out, or repeat them with fewer aliases", event.start_mark)

    def _size(self, node: Node) -> int:
        """How many nodes ``node`` stands for, aliases inside it expanded (memoized per node)."""
        size = self._sizes.get(node)
        if size is None:
            if isinstance(node, ScalarNode):
                size = 1 + len(node.value) // SCALAR_CHARS_PER_NODE
            elif isinstance(node, SequenceNode):
                size = 1 + sum(self._size(item) for item in node.value)
            else:
                size = 1 + sum(self._size(k) + self._size(v) for k, v in node.value)
            self._sizes[node] = size
        return size

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        duplicates = sorted(self._duplicates(node, (), set()), key=lambda d: d.line)  # keys built here are reused
        data = self.construct_document(node)
        if duplicates:
            raise DuplicateKeysError(data, duplicates)
        return data

    def _duplicates(self, node: Node, where: tuple, seen: set[int]) -> Iterator[Duplicate]:
        """Repeated keys in ``node`` and below; each node visited once (an anchor where it is defined)."""
        if id(node) in seen or isinstance(node, ScalarNode):
            return
        seen.add(id(node))
        if isinstance(node, SequenceNode):
            for i, item in enumerate(node.value):
                yield from self._duplicates(item, where + (i,), seen)
            return
        first: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = self._key(key_node)
            if key is not None and key in first:
                yield Duplicate(where, key, key_node.start_mark.line + 1, first[key])
            elif key is not None:
                first[key] = key_node.start_mark.line + 1
            yield from self._duplicates(value_node, where + (key,) if key is not None else where, seen)

    def _key(self, node: Node) -> Any:
        """A plain key's value (``1`` and ``0x1`` are one key), or ``None`` (a merge, a complex key)."""
        if not isinstance(node, ScalarNode) or node.tag == _MERGE:
            return None
        key = self.construct_object(node)
        try:
            hash(key)
        except TypeError:
            return None
        return key


def _construct_int(loader: _Loader, node: ScalarNode) -> int:
    """An integer of YAML 1.2's core schema: decimal (``010`` is ten), ``0o`` octal, ``0x`` hex."""
    text = loader.construct_scalar(node)
    if not _INT.fullmatch(text):
        raise ConstructorError(None, None, f"{text!r} is not an integer (YAML 1.2: decimal digits, 0o octal or 0x "
                               f"hex)", node.start_mark)
    try:
        return int(text[2:], 8 if text[1] == "o" else 16) if text[:2] in ("0o", "0x") else int(text, 10)
    except ValueError:  # past Python's limit on digits read as an integer
        raise ConstructorError(None, None, f"the integer of {len(text):,} digits is too long to read",
                               node.start_mark) from None


def _construct_float(loader: _Loader, node: ScalarNode) -> float:
    """A float of YAML 1.2's core schema: ``1.5``, ``.5``, ``1e3``, ``-.inf``, ``.nan``."""
    text = loader.construct_scalar(node)
    if not _FLOAT.fullmatch(text):
        raise ConstructorError(None, None, f"{text!r} is not a number (YAML 1.2: e.g. 1.5, .5, 1e3, -.inf, .nan)",
                               node.start_mark)
    if text.lstrip("-+").lower() in (".inf", ".nan"):
        return float(text.replace(".", "").lower())  # "-inf", "nan"
    return float(text)


_DROPPED = {_TAG + t for t in ("bool", "int", "float", "timestamp", "value")}  # YAML 1.1's, replaced or gone
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _DROPPED]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(_TAG + "bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_Loader.add_implicit_resolver(_TAG + "int", re.compile(rf"^(?:{_INT.pattern})$"), list("-+0123456789"))
_Loader.add_implicit_resolver(_TAG + "float", re.compile(rf"^(?:{_FLOAT.pattern})$"), list("-+.0123456789"))
_Loader.add_constructor(_TAG + "int", _construct_int)  # also for an explicit !!int
_Loader.add_constructor(_TAG + "float", _construct_float)


def load_yaml(text: str) -> Any:
    """Parse pipeline YAML (module doc): :class:`AliasBudgetError` and :class:`DuplicateKeysError` are
    ``yaml.YAMLError`` s, as a syntax error is."""
    return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
