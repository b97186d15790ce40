"""Step-timeline charts and the curves of the mechanics pages.

* :func:`step_decomposition` -- stacked bars per plan (or per GPU count P) of compute, recompute,
  exposed communication and bubble, in seconds and as shares of the step, with E(P) on top: the
  "decompose the step timeline" advice of the lesson (docs/mechanics/scaling.md).
* :func:`step_strips` -- one horizontal bar per plan: the step laid out as compute | exposed
  communication | bubble, in seconds.
* :func:`curves` -- lines of y against x with optional log axes and dashed reference lines.

Pure functions: numbers in (seconds, bytes, counts), SVG string out via
:func:`parallelsel.render.style.to_svg`. Every function takes ``salt``, unique per figure on a page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.ticker import FuncFormatter, PercentFormatter

from parallelsel._check import ParallelselError
from parallelsel.render.style import COLORS, MARKERS, SERIES, chart, to_svg

__all__ = ["STEP_LABELS", "scaling_parts", "step_decomposition", "step_strips", "curves"]

STEP_LABELS = {
    "compute": "计算",
    "recompute": "重算",
    "communication": "暴露通信",
    "bubble": "气泡（等待）",
}
"""Chinese legend names for the parts of a step (the keys of ``StepTime.decomposition`` plus recompute)."""

_STEP_COLORS = {
    "compute": COLORS["compute"],
    "recompute": COLORS["recompute"],
    "communication": COLORS["comm"],
    "bubble": COLORS["bubble"],
}


def scaling_parts(points) -> dict[str, list[float]]:
    """Seconds per step of each :class:`parallelsel.estimate.ScalingPoint`, split for the charts here.

    "compute" is the useful (model-FLOPs) share E(P) of the step; "recompute", "communication" and
    "bubble" are the losses, so the four add up to the step time.
    """
    parts: dict[str, list[float]] = {"compute": [], "recompute": [], "communication": [], "bubble": []}
    for pt in points:
        total = pt.estimate.step.total
        parts["compute"].append(pt.efficiency * total)
        for k, share in pt.losses:
            parts[k].append(share * total)
    return parts


def _check_parts(labels: Sequence[str], parts: Mapping[str, Sequence[float]]) -> list[str]:
    labels = [str(x) for x in labels]
    if not labels:
        raise ParallelselError("labels=[]: must name at least one bar")
    if not parts:
        raise ParallelselError("parts={}: must hold at least one part (e.g. 'compute')")
    for name, values in parts.items():
        if name not in _STEP_COLORS:
            raise ParallelselError(f"parts[{name!r}]: unknown part; must be one of {', '.join(_STEP_COLORS)}")
        if len(values) != len(labels):
            raise ParallelselError(f"parts[{name!r}] has {len(values)} values: must have one per label ({len(labels)})")
        if any(v < 0 for v in values):
            raise ParallelselError(f"parts[{name!r}]={list(values)!r}: times must be >= 0")
    return labels


def _time_unit(seconds: float) -> tuple[float, str]:
    """A divisor and unit name so the largest time reads between 1 and 1000."""
    if seconds >= 1:
        return 1.0, "s"
    if seconds >= 1e-3:
        return 1e-3, "ms"
    return 1e-6, "µs"


def step_decomposition(labels: Sequence[str], parts: Mapping[str, Sequence[float]], *, title: str, salt: str,
                       xlabel: str, efficiency: Sequence[float] | None = None, width: float = 8.0,
                       height: float = 3.6) -> str:
    """Two panels of stacked bars, one bar per label: the step in seconds (left) and as shares (right).

    ``parts`` maps "compute", "recompute", "communication" and/or "bubble" to seconds per bar (drawn
    in that order, bottom up). With ``efficiency`` (e.g. E(P) per bar) its values are drawn as a line
    with points on the share panel: when the parts are useful compute and the losses, E(P) is the
    top of the compute segment.
    """
    labels = _check_parts(labels, parts)
    order = [k for k in _STEP_COLORS if k in parts]
    totals = [sum(parts[k][i] for k in order) for i in range(len(labels))]
    if any(t <= 0 for t in totals):
        raise ParallelselError(f"parts: every bar must have a positive total, got {totals!r}")
    div, unit = _time_unit(max(totals))
    xs = list(range(len(labels)))
    with chart(width=width, height=height, nrows=1, ncols=2) as (fig, (a0, a1)):
        bottom = [0.0] * len(labels)
        sbottom = [0.0] * len(labels)
        for k in order:
            vals = [v / div for v in parts[k]]
            shares = [v / t for v, t in zip(parts[k], totals)]
            a0.bar(xs, vals, bottom=bottom, color=_STEP_COLORS[k], width=0.65, label=STEP_LABELS[k],
                   edgecolor="white", linewidth=0.5)
            a1.bar(xs, shares, bottom=sbottom, color=_STEP_COLORS[k], width=0.65, edgecolor="white", linewidth=0.5)
            bottom = [b + v for b, v in zip(bottom, vals)]
            sbottom = [b + v for b, v in zip(sbottom, shares)]
        for x, b in zip(xs, bottom):
            a0.annotate(f"{b:.3g}", xy=(x, b), xytext=(0, 2), textcoords="offset points", ha="center",
                        va="bottom", fontsize=7)
        if efficiency is not None:
            eff = list(efficiency)
            if len(eff) != len(labels):
                raise ParallelselError(f"efficiency has {len(eff)} values: must have one per label ({len(labels)})")
            a1.plot(xs, eff, color="#222222", marker="o", markersize=4, linewidth=1.3, label="E(P)")
            for x, e in zip(xs, eff):
                a1.annotate(f"{100 * e:.0f}%", xy=(x, e), xytext=(0, 4), textcoords="offset points",
                            ha="center", va="bottom", fontsize=7, color="#222222")
            a1.legend(loc="lower left", fontsize=8, frameon=True)
        a0.set_ylabel(f"每步时间（{unit}）")
        a0.set_title("每步时间", fontsize=9)
        a1.set_ylabel("占每步时间的比例")
        a1.set_ylim(0, 1.08)
        a1.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        a1.set_title("各部分占比", fontsize=9)
        for ax in (a0, a1):
            ax.set_xticks(xs)
            ax.set_xticklabels(labels, fontsize=8)
            ax.set_xlabel(xlabel)
            ax.grid(False, axis="x")
            ax.set_axisbelow(True)
        a0.set_ylim(0, max(bottom) * 1.12)
        a0.legend(loc="upper right", fontsize=8, frameon=False)
        fig.suptitle(title, fontsize=10)
        fig.tight_layout()
        return to_svg(fig, salt)


def step_strips(labels: Sequence[str], parts: Mapping[str, Sequence[float]], *, title: str, salt: str,
                width: float = 8.0) -> str:
    """One horizontal bar per label: the step as consecutive segments (compute, recompute, communication, bubble).

    Seconds in; the axis unit (s, ms or µs) follows the longest step. Each bar ends with its total.
    """
    labels = _check_parts(labels, parts)
    order = [k for k in _STEP_COLORS if k in parts]
    totals = [sum(parts[k][i] for k in order) for i in range(len(labels))]
    div, unit = _time_unit(max(totals))
    ys = list(range(len(labels)))[::-1]
    with chart(width=width, height=0.9 + 0.5 * len(labels)) as (fig, ax):
        left = [0.0] * len(labels)
        for k in order:
            vals = [v / div for v in parts[k]]
            ax.barh(ys, vals, left=left, color=_STEP_COLORS[k], height=0.6, label=STEP_LABELS[k],
                    edgecolor="white", linewidth=0.5)
            left = [a + v for a, v in zip(left, vals)]
        for y, t in zip(ys, left):
            ax.annotate(f"{t:.3g} {unit}", xy=(t, y), xytext=(3, 0), textcoords="offset points", va="center",
                        fontsize=8)
        ax.set_yticks(ys)
        ax.set_yticklabels(labels, fontsize=8)
        ax.set_xlim(0, max(left) * 1.15)
        ax.set_xlabel(f"一步内的时间（{unit}）")
        ax.grid(False, axis="y")
        ax.set_axisbelow(True)
        ax.set_title(title, fontsize=10)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        return to_svg(fig, salt)


def curves(x: Sequence[float], series: Mapping[str, Sequence[float | None]], *, title: str, xlabel: str,
           ylabel: str, salt: str, logx: bool | int = False, logy: bool = False, yscale: float = 1.0,
           percent: bool = False, references: Mapping[str, Sequence[float | None] | float] | None = None,
           xticks: Sequence[tuple[float, str]] | None = None, ylim: tuple[float, float] | None = None,
           width: float = 7.0, height: float = 3.8) -> str:
    """Lines of ``series`` against ``x``; ``None`` leaves a point out.

    ``yscale`` divides every y value (e.g. 2**30 to draw bytes in GiB -- say so in ``ylabel``);
    ``percent`` formats the y axis as percentages of 1. ``logx`` is True (base 10) or a base.
    ``references`` are dashed grey lines: one number (horizontal) or one value per x. ``xticks`` lists
    ``(position, label)`` pairs, e.g. to label byte sizes as "1 MiB".
    """
    xs = [float(v) for v in x]
    if not xs:
        raise ParallelselError("x=[]: must hold at least one point")
    if not series:
        raise ParallelselError("series={}: must hold at least one line")
    for name, values in series.items():
        if len(values) != len(xs):
            raise ParallelselError(f"series[{name!r}] has {len(values)} values: must have one per x ({len(xs)})")
    positive_scale = float(yscale)
    if positive_scale <= 0:
        raise ParallelselError(f"yscale={yscale!r}: must be > 0")
    with chart(width=width, height=height) as (fig, ax):
        for i, (name, values) in enumerate(series.items()):
            pts = [(a, v / positive_scale) for a, v in zip(xs, values) if v is not None]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color=SERIES[i % len(SERIES)],
                    marker=MARKERS[i % len(MARKERS)], markersize=4, linewidth=1.6, label=name)
        for j, (name, ref) in enumerate((references or {}).items()):
            style = dict(color="#333333" if j == 0 else "#777777", linestyle="--" if j == 0 else ":", linewidth=1.3)
            if isinstance(ref, (int, float)):
                ax.axhline(ref / positive_scale, label=name, **style)
            else:
                if len(ref) != len(xs):
                    raise ParallelselError(f"references[{name!r}] has {len(ref)} values: must have one per x ({len(xs)})")
                pts = [(a, v / positive_scale) for a, v in zip(xs, ref) if v is not None]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], label=name, **style)
        if logx:
            ax.set_xscale("log", base=10 if logx is True else logx)
        if logy:
            ax.set_yscale("log")
        if xticks is not None:
            ax.set_xticks([p for p, _ in xticks])
            ax.set_xticklabels([lab for _, lab in xticks], fontsize=8)
            ax.minorticks_off()
        elif logx and logx is not True:
            ax.set_xticks(xs)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
            ax.minorticks_off()
        if percent:
            ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=10)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        return to_svg(fig, salt)

