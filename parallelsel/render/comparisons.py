"""The library beside published figures: a table of the comparisons and a chart of their relative differences.

Reads :class:`parallelsel.course.comparisons.Comparison` rows (published value, library value, the paper's
rounding). Pure functions: Markdown or SVG string out; a chart's ``salt`` is unique per figure on a page.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import numpy as np
from matplotlib.patches import Patch
from matplotlib.ticker import PercentFormatter

from parallelsel.core._check import ParallelselError, one_per
from parallelsel.render.lesson_text import reference_label, reference_unit
from parallelsel.render.reasons import WORDS, plan_label
from parallelsel.render.style import COLORS, chart, to_svg
from parallelsel.render.tables import markdown_table
from parallelsel.render.units import fmt_pct

__all__ = ["comparison_table", "pick_summary", "pick_table", "validation_bars"]


def validation_bars(labels: Sequence[str], differences: Sequence[float], agrees: Sequence[bool], *, title: str,
                    salt: str) -> str:
    """Horizontal bars of (library - published) / published, one per published number.

    Bars whose library value rounds to the published one (``agrees``) are blue, the others orange.
    """
    labels = [str(x) for x in labels]
    if not labels:
        raise ParallelselError("labels=[]: must name at least one comparison")
    one_per("differences", differences, len(labels))
    one_per("agrees", agrees, len(labels))
    d = np.asarray(differences, dtype=float)
    ys = np.arange(len(labels))[::-1]
    colors = [COLORS["compute"] if a else COLORS["comm"] for a in agrees]
    with chart(width=7.5, height=0.26 * len(labels) + 1.3) as (fig, ax):
        ax.barh(ys, d, color=colors, height=0.7)
        ax.axvline(0, color="#333333", linewidth=0.8)
        ax.set_yticks(ys)
        ax.set_yticklabels(labels, fontsize=7)
        ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=1))
        lim = max(abs(d).max() * 1.15, 0.01)
        ax.set_xlim(-lim, lim)
        ax.set_xlabel("相对差（库 − 论文）/ 论文")
        ax.set_title(title)
        ax.grid(False, axis="y")
        ax.legend(handles=[Patch(color=COLORS["compute"], label="按论文的舍入一致"),
                           Patch(color=COLORS["comm"], label="按论文的舍入不一致")],
                  loc="lower right", fontsize=8, frameon=False)
        return to_svg(fig, salt)


def comparison_table(comps: Sequence, extra_digits: int = 2) -> str:
    """Markdown table of :class:`parallelsel.course.comparisons.Comparison` rows: published, library, difference.

    The library's value is printed with ``extra_digits`` more decimals than the paper prints, so a
    reader sees both the agreement at the paper's rounding and what the rounding hides.
    """
    rows = []
    for c in comps:
        rows.append([
            reference_label(c.label), f"{c.published:,.{c.digits}f}", f"{c.library:,.{c.digits + extra_digits}f}",
            reference_unit(c.unit),
            f"{c.difference:+.2%}", "一致" if c.agrees else "不一致", c.source,
        ])
    return markdown_table(["对象", "论文", "本库", "单位", "相对差", "按论文舍入", "出处"], rows, align="lrrlrcl")


PICK_HEADERS = ("运行", "公布的方案", "本库的首选", "步时比（公布 ÷ 首选）", "不同的字段", "差距超过门槛时，靠什么实测来分")


def pick_table(cases: Sequence) -> str:
    """Markdown table of :class:`parallelsel.course.measured.PickCompared` rows: each run's published plan, the
    search's pick, the step ratio, the fields that differ and, outside the tie band, the measurement that decides."""
    rows = []
    for c in cases:
        if c.ratio is None:
            rows.append([c.run.label, plan_label(c.published.plan), "—（公布的方案本库判为放不下）", "—", "—", "—"])
            continue
        same = not c.differ
        rows.append([c.run.label, plan_label(c.published.plan), "同一方案" if same else plan_label(c.pick.plan),
                     f"{c.ratio:.2f}", "—" if same else "、".join(f"`{f}`" for f in c.differ),
                     "—" if same or c.within_tie else "；".join(WORDS["zh"]["decide"][d] for d in c.decide)])
    return markdown_table(list(PICK_HEADERS), rows, align="lllrll")


def pick_summary(name: str, cases: Sequence, band: float) -> str:
    """One sentence over :class:`parallelsel.course.measured.PickCompared` rows: how many were timed, the median
    published/pick step ratio and how many fall within the tie ``band``."""
    timed = [c for c in cases if c.ratio is not None]
    return (f"{name}：{len(timed)} 行，公布 ÷ 首选的中位数 {statistics.median(c.ratio for c in timed):.2f}，"
            f"{sum(c.within_tie for c in timed)} 行在平局门槛 {fmt_pct(band)} 之内。")
