"""Input validation shared by every module: each failure names the parameter, the value and the rule.

Ranges are part of the rule. Every count is an exact integer no larger than :data:`MAX_INT`
(2**53, the largest range in which float64 -- the type every time and byte count is computed in --
represents each integer exactly), and every real is finite and between :data:`MIN_REAL` (0 for a value
that may be zero) and :data:`MAX_REAL`: products and quotients of a handful of such values then stay
far inside float64's range (about 1.8e308), so no estimate can overflow to ``inf`` or divide by
a value that rounds to zero. Numpy scalars are accepted and converted to Python ``int`` /
``float`` (numpy's fixed-width integers would otherwise wrap around silently in products).
"""

from __future__ import annotations

import math
import numbers

MAX_INT = 2**53
"""Largest count accepted anywhere: float64 represents every integer up to 2**53 exactly (IEEE 754)."""

MIN_REAL = 1e-30
MAX_REAL = 1e30
"""Accepted magnitude of a non-zero real input (bandwidth, latency, FLOP/s, bytes, efficiency...)."""


class ParallelselError(ValueError):
    """Bad input to parallelsel. A ``ValueError`` so callers can catch either."""


def _int_rule(minimum: int, maximum: int) -> str:
    return f"must be an integer >= {minimum} and <= {maximum}"


def positive_int(name: str, value, minimum: int = 1, maximum: int = MAX_INT) -> int:
    """Return ``value`` as a Python int if ``minimum`` <= value <= ``maximum``; raise otherwise.

    Accepts Python and numpy integers and whole floats (``2.0`` is 2); refuses bools, strings,
    non-whole or non-finite floats.

    Examples:
        >>> positive_int("dp", 2.0), type(positive_int("dp", 2.0)).__name__
        (2, 'int')
        >>> positive_int("dp", True)
        Traceback (most recent call last):
        ...
        parallelsel.core._check.ParallelselError: dp=True: must be an integer >= 1 and <= 9007199254740992
    """
    if type(value) is int and minimum <= value <= maximum:  # the common case, without the ABC checks below
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParallelselError(f"{name}={value!r}: {_int_rule(minimum, maximum)}")
    if isinstance(value, numbers.Integral):
        v = int(value)
    else:
        f = float(value)
        if not (math.isfinite(f) and f.is_integer()):
            raise ParallelselError(f"{name}={value!r}: {_int_rule(minimum, maximum)}")
        v = int(f)
    if not minimum <= v <= maximum:
        raise ParallelselError(f"{name}={value!r}: {_int_rule(minimum, maximum)}")
    return v


def positive_number(name: str, value, allow_zero: bool = False, maximum: float = MAX_REAL) -> float:
    """Return ``value`` as a float if it is finite and in [MIN_REAL, ``maximum``] ([0, ``maximum``] with ``allow_zero``).

    A value that may be zero is never a divisor, so only its upper bound matters.
    """
    rule = (f"must be a finite number >= 0 (and <= {maximum:g})" if allow_zero
            else f"must be a finite number > 0 (between {MIN_REAL:g} and {maximum:g})")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParallelselError(f"{name}={value!r}: {rule}")
    try:
        v = float(value)
    except OverflowError:  # an int too large for a float
        raise ParallelselError(f"{name}={value!r}: {rule}") from None
    low = 0.0 if allow_zero else MIN_REAL
    if not (math.isfinite(v) and low <= v <= maximum):
        raise ParallelselError(f"{name}={value!r}: {rule}")
    return v


def flag(name: str, value) -> bool:
    """Return ``value`` if it is a bool (numpy's included); a string such as ``"no"`` is refused, not read as true."""
    if value is True or value is False:
        return value
    if type(value).__name__ == "bool_" and type(value).__module__ == "numpy":
        return bool(value)
    raise ParallelselError(f"{name}={value!r}: must be True or False")


def choice(name: str, value, allowed) -> str:
    """Return ``value`` if it is one of ``allowed``; raise listing the allowed values."""
    try:
        ok = value in allowed
    except TypeError:  # unhashable value tested against a set
        ok = False
    if not ok:
        raise ParallelselError(f"{name}={value!r}: must be one of {', '.join(repr(a) for a in allowed)}")
    return value


def one_per(name: str, values, n: int, per: str = "label") -> None:
    """``values`` must hold one entry per ``per`` (``n`` of them): a chart's parallel lists line up."""
    if len(values) != n:
        raise ParallelselError(f"{name} has {len(values)} entries: must have one per {per} ({n})")


def cached_hash(obj) -> int:
    """Hash of a frozen dataclass record over the fields it compares, computed once: the search hashes the same
    model, device and plan many times an estimate (its caches are keyed on them). Assign as ``__hash__`` in the
    class body; equal records hash alike, as the dataclass's own hash would."""
    try:
        return obj.__dict__["_hash"]
    except KeyError:
        from dataclasses import fields

        value = hash(tuple(getattr(obj, f.name) for f in fields(obj) if f.compare))
        object.__setattr__(obj, "_hash", value)
        return value


def state_without_hash(obj) -> dict:
    """The record's state for pickle and copy, without :func:`cached_hash`'s value: string hashes differ between
    processes, so a hash carried into another one would not match its equal records there. Assign as
    ``__getstate__`` beside ``__hash__ = cached_hash``."""
    return {k: v for k, v in obj.__dict__.items() if k != "_hash"}


def store(obj, name: str, value) -> None:
    """Write a validated (normalised) value back into a frozen dataclass field."""
    object.__setattr__(obj, name, value)


class UnknownPresetError(ParallelselError, KeyError):
    """An unknown preset key: a ``ValueError`` like every bad input, and a ``KeyError`` as dict users expect."""

    def __str__(self) -> str:  # KeyError would print the message quoted
        return str(self.args[0])


class Catalogue(dict):
    """A preset catalogue (``ps.MODELS``, ``ps.DEVICES``...): an unknown key names itself and the known ones."""

    def __init__(self, kind: str, items: dict):
        unsourced = [k for k, v in items.items() if not getattr(v, "source", "")]
        if unsourced:  # a preset is one record that names where its numbers come from
            raise ValueError(f"{kind} presets without a source: {', '.join(unsourced)}")
        super().__init__(items)
        self.kind = kind

    def __missing__(self, key):
        raise UnknownPresetError(f"{self.kind}={key!r}: unknown preset; known: {', '.join(sorted(self))}")


def record(name: str, value, kind: type, catalogue: dict):
    """``value`` if it is a ``kind`` record, else the record ``catalogue`` (``ps.MODELS``, ``ps.RECIPES``) keeps
    under the key ``value``, as the command line takes it (``--model llama3-8b``)."""
    if isinstance(value, kind):
        return value
    if isinstance(value, str) and value in catalogue:
        return catalogue[value]
    example = next(iter(catalogue))
    raise ParallelselError(f"{name}={value!r}: must be a {kind.__name__} or a key of ps.{catalogue.kind.upper()}S "
                           f"(e.g. {example!r}); known keys: {', '.join(sorted(catalogue))}")


def preset(name: str, key, catalogue: dict):
    """Look ``key`` up in a preset catalogue, with the known keys in the error."""
    try:
        known = key in catalogue
    except TypeError:
        known = False
    if not known:
        raise ParallelselError(f"{name}={key!r}: unknown preset; known: {', '.join(sorted(catalogue))}")
    return catalogue[key]
