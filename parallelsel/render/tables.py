"""Markdown tables. Numbers become text with units in :mod:`parallelsel.render.units` (re-exported here)."""

from __future__ import annotations

import unicodedata
from typing import Iterable, Sequence

from parallelsel.render.units import (  # noqa: F401 - the formatters live in units; re-exported here
    BYTE_UNITS, fmt_bytes, fmt_count, fmt_flops, fmt_pct, fmt_rate, fmt_size, fmt_time,
)


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


def folded(title: str, body: str, kind: str = "note") -> str:
    """``body`` (Markdown) inside a collapsed block ``??? kind "title"`` (pymdownx.details), for the columns or
    sentences a table leaves out: the reader opens it when they want the detail.

    Examples:
        >>> print(folded("全部理由", "- 第一条\\n- 第二条\\n"), end="")
        ??? note "全部理由"
        <BLANKLINE>
            - 第一条
            - 第二条
    """
    lines = body.rstrip("\n").splitlines()
    return f'??? {kind} "{title}"\n\n' + "".join(f"    {line}\n" if line.strip() else "\n" for line in lines)


def folded_html(title: str, html: str, kind: str = "note") -> str:
    """Already-rendered HTML (a table printed by an ``html="true"`` snippet) inside a collapsed block: the element
    pymdownx.details writes for ``??? kind "title"``, so it looks like (and counts as) a fold.

    Examples:
        >>> print(folded_html("全部数值", "<table></table>"), end="")
        <details class="note"><summary>全部数值</summary>
        <table></table>
        </details>
    """
    esc = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return f'<details class="{kind}"><summary>{esc}</summary>\n{html.strip()}\n</details>\n'
