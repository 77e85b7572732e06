"""Slow, obvious readers of edge files, straight from the reading rule in graphops.io.textio's doc.

Each returns ``(src, dst, weight)`` lists (``weight`` ``None`` when not asked for), or raises
:class:`Refused` where the rule says the file is refused. Plain Python: no pandas, no NumPy.
"""
from __future__ import annotations

import math
import re

from graphops.io.textio import COLUMN_WORDS  # the documented word list itself

INT = re.compile(r"^[+-]?[0-9]+$")  # ASCII digits: int() and \\d take any script's
NUMBER = re.compile(r"^[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|nan|inf|infinity)$", re.IGNORECASE)
LOW, HIGH = -2 ** 63, 2 ** 63 - 1


class Refused(Exception):
    """The rule says: refuse this file."""


def _lines(text: str) -> list[str]:
    out = []
    for raw in text.removeprefix("\ufeff").split("\n"):
        kept = re.split("[#%]", raw, maxsplit=1)[0].rstrip("\r")
        if kept.strip():
            out.append(kept)
    return out


def _split(line: str, sep: str) -> list[str]:
    if sep == " ":
        return [t for t in re.split("[ \t]+", line) if t]  # spaces and tabs; other Unicode blanks are text
    edges = line.strip(" \f\v") if sep == "\t" else line.strip()  # a tab at a line's end ends a field
    return [t.strip() for t in edges.split(sep)]


def _digits(token: str) -> bool:
    return bool(re.fullmatch("[0-9]+", token))


def _num(token: str) -> bool:
    return bool(NUMBER.match(token))


def _is_header(rows: list[list[str]], header) -> bool:
    if header in (True, False):
        return header
    first, below = rows[0], rows[1:]
    column = lambda k: [r[k] for r in below]  # noqa: E731
    if any(_num(first[k]) for k in (0, 1)):
        return False
    for k in (0, 1):
        if below and all(_num(t) for t in column(k)):
            return True
    for k in range(2, len(first)):
        if below and not _num(first[k]) and all(_num(t) for t in column(k)):
            return True
    seen = set(column(0)) | set(column(1))
    return any(first[k].lower() in COLUMN_WORDS and first[k] not in seen for k in (0, 1))


def _ids(tokens: list[str], ids: str) -> tuple[str, list]:
    if "" in tokens:
        raise Refused("missing id")
    if ids == "string":
        return "string", tokens
    ints = [bool(INT.match(t)) for t in tokens]
    if ids == "auto" and not any(ints):
        return "string", tokens
    if not all(ints):
        raise Refused("mixed ids")
    if any(len(t.lstrip("+-").lstrip("0")) > 19 for t in tokens):
        raise Refused("id beyond int64")  # (int() of 4,300 digits or more would raise)
    values = [int(t) for t in tokens]
    if any(not LOW <= v <= HIGH for v in values):
        raise Refused("id beyond int64")
    return "integer", values


def parse_text(text: str, header="auto", ids: str = "auto", weight: int | None = None,
               columns: list[str] | None = None, commas: bool = True) -> tuple[list, list, list | None]:
    """A delimited edge list: ``weight`` and the roles given by position (src 0, dst 1);
    ``commas=False`` (the tsv format): never split by commas."""
    lines = _lines(text)
    if not lines:
        raise Refused("no rows")
    first = lines[0].strip()
    sep = "," if commas and "," in first else "\t" if "\t" in first else " "
    rows = [_split(line, sep) for line in lines]
    want = len(columns) if columns else len(rows[0])
    if any((len(r) < want) if columns else (len(r) != want) for r in rows):
        raise Refused("ragged")
    if not columns and sep != " " and all(r[-1] == "" for r in rows):
        want -= 1  # a delimiter ending every line: that last, empty field is no column
    if want < 2:
        raise Refused("one column")
    rows = [r[:want] for r in rows]
    head = _is_header(rows, header)
    if head and not columns and len(set(rows[0])) < len(rows[0]):
        raise Refused("a header naming a column twice")
    data = rows[1:] if head else rows
    if not data:
        raise Refused("no rows below the header")
    if weight is not None and weight >= want:
        raise Refused("no such column")
    (ks, src), (kd, dst) = _ids([r[0] for r in data], ids), _ids([r[1] for r in data], ids)
    if "string" in (ks, kd):
        src, dst = [r[0] for r in data], [r[1] for r in data]
    weights = None
    if weight is not None:
        tokens = [r[weight] for r in data]
        if not all(_num(t) and math.isfinite(float(t)) for t in tokens):
            raise Refused("bad weight")
        weights = [float(t) for t in tokens]
    if head and not columns:
        taken = {"src", "dst"} | ({"weight"} if weight is not None else set())
        if any(rows[0][k] in taken for k in range(2, want) if k != weight):
            raise Refused("an attribute column named like the graph's own")
    for k in range(2, want):
        text_at = [t != "" and not _num(t) for t in (r[k] for r in data)]
        numbers_below = any(_num(r[k]) for r in data[1:])
        if k != weight and not head and numbers_below and text_at[0] and not any(text_at[1:]):
            raise Refused("text over numbers")
    return src, dst, weights


def parse_mtx(text: str) -> tuple[list, list, list | None]:
    """A MatrixMarket coordinate file: banner, size line, 1-based entries, values by field."""
    lines = text.removeprefix("\ufeff").split("\n")
    banner = lines[0].lower().split()
    if banner[:3] != ["%%matrixmarket", "matrix", "coordinate"] or len(banner) < 5 \
            or banner[3] not in ("real", "integer", "pattern"):
        raise Refused("banner")
    body = [line.split("%", 1)[0].strip() for line in lines[1:]]
    body = [line for line in body if line]
    if not body:
        raise Refused("no size line")
    size = body[0].split()
    if len(size) != 3 or not all(_digits(t) for t in size):
        raise Refused("size line")
    n_rows, n_cols, nnz = map(int, size)
    if n_rows != n_cols:
        raise Refused("rectangular: rows and columns are not one vertex set")
    fields = 2 if banner[3] == "pattern" else 3
    entries = [line.split() for line in body[1:]]
    if any(len(e) != fields for e in entries) or len(entries) != nnz or not entries:
        raise Refused("entries")
    for e in entries:
        if not (_digits(e[0]) and 1 <= int(e[0]) <= n_rows and _digits(e[1]) and 1 <= int(e[1]) <= n_cols):
            raise Refused("index")
    if fields == 2:
        return [int(e[0]) for e in entries], [int(e[1]) for e in entries], None
    if not all(_num(e[2]) and math.isfinite(float(e[2])) for e in entries):
        raise Refused("value")
    values = [float(e[2]) for e in entries]
    if banner[3] == "integer" and any(v != round(v) or abs(v) >= 2.0 ** 63 for v in values):
        raise Refused("integer value")
    return [int(e[0]) for e in entries], [int(e[1]) for e in entries], values
