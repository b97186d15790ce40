"""Input validation shared by every module: each failure names the parameter, the value and the rule."""

from __future__ import annotations

import math
import numbers


class ParallelselError(ValueError):
    """Bad input to parallelsel. A ``ValueError`` so callers can catch either."""


def positive_int(name: str, value, minimum: int = 1) -> int:
    """Return ``value`` as an int if it is an integer >= ``minimum``; raise otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer() and value >= minimum:
            return int(value)
        raise ParallelselError(f"{name}={value!r}: must be an integer >= {minimum}")
    if value < minimum:
        raise ParallelselError(f"{name}={value!r}: must be an integer >= {minimum}")
    return int(value)


def positive_number(name: str, value, allow_zero: bool = False) -> float:
    """Return ``value`` as a float if it is a finite number > 0 (or >= 0 with ``allow_zero``)."""
    rule = ">= 0" if allow_zero else "> 0"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParallelselError(f"{name}={value!r}: must be a finite number {rule}")
    v = float(value)
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise ParallelselError(f"{name}={value!r}: must be a finite number {rule}")
    return v


def choice(name: str, value, allowed) -> str:
    """Return ``value`` if it is one of ``allowed``; raise listing the allowed values."""
    if value not in allowed:
        raise ParallelselError(f"{name}={value!r}: must be one of {', '.join(repr(a) for a in allowed)}")
    return value


class UnknownPresetError(ParallelselError, KeyError):
    """An unknown preset key: a ``ValueError`` like every bad input, and a ``KeyError`` as dict users expect."""

    def __str__(self) -> str:  # KeyError would print the message quoted
        return str(self.args[0])


class Catalogue(dict):
    """A preset catalogue (``ps.MODELS``, ``ps.DEVICES``...): an unknown key names itself and the known ones."""

    def __init__(self, kind: str, items: dict):
        super().__init__(items)
        self.kind = kind

    def __missing__(self, key):
        raise UnknownPresetError(f"{self.kind}={key!r}: unknown preset; known: {', '.join(sorted(self))}")


def preset(name: str, key, catalogue: dict):
    """Look ``key`` up in a preset catalogue, with the known keys in the error."""
    if key not in catalogue:
        raise ParallelselError(f"{name}={key!r}: unknown preset; known: {', '.join(sorted(catalogue))}")
    return catalogue[key]
