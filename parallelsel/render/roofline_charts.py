"""Roofline charts: a communication-to-compute ratio against the quantity that moves it.

Pure functions: ratios in, SVG string out. The line at 1 is the break-even; the shaded band above
it is where communication, not computation, sets the time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from parallelsel.core._check import ParallelselError
from parallelsel.render.style import COLORS, MARKERS, SERIES, chart, to_svg

__all__ = ["ratio_lines", "ratio_panels"]

Panel = tuple  # (title, xs, series, xlabel, xlabels or None)


def _check(xs, series) -> list[float]:
    xs = [float(x) for x in xs]
    if not xs or any(x <= 0 for x in xs):
        raise ParallelselError(f"xs={xs!r}: must list positive numbers")
    if not series:
        raise ParallelselError("series={}: must hold at least one line")
    for name, values in series.items():
        if len(values) != len(xs):
            raise ParallelselError(f"series[{name!r}] has {len(values)} values: must have one per x ({len(xs)})")
        if all(v is None for v in values) or any(v is not None and v <= 0 for v in values):
            raise ParallelselError(f"series[{name!r}]={list(values)!r}: must hold positive ratios (None for no point)")
    return xs


def _draw(ax, xs, series, *, title, xlabel, ylabel, xlabels, legend: bool) -> None:
    """One panel: the lines (a None value leaves a gap), the break-even line at 1 and the band above it."""
    shown = [v for values in series.values() for v in values if v is not None]
    top, bottom = max(max(shown), 1.0) * 2, min(min(shown), 1.0) / 2
    ax.axhspan(1.0, top, color=COLORS["comm"], alpha=0.08, linewidth=0)
    ax.axhline(1.0, color="#333333", linestyle="--", linewidth=1.2, label="通信 = 计算")
    for i, (name, values) in enumerate(series.items()):
        ax.plot(xs, [float("nan") if v is None else v for v in values], marker=MARKERS[i % len(MARKERS)],
                color=SERIES[i % len(SERIES)], linewidth=1.6, markersize=4, label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_ylim(bottom, top)
    ax.xaxis.set_major_locator(FixedLocator(xs))
    ax.xaxis.set_minor_locator(NullLocator())
    labels = list(xlabels) if xlabels is not None else [f"{x:g}" for x in xs]
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, pos: labels[pos] if pos is not None and pos < len(labels) else ""))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _pos: f"{y:g}"))
    ax.text(xs[0], top * 0.75, "受通信限制", fontsize=8, color=COLORS["bound"], va="center")
    ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    if legend:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)


def ratio_lines(xs: Sequence[float], series: Mapping[str, Sequence[float | None]], *, title: str, xlabel: str,
                salt: str, ylabel: str = "通信时间 ÷ 计算时间", xlabels: Sequence[str] | None = None,
                width: float = 7.0, height: float = 3.6) -> str:
    """Lines of a ratio (log y) against ``xs`` (log2 x), with the break-even line at 1; a None value leaves a gap
    (a point that does not exist, e.g. an NVLink group larger than a node)."""
    xs = _check(xs, series)
    with chart(width=width, height=height) as (fig, ax):
        _draw(ax, xs, series, title=title, xlabel=xlabel, ylabel=ylabel, xlabels=xlabels, legend=True)
        return to_svg(fig, salt)


def ratio_panels(panels: Sequence[Panel], *, salt: str, ylabel: str = "通信时间 ÷ 计算时间",
                 width: float = 10.0, height: float = 6.4) -> str:
    """Two columns of :func:`ratio_lines` panels, one per ``(title, xs, series, xlabel, xlabels)``: each strategy
    against the quantity that moves its ratio, side by side. The panels share one legend (name the same hardware
    in the same order in every panel, so a colour means one device and link throughout)."""
    if not panels:
        raise ParallelselError("panels=[]: must hold at least one (title, xs, series, xlabel, xlabels)")
    checked = [_check(xs, series) for _, xs, series, _, _ in panels]
    rows = (len(panels) + 1) // 2
    with chart(width=width, height=height * rows / 2, nrows=rows, ncols=2, squeeze=False) as (fig, axes):
        flat = list(axes.flat)
        for i, ((title, _, series, xlabel, xlabels), xs) in enumerate(zip(panels, checked)):
            _draw(flat[i], xs, series, title=title, xlabel=xlabel, ylabel=ylabel if i % 2 == 0 else "",
                  xlabels=xlabels, legend=False)
        for ax in flat[len(panels):]:
            ax.set_visible(False)
        fig.subplots_adjust(hspace=0.55, wspace=0.22)
        handles, labels = max((ax.get_legend_handles_labels() for ax in flat[:len(panels)]), key=lambda h: len(h[1]))
        fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.02), ncol=len(labels), fontsize=8,
                   frameon=False)
        return to_svg(fig, salt)
