"""The one number and unit formatter: every number with a unit that a page, a reason or the CLI prints.

Byte sizes are binary (GiB = 2**30 bytes, printed "GiB"; TiB = 2**40) unless a decimal unit
("GB" = 10**9 bytes) is asked for, e.g. to compare with papers that quote decimal GB; link
bandwidth is decimal GB/s (10**9 bytes/s), as vendors quote links. A non-zero value is never
printed as zero: :func:`fmt_size` steps down to MiB/KiB, :func:`fmt_time` to µs/ns and
:func:`fmt_pct` prints "<0.1%".
"""

from __future__ import annotations

__all__ = ["BYTE_UNITS", "fmt_bytes", "fmt_count", "fmt_flops", "fmt_pct", "fmt_rate", "fmt_size", "fmt_time", "time_unit"]

BYTE_UNITS = {"GiB": 2**30, "MiB": 2**20, "KiB": 2**10, "TiB": 2**40, "GB": 1e9, "MB": 1e6, "TB": 1e12, "B": 1}


def fmt_bytes(n: float, unit: str = "GiB", digits: int = 1) -> str:
    """Bytes in a fixed unit (for a table column that names it): ``fmt_bytes(85899345920) == '80.0 GiB'``;
    exact counts with ``unit="B", digits=0``: ``'4,994,560 B'``."""
    if unit not in BYTE_UNITS:
        raise ValueError(f"unit={unit!r}: must be one of {', '.join(BYTE_UNITS)}")
    return f"{n / BYTE_UNITS[unit]:,.{digits}f} {unit}"


def fmt_size(n: float) -> str:
    """Bytes in the unit that reads best: TiB above 1 TiB (two decimals), else GiB (one decimal),
    stepping down to MiB/KiB/bytes so that a non-zero size never reads "0.0 GiB".

    >>> fmt_size(80 * 2**30), fmt_size(2**40 * 1.004), fmt_size(3 * 2**20), fmt_size(0)
    ('80.0 GiB', '1.00 TiB', '3.0 MiB', '0.0 GiB')
    """
    a = abs(n)
    if a >= 2**40:
        return f"{n / 2**40:,.2f} TiB"
    if a == 0 or a >= 0.05 * 2**30:
        return f"{n / 2**30:.1f} GiB"
    if a >= 0.05 * 2**20:
        return f"{n / 2**20:.1f} MiB"
    if a >= 0.05 * 2**10:
        return f"{n / 2**10:.1f} KiB"
    return f"{n:.0f} B"


_TIME_UNITS = ((1e-6, 1e-9, "ns"), (1e-3, 1e-6, "µs"), (1, 1e-3, "ms"), (120, 1.0, "s"), (7200, 60.0, "min"),
               (172800, 3600.0, "h"), (float("inf"), 86400.0, "days"))
"""(below this many seconds, seconds per unit, unit name): the time units, shortest first."""

_UNIT_WORDS = {"zh": {"days": "天"}, "en": {}}
"""Unit names that differ by language (``lang``); the others are SI symbols or min/h in both."""


def time_unit(seconds: float, lang: str = "zh") -> tuple[float, str]:
    """Seconds per unit and the unit's name that :func:`fmt_time` prints ``seconds`` in (zero reads in ms).

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


def fmt_time(seconds: float, digits: int = 1, lang: str = "zh") -> str:
    """Seconds as ns / µs / ms / s / min / h / days (天 in Chinese), whichever reads best (:func:`time_unit`).

    >>> fmt_time(0.0123), fmt_time(340000, 2), fmt_time(340000, 2, lang="en")
    ('12.3 ms', '3.94 天', '3.94 days')
    """
    div, name = time_unit(seconds, lang)
    return f"{seconds / div:.{digits}f} {name}"


def fmt_pct(x: float, digits: int = 1) -> str:
    """A fraction as a percentage; a non-zero fraction that would round to zero prints as "<0.1%"."""
    if x != 0 and round(abs(100 * x), digits) == 0:
        return ("<" if x > 0 else ">-") + (f"{10 ** -digits:.{digits}f}" if digits else "1") + "%"
    return f"{100 * x:.{digits}f}%"


def fmt_rate(bytes_per_s: float) -> str:
    """Bandwidth in decimal GB/s (10**9 bytes/s, as vendors quote links), three significant digits."""
    v = bytes_per_s / 1e9
    return f"{v:,.0f} GB/s" if v >= 100 else f"{v:.3g} GB/s"


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
