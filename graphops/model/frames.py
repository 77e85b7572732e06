"""Helpers that treat pandas and cuDF frames alike: checks, columns as arrays, new frames.

The family of a frame (pandas on the host, cuDF on the GPU) is its :class:`Device`;
outputs are built in the family of the input.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Mapping, Sequence

import numpy as np

from graphops.base.device import Device, device_of, host_pandas, to_device
from graphops.errors import InputError, InputTypeError, did_you_mean

__all__ = [
    "check_columns", "id_array", "plain_values", "weight_array", "column_array", "new_frame", "take_rows",
    "to_family",
]


def _is_frame(df: Any) -> bool:
    return hasattr(df, "columns") and hasattr(df, "iloc")


def check_columns(df: Any, wanted: Mapping[str, Any], what: str = "edge frame") -> None:
    """Raise ``TypeError``/``ValueError`` unless ``df`` is a frame holding each wanted column once.

    :param wanted: role -> column name (``{"src": "u", "dst": "v"}``); ``None`` values are skipped.
    """
    if not _is_frame(df):
        raise InputTypeError(f"{what} must be a pandas or cuDF DataFrame; got {type(df).__name__}")
    cols = [str(c) for c in df.columns]
    dupes = sorted(c for c, k in Counter(cols).items() if k > 1)
    if dupes:
        raise InputError(f"{what} has duplicate column names {dupes}; rename them so each is unique")
    for role, name in wanted.items():
        if name is not None and str(name) not in cols:
            raise InputError(
                f"{role}={name!r}: no such column in the {what}. Columns: {cols}."
                f"{did_you_mean(str(name), cols)}"
            )
    used = [n for n in wanted.values() if n is not None]
    same = sorted({str(n) for n in used if used.count(n) > 1})
    if same:
        raise InputError(f"column {same[0]!r} is given for more than one role in {dict(wanted)}")


def _bad_rows(mask: Any) -> list[int]:
    xp = device_of(mask).xp
    return [int(i) for i in xp.flatnonzero(mask)[:5].tolist()]


def _null_mask(series: Any) -> Any:
    mask = series.isna()
    return mask.values if device_of(series).value == "gpu" else mask.to_numpy()


def id_array(series: Any, role: str) -> Any:
    """A vertex-id column as an int64 NumPy/CuPy array, or as a Series of strings (names, e-mail
    addresses, UUIDs: pandas ``object``/``string``/``category`` or cuDF string columns).

    NaN/null ids, float ids and columns mixing numbers with strings are errors.
    """
    nulls = _null_mask(series)
    if bool(nulls.any()):
        rows = _bad_rows(nulls)
        raise InputError(
            f"{role} column {series.name!r} has {int(nulls.sum())} missing (NaN/null) vertex id(s), "
            f"first at rows {rows}; drop those rows or fill them before building the graph"
        )
    if str(series.dtype) == "category":
        series = series.astype(series.cat.categories.dtype)
    kind = np.dtype(str(series.dtype).lower()).kind if _numpy_dtype(series) else "U"
    if kind == "f" and len(series) == 0:  # an empty column is typed float by pandas: no ids, not float ids
        return column_array(series, "int64")
    if kind in "iu":
        return column_array(_within_int64(series, role), "int64")
    if kind == "O":  # cuDF keeps strings in "object" columns; pandas may hold anything there
        kind = "U" if device_of(series) is Device.GPU else _object_kind(series, role)
    if kind in "USO":
        return series.astype(str).reset_index(drop=True)
    if kind == "i":  # Python ints in an object column
        return _python_ints(series, role)
    raise InputError(
        f"{role} column {series.name!r} has dtype {series.dtype}; vertex ids must be integers or "
        f"strings. If the values are whole numbers, cast with .astype('int64')"
    )


def _beyond_int64(series: Any, role: str, mask: Any) -> InputError:
    return InputError(f"{role} column {series.name!r} has {int(mask.sum())} id(s) beyond the 64-bit signed range, "
                      f"first at rows {_bad_rows(mask)}; graphops keeps integer ids as int64: convert the column to "
                      f"strings (.astype(str)) to keep them as names")


def _python_ints(series: Any, role: str) -> Any:
    values = series.tolist()
    big = np.fromiter((not -2 ** 63 <= v < 2 ** 63 for v in values), bool, len(values))
    if big.any():
        raise _beyond_int64(series, role, big)
    return np.asarray(values, dtype=np.int64)


def _within_int64(series: Any, role: str) -> Any:
    """An unsigned id column whose values all fit int64 (a larger one would wrap around silently)."""
    if np.dtype(str(series.dtype).lower()).kind != "u" or np.dtype(str(series.dtype).lower()).itemsize < 8:
        return series
    big = series > np.iinfo(np.int64).max
    big = big.values if device_of(series) is Device.GPU else big.to_numpy()
    if bool(big.any()):
        raise _beyond_int64(series, role, big)
    return series


def plain_values(col: Any, rows: Any) -> list[Any]:
    """Values of an id column (array, or pandas/cuDF Series) at positions ``rows``, as plain Python
    ints or strings (for messages)."""
    rows = [int(r) for r in (rows.tolist() if hasattr(rows, "tolist") else rows)]
    if hasattr(col, "iloc"):
        got = col.iloc[rows]
        return list(got.to_pandas() if hasattr(got, "to_pandas") else got)
    return [v.item() if hasattr(v, "item") else v for v in col[rows].tolist()]


def _object_kind(series: Any, role: str) -> str:
    """``i`` for Python ints, ``U`` for strings; a clear error for anything else or a mix."""
    pd = host_pandas()

    inferred = pd.api.types.infer_dtype(series, skipna=True)
    if inferred in ("string", "empty"):
        return "U"
    if inferred == "integer":
        return "i"
    values = series.tolist()
    row = next((i for i, v in enumerate(values) if not isinstance(v, (str, int)) or isinstance(v, bool)), None)
    if row is not None:  # lists, decimals, bytes, records...: not ids at all
        shown = repr(values[row])
        raise InputError(
            f"{role} column {series.name!r} holds {type(values[row]).__name__} values (row {row}: "
            f"{shown if len(shown) <= 60 else shown[:57] + '...'}); vertex ids are integers or strings. "
            f"Convert the column (.astype(str) or .astype('int64'))"
        )
    first = type(values[0])
    row = next((i for i, v in enumerate(values) if type(v) is not first), 0)
    raise InputError(
        f"{role} column {series.name!r} mixes {first.__name__} and {type(values[row]).__name__} "
        f"vertex ids (row {row}: {values[row]!r}); ids must be all integers or all strings. "
        f"Convert with .astype(str) or .astype('int64')"
    )


def _numpy_dtype(series: Any) -> bool:
    try:
        np.dtype(str(series.dtype).lower())
    except TypeError:
        return False
    return True


def weight_array(series: Any) -> Any:
    """An edge-weight column as a float64 array; NaN/null or non-numeric weights are errors."""
    if not _numpy_dtype(series) or np.dtype(str(series.dtype).lower()).kind not in "iuf":
        raise InputError(f"weight column {series.name!r} has dtype {series.dtype}; weights must be numeric")
    nulls = _null_mask(series)
    if bool(nulls.any()):
        raise InputError(
            f"weight column {series.name!r} has {int(nulls.sum())} NaN/null weight(s), first at rows "
            f"{_bad_rows(nulls)}; fill or drop them (NaN weights would poison every path and sum)"
        )
    w = column_array(series, "float64")
    infinite = ~device_of(w).xp.isfinite(w)
    if bool(infinite.any()):
        rows = _bad_rows(infinite)
        raise InputError(
            f"weight column {series.name!r} has {int(infinite.sum())} infinite weight(s), first at rows "
            f"{rows} ({float(w[rows[0]])!r}); weights must be finite numbers"
        )
    return w


def column_array(series: Any, dtype: str | None = None) -> Any:
    """A column as a NumPy (pandas) or CuPy (cuDF) array, optionally cast."""
    if device_of(series) is Device.GPU:
        arr = series.astype(dtype).values if dtype else series.values
    else:
        arr = series.to_numpy(dtype=dtype) if dtype else series.to_numpy()
    return arr


def new_frame(device: Device, data: Mapping[str, Any], columns: Sequence[str] | None = None,
              take: bool = False) -> Any:
    """A pandas (CPU) or cuDF (GPU) frame from arrays, moving arrays to ``device`` as needed.

    ``take=True``: the arrays belong to the frame from now on (a backend's fresh result), so
    pandas keeps them as they are instead of copying them into one block (2 s for 4 columns
    of 20 M rows), and cuDF keeps a NaN as a NaN, as the pandas frame does, instead of a pass
    over every float column turning NaNs into nulls (1.3 ms of a 5 ms call on 33 M rows)."""
    columns = list(columns) if columns is not None else list(data)
    if device is Device.CPU:
        arrays = _to_host(columns, data)
        return device.xdf.DataFrame(arrays, columns=columns, copy=False if take else None)
    arrays = {c: to_device(data[c], device) for c in columns}  # in column order: no columns= (0.5 ms in cuDF)
    if take:
        return device.xdf.DataFrame(arrays, nan_as_null=False)
    return device.xdf.DataFrame(arrays)


def _to_host(columns: Sequence[str], data: Mapping[str, Any]) -> dict[str, Any]:
    """Columns as NumPy arrays; GPU columns of one dtype come over in a single copy."""
    out = {c: data[c] for c in columns if device_of(data[c]) is Device.CPU}
    out.update({c: data[c].to_pandas().to_numpy() for c in columns
                if c not in out and hasattr(data[c], "to_pandas")})  # cuDF Series (string ids)
    on_gpu = [c for c in columns if c not in out]
    for dtype in {data[c].dtype for c in on_gpu}:
        group = [c for c in on_gpu if data[c].dtype == dtype]
        stacked = to_device(device_of(data[group[0]]).xp.stack([data[c] for c in group]), Device.CPU)
        out.update(zip(group, stacked))
    return {c: out[c] for c in columns}


def take_rows(df: Any, rows: Any) -> Any:
    """Rows of ``df`` by position, with a fresh 0..n-1 index."""
    return df.iloc[rows].reset_index(drop=True)


def to_family(df: Any, device: Device) -> Any:
    """``df`` converted to the frame family of ``device`` (a copy only when it moves)."""
    if df is None or device_of(df) is device:
        return df
    if device is Device.GPU:
        return device.xdf.from_pandas(df)
    return df.to_pandas()
