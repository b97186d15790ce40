"""Charts for the exercise, misconception, scenario and validation pages.

Pure functions: numbers in, SVG string out (via :func:`parallelsel.render.style.to_svg`). Times are
seconds in and drawn in the unit the axis names; every function takes ``salt``, unique per figure
on a page.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.ticker import PercentFormatter

from parallelsel._check import ParallelselError
from parallelsel.render.style import COLORS, chart, to_svg

__all__ = ["step_bars", "sensitivity_lines", "share_vs_degree", "validation_bars", "quote_check", "comparison_table"]

_STEP_PARTS = (("compute", "计算"), ("communication", "暴露的通信"), ("bubble", "流水线气泡"))
_STEP_COLORS = {"compute": COLORS["compute"], "communication": COLORS["comm"], "bubble": COLORS["bubble"]}
_LINE_COLORS = ["#4C78A8", "#F58518", "#54A24B", "#E45756", "#B279A2", "#9D755D", "#72B7B2", "#EECA3B"]


def _check_lengths(name: str, values: Sequence, n: int) -> None:
    if len(values) != n:
        raise ParallelselError(f"{name} has {len(values)} entries: must have one per label ({n})")


def step_bars(labels: Sequence[str], steps: Sequence, *, title: str, salt: str, unit: str = "s",
              notes: Sequence[str] | None = None, width: float = 7.5) -> str:
    """Horizontal stacked bars of one step's time: compute, exposed communication, bubble.

    ``steps`` are :class:`parallelsel.estimate.StepTime` objects (or anything with ``compute``,
    ``communication`` and ``bubble`` in seconds), one per label; ``unit`` is ``"s"`` or ``"ms"``.
    ``notes`` (optional) are printed after each bar's total, e.g. the MFU.
    """
    labels = [str(x) for x in labels]
    if not labels:
        raise ParallelselError("labels=[]: must name at least one bar")
    _check_lengths("steps", steps, len(labels))
    if notes is not None:
        _check_lengths("notes", notes, len(labels))
    scale = {"s": 1.0, "ms": 1e3}.get(unit)
    if scale is None:
        raise ParallelselError(f"unit={unit!r}: must be 's' or 'ms'")
    ys = np.arange(len(labels))[::-1]
    with chart(width=width, height=0.55 * len(labels) + 1.4) as (fig, ax):
        left = np.zeros(len(labels))
        for key, name in _STEP_PARTS:
            vals = np.array([getattr(s, key) * scale for s in steps])
            if not vals.any():
                continue
            ax.barh(ys, vals, left=left, color=_STEP_COLORS[key], height=0.6, label=name, edgecolor="white",
                    linewidth=0.5)
            left += vals
        for i, (y, total) in enumerate(zip(ys, left)):
            text = f"{total:,.2f} {unit}" + (f"  {notes[i]}" if notes is not None else "")
            ax.annotate(text, xy=(total, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
        ax.set_yticks(ys)
        ax.set_yticklabels(labels, fontsize=8)
        ax.set_xlim(0, left.max() * (1.6 if notes is not None else 1.3))
        ax.set_xlabel(f"每步时间（{unit}）")
        ax.set_title(title)
        ax.grid(False, axis="y")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        return to_svg(fig, salt)


def sensitivity_lines(series: Sequence[tuple[str, Sequence[float], Sequence[float]]], *, title: str, salt: str,
                      xlabel: str, ylabel: str = "步时 / 基线步时", reference: float | None = 1.0) -> str:
    """One line per unknown: how an estimate (relative to its baseline) moves as that unknown moves.

    ``series`` is ``[(name, xs, ys), ...]``: ``xs`` the unknown relative to its assumed value (1 =
    assumed), ``ys`` the estimate relative to its baseline. A dotted line marks ``reference``.
    """
    if not series:
        raise ParallelselError("series=[]: must hold at least one (name, xs, ys)")
    with chart(width=7.0, height=3.8) as (fig, ax):
        for i, (name, xs, ys) in enumerate(series):
            if len(xs) != len(ys):
                raise ParallelselError(f"series[{i}] ({name!r}): xs has {len(xs)} values, ys {len(ys)}: must match")
            ax.plot(xs, ys, "o-", color=_LINE_COLORS[i % len(_LINE_COLORS)], linewidth=1.5, markersize=4, label=name)
        if reference is not None:
            ax.axhline(reference, color="#333333", linestyle=":", linewidth=1)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        return to_svg(fig, salt)


def share_vs_degree(degrees: Sequence[int], series: Sequence[tuple[str, Sequence[float]]], *, title: str, salt: str,
                    xlabel: str, ylabel: str = "达到峰值算力的比例", ceiling: tuple[str, float] | None = None) -> str:
    """Lines of a share of peak (0-1, drawn as percent) against a parallel degree on a log2 x axis.

    ``series`` is ``[(name, shares), ...]`` with one share per degree; ``ceiling`` (optional) is a
    ``(label, share)`` drawn as a dashed horizontal line, e.g. the device's matmul ceiling.
    """
    xs = [int(d) for d in degrees]
    if not xs or any(d < 1 for d in xs):
        raise ParallelselError(f"degrees={degrees!r}: must list positive integers")
    if not series:
        raise ParallelselError("series=[]: must hold at least one (name, shares)")
    with chart(width=7.0, height=3.8) as (fig, ax):
        for i, (name, ys) in enumerate(series):
            _check_lengths(f"series[{i}] ({name!r})", ys, len(xs))
            ax.plot(xs, ys, "o-", color=_LINE_COLORS[i % len(_LINE_COLORS)], linewidth=1.5, markersize=4, label=name)
        if ceiling is not None:
            ax.axhline(ceiling[1], color="#333333", linestyle="--", linewidth=1, label=ceiling[0])
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs)
        ax.set_xticklabels([str(x) for x in xs])
        ax.minorticks_off()
        ax.set_ylim(0, 1)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        return to_svg(fig, salt)


def validation_bars(labels: Sequence[str], differences: Sequence[float], agrees: Sequence[bool], *, title: str,
                    salt: str) -> str:
    """Horizontal bars of (library - published) / published, one per published number.

    Bars whose library value rounds to the published one (``agrees``) are blue, the others orange.
    """
    labels = [str(x) for x in labels]
    if not labels:
        raise ParallelselError("labels=[]: must name at least one comparison")
    _check_lengths("differences", differences, len(labels))
    _check_lengths("agrees", agrees, len(labels))
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
        from matplotlib.patches import Patch

        ax.legend(handles=[Patch(color=COLORS["compute"], label="按论文的舍入一致"),
                           Patch(color=COLORS["comm"], label="按论文的舍入不一致")],
                  loc="lower right", fontsize=8, frameon=False)
        return to_svg(fig, salt)


def quote_check(labels: Sequence[str], values: Sequence[float], ceiling: float, *, title: str, salt: str,
                xlabel: str, ceiling_label: str) -> str:
    """Horizontal bars of throughputs (a quote, the estimate) against a hard ceiling drawn as a line.

    Bars above ``ceiling`` are drawn in the warning colour: no schedule can reach them.
    """
    labels = [str(x) for x in labels]
    _check_lengths("values", values, len(labels))
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


def comparison_table(comps: Sequence, extra_digits: int = 2) -> str:
    """Markdown table of :class:`parallelsel.comparisons.Comparison` rows: published, library, difference.

    The library's value is printed with ``extra_digits`` more decimals than the paper prints, so a
    reader sees both the agreement at the paper's rounding and what the rounding hides.
    """
    from parallelsel.render.lesson_text import reference_label, reference_unit
    from parallelsel.render.tables import markdown_table

    rows = []
    for c in comps:
        rows.append([
            reference_label(c.label), f"{c.published:,.{c.digits}f}", f"{c.library:,.{c.digits + extra_digits}f}",
            reference_unit(c.unit),
            f"{c.difference:+.2%}", "一致" if c.agrees else "不一致", c.source,
        ])
    return markdown_table(["对象", "论文", "本库", "单位", "相对差", "按论文舍入", "出处"], rows, align="lrrlrcl")
