"""Roofline charts: a communication-to-compute ratio against the quantity that moves it.

Pure functions: ratios in, SVG string out. The line at 1 is the break-even; the shaded band above
it is where communication, not computation, sets the time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from parallelsel._check import ParallelselError
from parallelsel.render.style import COLORS, MARKERS, SERIES, chart, to_svg

__all__ = ["ratio_lines"]



def ratio_lines(xs: Sequence[float], series: Mapping[str, Sequence[float]], *, title: str, xlabel: str, salt: str,
                ylabel: str = "通信时间 ÷ 计算时间", xlabels: Sequence[str] | None = None,
                width: float = 7.0, height: float = 3.6) -> str:
    """Lines of a ratio (log y) against ``xs`` (log2 x), with the break-even line at 1."""
    xs = [float(x) for x in xs]
    if not xs or any(x <= 0 for x in xs):
        raise ParallelselError(f"xs={xs!r}: must list positive numbers")
    if not series:
        raise ParallelselError("series={}: must hold at least one line")
    for name, values in series.items():
        if len(values) != len(xs):
            raise ParallelselError(f"series[{name!r}] has {len(values)} values: must have one per x ({len(xs)})")
    with chart(width=width, height=height) as (fig, ax):
        top = max(max(v) for v in series.values())
        bottom = min(min(v) for v in series.values())
        ax.axhspan(1.0, max(top, 1.0) * 2, color=COLORS["comm"], alpha=0.08, linewidth=0)
        ax.axhline(1.0, color="#333333", linestyle="--", linewidth=1.2, label="通信 = 计算")
        for i, (name, values) in enumerate(series.items()):
            ax.plot(xs, list(values), marker=MARKERS[i % len(MARKERS)], color=SERIES[i % len(SERIES)],
                    linewidth=1.6, markersize=4, label=name)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_ylim(min(bottom, 1.0) / 2, max(top, 1.0) * 2)
        ax.xaxis.set_major_locator(FixedLocator(xs))
        ax.xaxis.set_minor_locator(NullLocator())
        labels = list(xlabels) if xlabels is not None else [f"{x:g}" for x in xs]
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, pos: labels[pos] if pos is not None and pos < len(labels) else ""))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _pos: f"{y:g}"))
        ax.text(xs[0], max(top, 1.0) * 1.5, "受通信限制", fontsize=8, color=COLORS["bound"], va="center")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        return to_svg(fig, salt)
