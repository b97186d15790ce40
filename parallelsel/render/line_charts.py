"""Line charts: curves of y against x (the mechanics pages), how an estimate moves with an unknown, and a
share of peak against a parallel degree.

Pure functions: numbers in, SVG string out (via :func:`parallelsel.render.style.to_svg`); every
function takes ``salt``, unique per figure on a page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.ticker import FuncFormatter, PercentFormatter

from parallelsel.core._check import ParallelselError, one_per
from parallelsel.render.style import MARKERS, SERIES, chart, to_svg

__all__ = ["curves", "sensitivity_lines", "share_vs_degree"]


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
            ax.plot(xs, ys, "o-", color=SERIES[i % len(SERIES)], linewidth=1.5, markersize=4, label=name)
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
            one_per(f"series[{i}] ({name!r})", ys, len(xs))
            ax.plot(xs, ys, "o-", color=SERIES[i % len(SERIES)], linewidth=1.5, markersize=4, label=name)
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
