"""The one number and unit formatter: every number with a unit that a page, a reason or the CLI prints.

Byte sizes are binary (GiB = 2**30 bytes, printed "GiB"; TiB = 2**40) unless a decimal unit
("GB" = 10**9 bytes) is asked for, e.g. to compare with papers that quote decimal GB; link
bandwidth is decimal GB/s (10**9 bytes/s), as vendors quote links. A non-zero value is never
printed as zero: :func:`fmt_size` steps down to MiB/KiB, :func:`fmt_time` to µs/ns and
:func:`fmt_pct` prints "<0.1%".
"""

from __future__ import annotations

__all__ = ["BYTE_UNITS", "fmt_bytes", "fmt_count", "fmt_flops", "fmt_pct", "fmt_rate", "fmt_size", "fmt_time"]

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


def fmt_time(seconds: float, digits: int = 1) -> str:
    """Seconds as ns / µs / ms / s / min / h / days, whichever reads best."""
    s = abs(seconds)
    if 0 < s < 1e-6:
        return f"{seconds * 1e9:.{digits}f} ns"
    if 0 < s < 1e-3:
        return f"{seconds * 1e6:.{digits}f} µs"
    if s < 1:
        return f"{seconds * 1e3:.{digits}f} ms"
    if s < 120:
        return f"{seconds:.{digits}f} s"
    if s < 7200:
        return f"{seconds / 60:.{digits}f} min"
    if s < 172800:
        return f"{seconds / 3600:.{digits}f} h"
    return f"{seconds / 86400:.{digits}f} 天"


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
    return f"{flops_per_s / 1e12:,.0f} TFLOP/s"


def fmt_count(n: float) -> str:
    """Large counts with a suffix: 1.56B, 175.00B, 12.90M."""
    for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(n) >= div:
            return f"{n / div:.2f}{suffix}"
    return f"{n:g}"
