"""Checks of what a plugin declares, run as each declaration is made (:class:`Algorithm`,
:class:`Input`, :class:`Backend`, :class:`Gram`, :class:`Reader`, :class:`Generator`,
:class:`Command` call these from ``__post_init__``).

A field of the wrong type or value is a ``TypeError``/``ValueError`` naming the declaration, the
field, the value given and how to write it, never an ``IndexError`` or a ``re`` error from inside
graphops. A plugin hook that raises one is left out and ``graphops plugins`` shows the message.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Mapping

__all__ = ["NAME", "TARGET", "name", "text", "flag", "choice", "target", "names", "table", "slots",
           "backends", "vertex_columns", "outputs", "algorithm_fields"]

NAME = re.compile(r"^[a-z][a-z0-9_]*$")
TARGET = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


def _given(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


def name(what: str, value: Any, pattern: re.Pattern = NAME, shape: str = "[a-z][a-z0-9_]*") -> None:
    """``value`` is a string matching ``pattern`` (``what``: ``"algorithm"``, ``"reader"``, ...)."""
    if not isinstance(value, str):
        raise TypeError(f"{what} name must be a string matching {shape}; got {_given(value)}")
    if not pattern.match(value):
        raise ValueError(f"{what} name must match {shape}; got {value!r}")


def text(owner: str, field: str, value: Any, optional: bool = False) -> None:
    """``value`` is a string (or ``None`` when ``optional``)."""
    if not (isinstance(value, str) or (optional and value is None)):
        raise TypeError(f"{owner}: {field} must be a string{' or None' if optional else ''}; got {_given(value)}")


def flag(owner: str, field: str, value: Any, optional: bool = False) -> None:
    """``value`` is ``True`` or ``False`` (or ``None`` when ``optional``)."""
    if not (isinstance(value, bool) or (optional and value is None)):
        raise TypeError(f"{owner}: {field} must be True or False{' or None' if optional else ''}; "
                        f"got {_given(value)}")


def choice(owner: str, field: str, value: Any, allowed: tuple) -> None:
    """``value`` is one of ``allowed``."""
    if not any(value is a or (type(value) is type(a) and value == a) for a in allowed):
        raise ValueError(f"{owner}: {field} must be one of {', '.join(map(repr, allowed))}; got {value!r}")


def target(owner: str, field: str, value: Any, optional: bool = True,
           shape: str = "package.module:function") -> None:
    """``value`` looks like ``"package.module:function"`` (or is ``None`` when ``optional``)."""
    if value is None and optional:
        return
    if not isinstance(value, str) or not TARGET.match(value):
        raise (ValueError if isinstance(value, str) else TypeError)(
            f"{owner}: {field} must look like '{shape}' (a string naming where it is defined); got {_given(value)}")


def names(owner: str, field: str, value: Any, unique: bool = True) -> tuple[str, ...]:
    """``value`` (a tuple or list of strings) as a tuple; a bare string is refused (it would be
    read letter by letter), and so is a name given twice when ``unique``."""
    if isinstance(value, str):
        raise TypeError(f"{owner}: {field} must be a tuple of strings, not one string; write {field}=({value!r},)")
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{owner}: {field} must be a tuple of strings; got {_given(value)}")
    bad = [v for v in value if not isinstance(v, str)]
    if bad:
        raise TypeError(f"{owner}: {field} must hold strings only; got {_given(bad[0])} in {tuple(value)!r}")
    twice = sorted({v for v in value if value.count(v) > 1})
    if unique and twice:
        raise ValueError(f"{owner}: {field} names {', '.join(map(repr, twice))} more than once; list each once")
    return tuple(value)


def table(owner: str, field: str, value: Any, check_key: Callable[[Any], bool], key_shape: str,
          check_value: Callable[[Any], bool], value_shape: str) -> dict:
    """``value`` as a dict: a mapping whose keys and values pass the checks given."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{owner}: {field} must be a dict of {key_shape} -> {value_shape}; got {_given(value)}")
    for key, item in value.items():
        if not check_key(key):
            raise (ValueError if isinstance(key, str) else TypeError)(
                f"{owner}: {field} has the key {_given(key)}; its keys are {key_shape}")
        if not check_value(item):
            raise (ValueError if isinstance(item, str) else TypeError)(
                f"{owner}: {field}[{key!r}] is {_given(item)}; give {value_shape}")
    return dict(value)


def slots(owner: str, inputs: Any, make: type) -> tuple:
    """The input slots as ``make`` (:class:`Input`) objects: at least one, each named once."""
    if isinstance(inputs, str) or not isinstance(inputs, (tuple, list)):
        hint = f"; write inputs=({inputs!r},)" if isinstance(inputs, str) else ""
        raise TypeError(f"{owner}: inputs must be a tuple of slot names or graphops.Input objects; got "
                        f"{_given(inputs)}{hint}")
    if not inputs:
        raise ValueError(f"{owner}: inputs is empty; declare at least one input slot, e.g. inputs=('graph',)")
    out = []
    for slot in inputs:
        if isinstance(slot, str):
            slot = make(slot)
        elif not isinstance(slot, make):
            raise TypeError(f"{owner}: inputs holds {_given(slot)}; each slot is a name ('graph') or "
                            f"graphops.Input('graph', kinds=(...))")
        out.append(slot)
    seen = [s.name for s in out]
    twice = sorted({n for n in seen if seen.count(n) > 1})
    if twice:
        raise ValueError(f"{owner}: the input slot {twice[0]!r} is declared more than once; give each slot its "
                         f"own name")
    return tuple(out)


def backends(owner: str, value: Any, make: Callable[[str, Any], Any], kind: type) -> dict:
    """Backend name -> ``kind`` (:class:`Backend`) objects, ``make(name, spec)`` turning a
    ``"module:function"`` string into one; at least one backend."""
    shape = "a 'package.module:function' string or graphops.Backend(target='package.module:function', ...)"
    given = table(owner, "backends", value, lambda k: isinstance(k, str) and bool(NAME.match(k)),
                  "backend names matching [a-z][a-z0-9_]* ('cpu', 'gpu', ...)",
                  lambda v: isinstance(v, (str, kind)), shape)
    if not given:
        raise ValueError(f"{owner} offers no backend; give backends={{'cpu': 'package.module:function'}}")
    out = {}
    for key, spec in given.items():
        try:
            out[key] = make(key, spec)
        except ValueError as exc:
            raise ValueError(f"{owner}: backends[{key!r}]: {exc}") from None
    return out


def outputs(owner: str, columns: Any, optional: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The output columns and the optional ones (each named once, the optional ones among them)."""
    columns = names(owner, "outputs", columns)
    optional = names(owner, "optional_outputs", optional)
    stray = [c for c in optional if c not in columns]
    if stray:
        raise ValueError(f"{owner}: optional_outputs names {', '.join(map(repr, stray))}, which outputs "
                         f"{columns!r} lacks; list it in outputs too")
    return columns, optional


def vertex_columns(owner: str, value: Any, slot_names: tuple[str, ...], columns: tuple[str, ...]) -> dict[str, str]:
    """``{column: input slot}``: every column one of ``columns`` (so its indices are mapped to ids),
    every slot one of the algorithm's."""
    if isinstance(value, Mapping):
        cols = table(owner, "vertex_columns", value, lambda k: isinstance(k, str), "output column names",
                     lambda v: isinstance(v, str), "an input slot name")
    else:
        cols = {c: slot_names[0] for c in names(owner, "vertex_columns", value)}
    unknown = sorted(set(cols.values()) - set(slot_names))
    if unknown:
        raise ValueError(f"{owner}: vertex_columns name unknown input slot(s) {unknown}; the slots are "
                         f"{list(slot_names)}")
    missing = [c for c in cols if c not in columns]
    if missing:
        raise ValueError(f"{owner}: vertex_columns names {', '.join(map(repr, missing))}, which is not among "
                         f"outputs {columns!r}; graphops maps only declared output columns to the caller's ids. "
                         f"List it in outputs, or drop it from vertex_columns")
    return cols


def algorithm_fields(algo: Any, params_base: type) -> str:
    """Check an Algorithm's plain fields (name, params, result, texts, targets, estimator, gram);
    return how messages name it (``"algorithm 'x'"``)."""
    name("algorithm", algo.name)
    owner = f"algorithm {algo.name!r}"
    if not (isinstance(algo.params, type) and issubclass(algo.params, params_base)):
        raise TypeError(f"{owner}: params must be a graphops.Params subclass; got {_given(algo.params)}")
    choice(owner, "result", algo.result, ("frame", "array", "array_or_frame"))
    for field in ("summary", "version_added"):
        text(owner, field, getattr(algo, field))
    for field in ("cost", "plot", "split"):
        target(owner, field, getattr(algo, field))
    if algo.estimator is not None and not (isinstance(algo.estimator, str) and algo.estimator.isidentifier()):
        raise ValueError(f"{owner}: estimator is the class name graphops.kernels exports (a Python identifier); "
                         f"got {_given(algo.estimator)}")
    if algo.estimator_class is not None and (algo.estimator is None or not isinstance(algo.estimator_class, str)
                                             or not TARGET.match(algo.estimator_class)):
        raise ValueError(f"{owner}: estimator_class must look like 'package.module:Class' and needs estimator "
                         f"(the exported name); got {algo.estimator_class!r}")
    if algo.gram is not None and type(algo.gram).__name__ != "Gram":
        raise TypeError(f"{owner}: gram must be a graphops.Gram(...) or None; got {_given(algo.gram)}")
    return owner
