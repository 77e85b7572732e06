"""Rules 4 and 5 of the reading rule (:mod:`graphops.io.textio`) on parsed columns: ids, weights
and attribute values checked a whole column at a time, errors naming the line of the first bad row."""
from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from graphops.base.device import host_pandas
from graphops.errors import InputError

pd = host_pandas()  # the real pandas, also under cudf.pandas

__all__ = ["Checks", "is_number", "empty_column", "field", "INT_DIGITS"]

_INT = r"[+-]?[0-9]+"
_NUMBER = r"[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|nan|inf|infinity)"
_NUMBER_RE = re.compile(f"^{_NUMBER}$", re.IGNORECASE)
_INT64_MAX = 2 ** 63 - 1
INT_DIGITS = len(str(_INT64_MAX))  # 19: an integer of more digits is beyond int64


def is_number(token: str) -> bool:
    """A decimal number as pandas reads one (``1``, ``-2.5e3``, ``nan``, ``inf``); not ``1_000``."""
    return bool(_NUMBER_RE.match(token))


def empty_column(series: Any) -> np.ndarray:
    """Empty fields of one column: NaN, or ``""`` where pandas kept a text column's gap as text."""
    if series.dtype.kind in "iub":
        return np.zeros(len(series), bool)
    missing = series.isna().to_numpy()
    if series.dtype.kind == "O":
        missing = missing | (series == "").to_numpy(dtype=bool, na_value=False)
    return missing


def _text(series: Any) -> Any:
    """A column as strings (pandas' string type: the matching below runs in Arrow, not Python)."""
    return series.astype(str).astype("string")


def _matches(series: Any, pattern: str) -> np.ndarray:
    return _text(series).str.fullmatch(pattern, case=False).to_numpy(dtype=bool, na_value=False)


def beyond_int64(tokens: Any) -> np.ndarray:
    """Which integer tokens (strings of digits with an optional sign) lie outside int64; compared as
    numbers only where the digit count leaves doubt, so a 10,000-digit id costs its length."""
    text = _text(tokens)
    magnitude = text.str.lstrip("+-").str.lstrip("0")
    digits = magnitude.str.len().to_numpy(dtype=np.int64, na_value=0)
    negative = text.str.startswith("-").to_numpy(dtype=bool, na_value=False)
    # as many digits as the bound: compared as text, which orders digit strings of one length as numbers
    edge = digits == INT_DIGITS
    past = np.where(negative, (magnitude > str(_INT64_MAX + 1)).to_numpy(dtype=bool, na_value=False),
                    (magnitude > str(_INT64_MAX)).to_numpy(dtype=bool, na_value=False))
    return (digits > INT_DIGITS) | (edge & past)


def field(value: Any) -> str:
    """A field's text for a message, quoted; a long one cut, with its length."""
    text = str(value)
    return repr(text) if len(text) <= 40 else repr(f"{text[:20]}...{text[-8:]}") + f" ({len(text)} characters)"


def _first(mask: np.ndarray) -> int | None:
    hits = np.flatnonzero(mask)
    return int(hits[0]) if len(hits) else None


class Checks:
    """Rules 4 and 5 on a parsed frame; errors name the line of the bad row."""

    def __init__(self, frame: Any, layout: Any, header: bool, as_written: Callable[[int], Any]):
        self.frame, self.layout, self.header = frame, layout, header
        self.as_written = as_written  # column position -> that column again, as the text writes it
        self.first = 1 if header else 0
        self.position = {c: k for k, c in enumerate(frame.columns)}

    def where(self, row: int, col: str) -> str:
        return self.layout.where(row + self.first, self.position[col], col if self.header else None)

    def fix_header(self, row: int) -> str:
        return "; if line 1 is a header, pass header=True" if row == 0 and not self.header else ""

    def run(self, cols: dict[str, str | None], ids: str) -> None:
        for role, col in cols.items():
            if col is not None and col not in self.position:
                raise InputError(f"{role}={col!r}: no such column in {self.layout.path}. Columns: "
                                 f"{list(self.frame.columns)}")
        self.no_shadows(cols)
        kinds = {r: self.id_kind(cols[r], r, ids) for r in ("src", "dst")}
        if "string" in kinds.values() or ids == "string":  # names: both columns as written
            for role in ("src", "dst"):
                if self.frame[cols[role]].dtype.kind != "O":
                    self.frame[cols[role]] = self.as_written(self.position[cols[role]]).to_numpy()
                self.frame[cols[role]] = self.frame[cols[role]].astype(str)
        if cols["weight"] is not None:
            self.frame[cols["weight"]] = self.weights(cols["weight"])
        if not self.header:
            for col in self.text_over_text(cols):
                self.text_over_numbers(col)

    def text_over_text(self, cols: dict[str, str | None]) -> list[str]:
        """Text columns whose first value may be an unseen header (rule 5): text over a number or an
        empty field on the next line; read from the first two rows at once (a column of names is no
        candidate, so a wide file of names is not searched column by column)."""
        head = self.frame.iloc[:2].to_numpy(dtype=object)
        if len(head) < 2:
            return []

        def text(v: Any) -> bool:
            return isinstance(v, str) and v != "" and not is_number(v)

        return [c for k, (c, d) in enumerate(self.frame.dtypes.items()) if d.kind == "O" and c not in cols.values()
                and text(head[0, k]) and not text(head[1, k])]

    def no_shadows(self, cols: dict[str, str | None]) -> None:
        """A header naming an attribute column ``src``, ``dst`` or (weighted) ``weight``, which the
        graph's own columns of those names would hide."""
        for name in ("src", "dst", "weight"):
            if self.header and name in self.position and cols[name] is not None and name not in cols.values():
                raise InputError(f"{self.layout.where(0, self.position[name], name)}: this column is named {name!r}, "
                                 f"but {name} is column {self.position[cols[name]] + 1} ({cols[name]!r}); pass "
                                 f"{name}={name!r}, or rename the column in the header")

    def id_kind(self, col: str, role: str, ids: str) -> str:
        """``integer`` or ``string`` for one id column; errors name the first bad line."""
        series = self.frame[col]
        missing = _first(empty_column(series))
        if missing is not None:
            raise InputError(f"{self.where(missing, col)}: {role} id is missing (an empty field); every row needs "
                             f"both ids")
        if series.dtype.kind == "i" and ids != "string":
            return "integer"
        if series.dtype.kind == "u" and ids != "string":
            return self.unsigned(series, col, role)
        is_int = _matches(series, _INT)
        if ids == "string" or (ids == "auto" and not is_int.any()):
            return "string"
        bad = _first(~is_int)
        if bad is not None:
            hint = ("vertex ids must be integers (ids: integer)" if ids == "integer" else
                    "other ids in this column are integers; if vertex ids are names, read them as strings "
                    "with ids='string' (YAML: ids: string)")
            raise InputError(f"{self.where(bad, col)}: {role} id {field(series.iloc[bad])} is not an integer; "
                             f"{hint}{self.fix_header(bad)}")
        self.frame[col] = self.int64(series, col, role)
        return "integer"

    def unsigned(self, series: Any, col: str, role: str) -> str:
        """A column pandas read as uint64: integers, within int64 or refused."""
        self.refuse_beyond(series.to_numpy() > _INT64_MAX, series, col, role)
        self.frame[col] = series.astype("int64")
        return "integer"

    def refuse_beyond(self, too_big: np.ndarray, series: Any, col: str, role: str) -> None:
        row = _first(too_big)
        if row is not None:
            raise InputError(f"{self.where(row, col)}: {role} id {field(series.iloc[row])} is beyond the 64-bit "
                             f"integer range (|id| < 2**63); read the ids as strings with ids='string' (YAML: ids: "
                             f"string)")

    def int64(self, series: Any, col: str, role: str) -> np.ndarray:
        self.refuse_beyond(beyond_int64(series), series, col, role)
        return _text(series).astype("int64").to_numpy()

    def weights(self, col: str) -> Any:
        series = self.frame[col]
        values = pd.to_numeric(series, errors="coerce").astype("float64")
        bad = _first(~np.isfinite(values.to_numpy()))
        if bad is not None:
            what = "is missing (an empty field)" if empty_column(series.iloc[bad:bad + 1])[0] else \
                f"{field(series.iloc[bad])} is not a finite number"
            raise InputError(f"{self.where(bad, col)}: weight {what}; weights must be numbers{self.fix_header(bad)}")
        return values

    def text_over_numbers(self, col: str) -> None:
        """Rule 5: a column of numbers whose first value is text (an unseen header)."""
        series = self.frame[col]
        if len(series) < 2 or series.dtype.kind != "O":
            return
        present = ~empty_column(series)
        other = series.map(type).isin((str,)).to_numpy() == 0 if series.dtype == object else False  # big ints
        number = present & (_matches(series, _NUMBER) | other)
        text = present & ~number
        if text[0] and not text[1:].any() and number[1:].any():
            raise InputError(f"{self.where(0, col)}: {field(series.iloc[0])} is text in a column of numbers; if line 1 "
                             f"is a header, pass header=True (YAML: header: true), else fix the value")
