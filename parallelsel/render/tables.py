"""Markdown tables and unit formatting: the only place numbers become text with units.

Byte sizes are printed in binary units (GiB = 2**30 bytes, labelled "GiB") unless ``unit="GB"``
(10**9 bytes) is asked for, e.g. to compare with papers that quote decimal GB.
"""

from __future__ import annotations

import unicodedata
from typing import Iterable, Sequence

BYTE_UNITS = {"GiB": 2**30, "MiB": 2**20, "KiB": 2**10, "TiB": 2**40, "GB": 1e9, "MB": 1e6, "TB": 1e12}


def fmt_bytes(n: float, unit: str = "GiB", digits: int = 1) -> str:
    """``fmt_bytes(85899345920) == '80.0 GiB'``."""
    if unit not in BYTE_UNITS:
        raise ValueError(f"unit={unit!r}: must be one of {', '.join(BYTE_UNITS)}")
    return f"{n / BYTE_UNITS[unit]:,.{digits}f} {unit}"


def fmt_time(seconds: float, digits: int = 1) -> str:
    """Seconds as µs / ms / s / min / h / days, whichever reads best."""
    s = abs(seconds)
    if s < 1e-3:
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
    return f"{100 * x:.{digits}f}%"


def fmt_rate(bytes_per_s: float) -> str:
    """Bandwidth in decimal GB/s (10**9 bytes/s, as vendors quote links), three significant digits."""
    v = bytes_per_s / 1e9
    return f"{v:,.0f} GB/s" if v >= 100 else f"{v:.3g} GB/s"


def fmt_flops(flops_per_s: float) -> str:
    return f"{flops_per_s / 1e12:,.0f} TFLOP/s"


def fmt_count(n: float) -> str:
    """Large counts with a Chinese-friendly suffix-free form: 1.56B, 175.0B, 12.9M."""
    for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(n) >= div:
            return f"{n / div:.2f}{suffix}"
    return f"{n:g}"


def _width(text: str) -> int:
    # East Asian wide characters take two columns in a terminal.
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence], align: str | None = None) -> str:
    """A GitHub-flavoured Markdown table, padded so it also reads well in a terminal.

    ``align`` is one character per column: ``l``, ``r`` or ``c`` (default: left).
    """
    headers = [str(h) for h in headers]
    body = [["" if c is None else str(c).replace("|", "\\|").replace("\n", " ") for c in row] for row in rows]
    n = len(headers)
    for i, row in enumerate(body):
        if len(row) != n:
            raise ValueError(f"rows[{i}] has {len(row)} cells: must have {n}, one per header")
    align = align or "l" * n
    if len(align) != n or set(align) - set("lrc"):
        raise ValueError(f"align={align!r}: must be {n} characters from 'l', 'r', 'c'")
    widths = [max([_width(h)] + [_width(r[i]) for r in body] + [3]) for i, h in enumerate(headers)]

    def line(cells):
        out = []
        for c, w, a in zip(cells, widths, align):
            pad = w - _width(c)
            out.append(" " * pad + c if a == "r" else c + " " * pad)
        return "| " + " | ".join(out) + " |"

    rule = {"l": lambda w: ":" + "-" * (w - 1), "r": lambda w: "-" * (w - 1) + ":", "c": lambda w: ":" + "-" * (w - 2) + ":"}
    sep = "| " + " | ".join(rule[a](w) for a, w in zip(align, widths)) + " |"
    return "\n".join([line(headers), sep] + [line(r) for r in body]) + "\n"
