"""Decisions as data: a :class:`Reason` is a stable code plus the numbers it rests on.

Every verdict reason, hard-constraint violation, search exclusion and ranking explanation in
parallelsel is a ``Reason``: a snake_case ASCII ``code`` that programs match on, and ``values`` in
library units (bytes, seconds, FLOPs, bytes/s, plain counts, fractions in 0..1, ASCII preset keys).
Only :mod:`parallelsel.render.reasons` turns a reason into a sentence (Chinese, or English with
``lang="en"``), so a page, a test, the JSON and the CLI agree; ``str(reason)`` is that Chinese sentence.
This module sits at the bottom layer: it imports nothing from parallelsel.

How to add a reason code (for every engineer):

1. Where the decision is made, emit it with a *literal* code:
   ``Reason("state_exceeds_device", {"bytes": need, "capacity": cap, "device": dev.key})``.
   Values are numbers in library units, ``None``, ASCII strings, tuples of those, or nested
   mappings (e.g. ``plan.as_dict()``); never a formatted string.
2. Add one entry for that code to ``ZH`` and to ``EN`` in ``parallelsel/render/reasons.py``: a
   template whose ``{placeholders}`` name the values, with a unit spec where a unit is printed
   (``{bytes:size}``, ``{seconds:secs}``, ``{share:pct}``...; the specs are listed there).

``tests/test_reasons.py`` finds every literal ``Reason("...")`` code under ``parallelsel/`` and fails
if a language lacks its template, if the two languages name different values, or if a rendered
sentence ends in a colon or prints a zero for a non-zero value. Tests assert codes and values,
never the prose.

Examples:
    >>> r = Reason("heads_not_divisible", {"heads": 96, "tp": 7})
    >>> r.code, r.values["tp"], r.to_dict()
    ('heads_not_divisible', 7, {'code': 'heads_not_divisible', 'values': {'heads': 96, 'tp': 7}})
    >>> r == Reason("heads_not_divisible", {"tp": 7, "heads": 96}), len({r, Reason(r.code, dict(r.values))})
    (True, 1)
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import total_ordering
from types import MappingProxyType

__all__ = ["Reason", "codes", "first", "to_json"]

_CODE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")


def _freeze(value, where):
    """A read-only copy of ``value``: lists become tuples, mappings become read-only mappings. ``where`` is the
    value's path (a name, or (parent path, key or index)), spelt out only in an error."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{_path(where)}={value!r}: reason values must be finite numbers")
        return value
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            t = type(v)  # scalars, the common case, are kept as they are without a call per value
            out[str(k)] = v if (t is int or t is str or t is bool or v is None
                                or (t is float and math.isfinite(v))) else _freeze(v, (where, k))
        return MappingProxyType(out)
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v, (where, i)) for i, v in enumerate(value))
    if hasattr(value, "__index__"):  # numpy integers
        return int(value)
    if hasattr(value, "__float__") and not isinstance(value, (bytes, complex)):  # numpy floats
        return _freeze(float(value), where)
    raise ValueError(f"{_path(where)}={value!r}: a reason value must be a number, str, None, tuple or mapping, "
                     f"got {type(value).__name__}")


def _path(where) -> str:
    """``values['a'][0]`` from the nested (parent, key) pairs :func:`_freeze` passes down."""
    if isinstance(where, str):
        return where
    parent, key = where
    return f"{_path(parent)}[{key!r}]"


def _key(value):
    """A hashable, totally ordered stand-in for a frozen value."""
    if isinstance(value, Mapping):
        return ("m", tuple((k, _key(v)) for k, v in sorted(value.items())))
    if isinstance(value, tuple):
        return ("t", tuple(_key(v) for v in value))
    return (type(value).__name__, repr(value))


def _plain(value):
    """The JSON-able form of a frozen value (read-only mappings to dicts, tuples to lists)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


@total_ordering
@dataclass(frozen=True, eq=False)
class Reason:
    """One decision as data: ``code`` (stable snake_case ASCII) and ``values`` (library units).

    Frozen, hashable, comparable (equal when code and values are equal, ordered by code then
    values) and JSON-able through :meth:`to_dict`. ``str()`` gives the Chinese sentence from
    :mod:`parallelsel.render.reasons`.
    """

    code: str
    values: Mapping = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.code, str) or not _CODE.match(self.code):
            raise ValueError(f"code={self.code!r}: a reason code must be snake_case ASCII (e.g. 'heads_not_divisible')")
        if not isinstance(self.values, Mapping):
            raise ValueError(f"values={self.values!r}: must be a mapping of value names to numbers or strings")
        object.__setattr__(self, "values", _freeze(self.values, "values"))

    def _sort_key(self):
        return (self.code, _key(self.values))

    def __eq__(self, other):
        if not isinstance(other, Reason):
            return NotImplemented
        return self._sort_key() == other._sort_key()

    def __lt__(self, other):
        if not isinstance(other, Reason):
            return NotImplemented
        return self._sort_key() < other._sort_key()

    def __hash__(self):
        return hash(self._sort_key())

    def __repr__(self) -> str:
        return f"Reason({self.code!r}, {_plain(self.values)!r})"

    def __str__(self) -> str:
        # Programs read the code; the sentence is written by parallelsel.render.reasons.text (the top layer).
        return f"{self.code} {_plain(self.values)}"

    def __getitem__(self, name: str):
        """``reason["bytes"]`` is ``reason.values["bytes"]``."""
        return self.values[name]

    def to_dict(self) -> dict:
        """``{"code": ..., "values": {...}}`` with plain dicts and lists, ready for ``json.dumps``."""
        return {"code": self.code, "values": _plain(self.values)}


def codes(reasons) -> tuple[str, ...]:
    """The codes of ``reasons``, in order (what tests compare)."""
    return tuple(r.code for r in reasons)


def first(reasons, code: str) -> Reason | None:
    """The first reason in ``reasons`` with ``code``, or None."""
    return next((r for r in reasons if r.code == code), None)


def to_json(reasons) -> list[dict]:
    """``[r.to_dict() for r in reasons]`` (without the rendered text; see ``render.reasons.as_json``)."""
    return [r.to_dict() for r in reasons]
