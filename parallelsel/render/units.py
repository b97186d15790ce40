"""The one number and unit formatter: every number with a unit that a page, a reason or the CLI prints.

Byte sizes are binary (GiB = 2**30 bytes, printed "GiB"; TiB = 2**40) unless a decimal unit
("GB" = 10**9 bytes) is asked for, e.g. to compare with papers that quote decimal GB; link
bandwidth is decimal GB/s (10**9 bytes/s), as vendors quote links. A non-zero value is never
printed as zero: :func:`fmt_size` steps down to MiB/KiB, :func:`fmt_time` to µs/ns and
:func:`fmt_pct` prints "<0.1%".
"""

from __future__ import annotations

import math

__all__ = ["BYTE_UNITS", "SIGNIFICANT", "places", "fmt_bytes", "fmt_count", "fmt_flops", "fmt_pct", "fmt_rate", "fmt_size", "fmt_time", "time_unit"]

SIGNIFICANT = 3
"""Significant figures a number with a unit is printed to: the step-time model's measured error is several percent
(mean 3.4%, worst 9% on the validation page's runs), so a fourth figure would claim precision the model lacks."""


def places(value: float, figures: int = SIGNIFICANT) -> int:
    """Decimal places that print ``value`` (already in its display unit) to the model's precision: ``figures``
    significant figures, but at most one decimal at or above 1 (3.87 reads 3.9: two figures), never dropping integer
    digits (1,234.5 reads 1,234); below 1, two significant figures (0.25, 0.042). The one rule every ``fmt_*`` applies
    when it is not given ``digits``.

    Examples:
        >>> [places(v) for v in (71.25, 3.87, 112.04, 1234.5, 0.25, 0.042, 0)]
        [1, 1, 0, 0, 2, 3, 1]
    """
    a = abs(value)
    if a == 0 or not math.isfinite(a):
        return 1
    e = math.floor(math.log10(a))
    if a >= 1:
        return max(0, min(1, figures - 1 - e))
    return 1 - e


BYTE_UNITS = {"GiB": 2**30, "MiB": 2**20, "KiB": 2**10, "TiB": 2**40, "GB": 1e9, "MB": 1e6, "TB": 1e12, "B": 1}


def fmt_bytes(n: float, unit: str = "GiB", digits: int | None = None) -> str:
    """Bytes in a fixed unit (for a table column that names it): ``fmt_bytes(85899345920) == '80.0 GiB'``;
    exact counts with ``unit="B", digits=0``: ``'4,994,560 B'``. Without ``digits``, :func:`places` decides."""
    if unit not in BYTE_UNITS:
        raise ValueError(f"unit={unit!r}: must be one of {', '.join(BYTE_UNITS)}")
    v = n / BYTE_UNITS[unit]
    return f"{v:,.{places(v) if digits is None else digits}f} {unit}"


def fmt_size(n: float) -> str:
    """Bytes in the unit that reads best: TiB above 1 TiB (two decimals), else GiB (one decimal),
    stepping down to MiB/KiB/bytes so that a non-zero size never reads "0.0 GiB".

    Examples:
        >>> fmt_size(80 * 2**30), fmt_size(2**40 * 1.004), fmt_size(3 * 2**20), fmt_size(0), fmt_size(2**30 * 1051.3)
        ('80.0 GiB', '1.0 TiB', '3.0 MiB', '0.0 GiB', '1.0 TiB')
    """
    a = abs(n)
    for div, unit, floor in ((2**40, "TiB", 1.0), (2**30, "GiB", 0.05), (2**20, "MiB", 0.05), (2**10, "KiB", 0.05)):
        if a >= floor * div or (a == 0 and unit == "GiB"):
            return fmt_bytes(n, unit)
    return f"{n:.0f} B"


_TIME_UNITS = ((1e-6, 1e-9, "ns"), (1e-3, 1e-6, "µs"), (1, 1e-3, "ms"), (120, 1.0, "s"), (7200, 60.0, "min"),
               (172800, 3600.0, "h"), (float("inf"), 86400.0, "days"))
"""(below this many seconds, seconds per unit, unit name): the time units, shortest first."""

_UNIT_WORDS = {"zh": {"days": "天"}, "en": {}}
"""Unit names that differ by language (``lang``); the others are SI symbols or min/h in both."""


def time_unit(seconds: float, lang: str = "zh") -> tuple[float, str]:
    """Seconds per unit and the unit's name that :func:`fmt_time` prints ``seconds`` in (zero reads in ms).

    Examples:
        >>> time_unit(0.25), time_unit(300), time_unit(3 * 86400, lang="en")
        ((0.001, 'ms'), (60.0, 'min'), (86400.0, 'days'))
    """
    if lang not in _UNIT_WORDS:
        raise ValueError(f"lang={lang!r}: must be one of {', '.join(_UNIT_WORDS)}")
    s = abs(seconds)
    for below, div, name in _TIME_UNITS if s else _TIME_UNITS[2:]:
        if s < below:
            return div, _UNIT_WORDS[lang].get(name, name)
    raise ValueError(f"seconds={seconds!r}: must be a finite number")


def fmt_time(seconds: float, digits: int | None = None, lang: str = "zh") -> str:
    """Seconds as ns / µs / ms / s / min / h / days (天 in Chinese), whichever reads best (:func:`time_unit`).

    Examples:
        >>> fmt_time(0.0123), fmt_time(340000, 2), fmt_time(340000, 2, lang="en")
        ('12.3 ms', '3.94 天', '3.94 days')
    """
    div, name = time_unit(seconds, lang)
    v = seconds / div
    return f"{v:.{places(v) if digits is None else digits}f} {name}"


def fmt_pct(x: float, digits: int | None = None) -> str:
    """A fraction as a percentage (:func:`places` decides the decimals unless ``digits`` is given, two at most);
    a non-zero fraction that would round to zero prints as "<0.01%" (or "<0.1%" with ``digits=1``).

    Examples:
        >>> fmt_pct(0.4286), fmt_pct(1.0), fmt_pct(0.052), fmt_pct(0.0025), fmt_pct(1e-6), fmt_pct(1e-6, 1)
        ('42.9%', '100%', '5.2%', '0.25%', '<0.01%', '<0.1%')
    """
    if digits is None:
        digits = min(places(100 * x), 2)
    if x != 0 and round(abs(100 * x), digits) == 0:
        return ("<" if x > 0 else ">-") + (f"{10 ** -digits:.{digits}f}" if digits else "1") + "%"
    return f"{100 * x:.{digits}f}%"


def fmt_rate(bytes_per_s: float) -> str:
    """Bandwidth in decimal GB/s (10**9 bytes/s, as vendors quote links): three significant digits, at most one
    decimal (:func:`places`): ``fmt_rate(3.125e9) == '3.1 GB/s'``, ``fmt_rate(25e9) == '25 GB/s'``."""
    v = bytes_per_s / 1e9
    if v >= 100:
        return f"{v:,.0f} GB/s"
    return f"{v:.{places(v)}f} GB/s" if v < 10 else f"{v:.3g} GB/s"


def fmt_flops(flops_per_s: float) -> str:
    """FLOP/s in TFLOP/s (10**12), four significant digits below 1,000: ``165.2 TFLOP/s``, ``1,979 TFLOP/s``."""
    v = flops_per_s / 1e12
    return f"{v:,.0f} TFLOP/s" if v >= 1000 else f"{v:.4g} TFLOP/s"


def fmt_count(n: float) -> str:
    """Large counts with a suffix: 1.56B, 175.00B, 12.90M."""
    for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(n) >= div:
            return f"{n / div:.2f}{suffix}"
    return f"{n:g}"
