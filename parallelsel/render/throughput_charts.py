"""Throughput charts: quoted or estimated tokens per second against the ceiling no schedule can pass.

Pure functions: numbers in, SVG string out (via :func:`parallelsel.render.style.to_svg`); ``salt``
is unique per figure on a page.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from parallelsel.core._check import one_per
from parallelsel.render.style import COLORS, chart, to_svg

__all__ = ["quote_check"]


def quote_check(labels: Sequence[str], values: Sequence[float], ceiling: float, *, title: str, salt: str,
                xlabel: str, ceiling_label: str) -> str:
    """Horizontal bars of throughputs (a quote, the estimate) against a hard ceiling drawn as a line.

    Bars above ``ceiling`` are drawn in the warning colour: no schedule can reach them.
    """
    labels = [str(x) for x in labels]
    one_per("values", values, len(labels))
    v = np.asarray(values, dtype=float)
    ys = np.arange(len(labels))[::-1]
    colors = [COLORS["wait"] if x > ceiling else COLORS["compute"] for x in v]
    with chart(width=7.0, height=0.5 * len(labels) + 1.4) as (fig, ax):
        ax.barh(ys, v, color=colors, height=0.6)
        ax.axvline(ceiling, color="#333333", linestyle="--", linewidth=1.2)
        ax.annotate(ceiling_label, xy=(ceiling, ys.max() + 0.45), xytext=(3, 0), textcoords="offset points",
                    fontsize=8, va="center")
        for y, x in zip(ys, v):
            ax.annotate(f"{x:,.0f}", xy=(x, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
        ax.set_yticks(ys)
        ax.set_yticklabels(labels, fontsize=8)
        ax.set_xlim(0, max(v.max(), ceiling) * 1.2)
        ax.set_ylim(-0.6, ys.max() + 0.9)
        ax.set_xlabel(xlabel)
        ax.set_title(title)
        ax.grid(False, axis="y")
        return to_svg(fig, salt)
