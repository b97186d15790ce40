"""Memory charts: stacked per-device memory bars against device capacity.

Pure functions: byte values in, SVG string out (via :func:`parallelsel.render.style.to_svg`). Bytes
are drawn in binary units (GiB = 2**30 bytes) unless ``unit`` says otherwise; the axis label names
the unit. Every function takes ``salt``, which must be unique per figure on a page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from parallelsel.core._check import ParallelselError
from parallelsel.render.style import COLORS, SERIES, chart, to_svg
from parallelsel.render.tables import BYTE_UNITS

__all__ = ["PART_LABELS", "memory_bars", "breakdown_parts", "states_parts"]

PART_LABELS = {
    "params": "权重",
    "grads": "梯度",
    "optimizer": "优化器状态",
    "activations": "激活",
    "embeddings": "嵌入与 logits 激活",
    "gather_peak": "FSDP gather 峰值",
    "allocator": "分配器开销",
}
"""Chinese legend names for the fields of :class:`parallelsel.core.memory.MemoryBreakdown`."""

_PART_COLORS = {
    **{k: COLORS[k] for k in ("params", "grads", "optimizer", "activations")},
    "embeddings": COLORS["embeddings"],
    "gather_peak": COLORS["wait"],
    "allocator": COLORS["bubble"],
}
_CAPACITY_STYLES = ["--", ":", "-."]


def states_parts(states: Sequence) -> dict[str, list[float]]:
    """``{"params", "grads", "optimizer"}`` byte lists from :class:`parallelsel.core.memory.States` objects."""
    return {k: [float(getattr(s, k)) for s in states] for k in ("params", "grads", "optimizer")}


def breakdown_parts(breakdowns: Sequence, drop_zero: bool = True) -> dict[str, list[float]]:
    """Byte lists per field from :class:`parallelsel.core.memory.MemoryBreakdown` objects, in display order.

    Fields that are zero in every breakdown are dropped when ``drop_zero`` (a chart legend should not
    list a part that no bar has).
    """
    if not breakdowns:
        raise ParallelselError("breakdowns=[]: must hold at least one MemoryBreakdown")
    dicts = [b.as_dict() for b in breakdowns]
    parts = {k: [float(d[k]) for d in dicts] for k in dicts[0]}
    if drop_zero:
        parts = {k: v for k, v in parts.items() if any(x > 0 for x in v)}
    return parts


def memory_bars(
    labels: Sequence[str],
    parts: Mapping[str, Sequence[float]],
    *,
    title: str,
    salt: str,
    capacities: Sequence[tuple[str, float]] = (),
    unit: str = "GiB",
    xlabel: str | None = None,
    totals: bool = True,
    width: float = 7.0,
    height: float = 3.8,
    logy: bool = False,
) -> str:
    """Stacked bars of per-device memory, one bar per label, with dashed device-capacity lines.

    ``parts`` maps a part name to one byte value per bar; names in :data:`PART_LABELS` get their
    Chinese legend name and shared colour, other names are used as given. ``capacities`` is a list of
    ``(label, bytes)`` drawn as horizontal lines. With ``totals`` each bar carries its total. With
    ``logy`` the y axis is logarithmic (use when bars span orders of magnitude).
    """
    if unit not in BYTE_UNITS:
        raise ParallelselError(f"unit={unit!r}: must be one of {', '.join(BYTE_UNITS)}")
    labels = [str(x) for x in labels]
    if not labels:
        raise ParallelselError("labels=[]: must name at least one bar")
    for name, values in parts.items():
        if len(values) != len(labels):
            raise ParallelselError(f"parts[{name!r}] has {len(values)} values: must have one per label ({len(labels)})")
    div = BYTE_UNITS[unit]
    with chart(width=width, height=height) as (fig, ax):
        tops = _stack(ax, len(labels), parts, div)
        top = max([*tops, *(_capacity_line(ax, j, name, cap / div, unit) for j, (name, cap) in enumerate(capacities))])
        if totals:
            for x, b in enumerate(tops):
                ax.annotate(f"{b:,.1f}", xy=(x, b), xytext=(0, 2), textcoords="offset points",
                            ha="center", va="bottom", fontsize=8)
        if logy:
            ax.set_yscale("log")
        else:
            ax.set_ylim(0, top * 1.12)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, fontsize=8 if len(labels) > 6 else 9)
        ax.set_ylabel(f"每卡内存（{unit}）")
        if xlabel:
            ax.set_xlabel(xlabel)
        ax.set_title(title)
        ax.grid(False, axis="x")
        ax.set_axisbelow(True)
        lines = max(lab.count("\n") + 1 for lab in labels) + (1 if xlabel else 0)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.03 - 0.06 * lines), ncol=min(4, len(parts)),
                  fontsize=8, frameon=False)
        return to_svg(fig, salt)


def _stack(ax, bars: int, parts: Mapping[str, Sequence[float]], div: float) -> list[float]:
    """Draw the stacked parts (in units of ``div`` bytes) of ``bars`` bars; returns each bar's top."""
    bottom = [0.0] * bars
    xs = list(range(bars))
    for i, (name, values) in enumerate(parts.items()):
        vals = [v / div for v in values]
        color = _PART_COLORS.get(name, SERIES[i % len(SERIES)])
        ax.bar(xs, vals, bottom=bottom, color=color, width=0.65, label=PART_LABELS.get(name, name),
               edgecolor="white", linewidth=0.5)
        bottom = [b + v for b, v in zip(bottom, vals)]
    return bottom


def _capacity_line(ax, j: int, name: str, y: float, unit: str) -> float:
    """Draw the ``j``-th device-capacity line at ``y`` (in ``unit``), labelled at the right; returns ``y``."""
    ax.axhline(y, color="#333333", linestyle=_CAPACITY_STYLES[j % len(_CAPACITY_STYLES)], linewidth=1.1)
    ax.annotate(f"{name}（{y:,.0f} {unit}）", xy=(1.0, y), xycoords=("axes fraction", "data"),
                xytext=(4, 0), textcoords="offset points", va="center", fontsize=8, color="#333333")
    return y
