"""Communication charts: collective time against parallel degree, and grouped time bars.

Pure functions: seconds in, SVG string out (via :func:`parallelsel.render.style.to_svg`). Times are
drawn in milliseconds and the axis label says so. Every function takes ``salt``, which must be
unique per figure on a page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator

from parallelsel.core._check import ParallelselError
from parallelsel.render.style import COLORS, MARKERS, SERIES, chart, to_svg

__all__ = ["time_vs_degree", "grouped_time_bars", "describe_traffic"]



def describe_traffic(items: Sequence, short_links: bool = True) -> str:
    """One line naming a step's collectives, grouped by the link and group size they use.

    ``items`` are :class:`parallelsel.core.comm.Traffic` records; calls of the same op on the same group
    are added up, e.g. ``"all-gather×2 + reduce-scatter×1（8 卡，NVLink3）"``. With ``short_links``
    a link name keeps its first two words ("InfiniBand HDR 200Gb/s" -> "InfiniBand HDR").
    """
    groups: dict[tuple[str, int], dict[str, float]] = {}
    for t in items:
        ops = groups.setdefault((t.link, t.group), {})
        ops[t.op] = ops.get(t.op, 0.0) + t.calls
    parts = []
    for (link, size), ops in groups.items():
        name = " ".join(link.split(" ")[:2]) if short_links else link
        parts.append(" + ".join(f"{op}×{n:g}" for op, n in ops.items()) + f"（{size} 卡，{name}）")
    return "；".join(parts) if parts else "无"


def _ms_formatter():
    return FuncFormatter(lambda y, _pos: f"{y:g}")


def _log_ms_axis(ax) -> None:
    """Log y axis with ticks at 1-2-5 steps, labelled as plain numbers (a decade alone is too coarse)."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(_ms_formatter())


def time_vs_degree(
    degrees: Sequence[int],
    series: Mapping[str, Sequence[float | None]],
    *,
    title: str,
    xlabel: str,
    salt: str,
    references: Mapping[str, Sequence[float | None] | float] | None = None,
    ylabel: str = "时间（ms）",
    logy: bool = True,
    width: float = 7.0,
    height: float = 3.8,
) -> str:
    """Lines of time (seconds in, milliseconds drawn) against a parallel degree on a log2 x axis.

    ``series`` maps a label (e.g. a link name) to one time per degree; ``None`` leaves a point out
    (e.g. NVLink beyond one node). ``references`` are dashed lines to compare against -- one number
    (a horizontal line) or one value per degree (e.g. compute time, which shrinks with the degree).
    """
    xs = [int(d) for d in degrees]
    if not xs or any(d < 1 for d in xs):
        raise ParallelselError(f"degrees={degrees!r}: must list positive integers")
    if not series:
        raise ParallelselError("series={}: must hold at least one line")
    for name, values in series.items():
        if len(values) != len(xs):
            raise ParallelselError(f"series[{name!r}] has {len(values)} values: must have one per degree ({len(xs)})")
    with chart(width=width, height=height) as (fig, ax):
        for i, (name, values) in enumerate(series.items()):
            pts = [(x, v * 1e3) for x, v in zip(xs, values) if v is not None]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=MARKERS[i % len(MARKERS)],
                    color=SERIES[i % len(SERIES)], linewidth=1.6, markersize=5, label=name)
        for j, (name, ref) in enumerate((references or {}).items()):
            style = dict(color="#333333" if j == 0 else "#777777", linestyle="--" if j == 0 else ":", linewidth=1.3)
            if isinstance(ref, (int, float)):
                ax.axhline(ref * 1e3, label=name, **style)
            else:
                if len(ref) != len(xs):
                    raise ParallelselError(f"references[{name!r}] has {len(ref)} values: must have one per degree ({len(xs)})")
                pts = [(x, v * 1e3) for x, v in zip(xs, ref) if v is not None]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], label=name, **style)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(FixedLocator(xs))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{int(round(x))}"))
        if logy:
            _log_ms_axis(ax)
        else:
            ax.yaxis.set_major_formatter(_ms_formatter())
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        return to_svg(fig, salt)


def grouped_time_bars(
    groups: Sequence[str],
    series: Mapping[str, Sequence[float]],
    *,
    title: str,
    salt: str,
    xlabel: str | None = None,
    ylabel: str = "时间（ms）",
    logy: bool = True,
    values: bool = True,
    width: float = 7.0,
    height: float = 3.8,
) -> str:
    """Grouped bars of time (seconds in, milliseconds drawn): one group per entry of ``groups``.

    ``series`` maps a bar label (e.g. "TP" or "PP", or "compute") to one time per group. A series
    named like a key of :data:`parallelsel.render.style.COLORS` ("compute", "comm") takes its colour.
    With ``values`` each bar carries its value in ms.
    """
    groups = [str(g) for g in groups]
    if not groups:
        raise ParallelselError("groups=[]: must name at least one group")
    for name, vals in series.items():
        if len(vals) != len(groups):
            raise ParallelselError(f"series[{name!r}] has {len(vals)} values: must have one per group ({len(groups)})")
    n = max(1, len(series))
    w = 0.8 / n
    with chart(width=width, height=height) as (fig, ax):
        for i, (name, vals) in enumerate(series.items()):
            xs = [g + (i - (n - 1) / 2) * w for g in range(len(groups))]
            ms = [v * 1e3 for v in vals]
            color = COLORS.get(name, SERIES[i % len(SERIES)])
            bars = ax.bar(xs, ms, width=w * 0.95, color=color, label=name)
            if values:
                for b, v in zip(bars, ms):
                    ax.annotate(f"{v:,.0f}" if v >= 100 else f"{v:.3g}", xy=(b.get_x() + b.get_width() / 2, v), xytext=(0, 2),
                                textcoords="offset points", ha="center", va="bottom", fontsize=7)
        if logy:
            _log_ms_axis(ax)
        else:
            ax.yaxis.set_major_formatter(_ms_formatter())
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups, fontsize=9)
        ax.set_ylabel(ylabel)
        if xlabel:
            ax.set_xlabel(xlabel)
        ax.set_title(title)
        ax.grid(False, axis="x")
        ax.set_axisbelow(True)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        return to_svg(fig, salt)
