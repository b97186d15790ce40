"""Step-time bars: one bar per plan, its optimizer step split into compute, recompute, exposed communication and bubble.

The one chart of a step split on the site (misconceptions, exercises, scaling, hybrid parallelism,
the plan search), with the one table of names for the parts (:data:`STEP_PARTS`). Seconds in; the
axis is in the unit :func:`parallelsel.render.units.time_unit` picks for the longest step, and each
bar ends with its total written by :func:`parallelsel.render.units.fmt_time`, as the tables print it.
Pure functions: SVG string out (via :func:`parallelsel.render.style.to_svg`); ``salt`` must be
unique per figure on a page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.ticker import PercentFormatter

from parallelsel.core._check import ParallelselError, one_per
from parallelsel.render.reasons import WORDS
from parallelsel.render.style import COLORS, chart, to_svg
from parallelsel.render.units import fmt_time, time_unit

__all__ = ["STEP_PARTS", "scaling_parts", "step_bars", "step_parts"]

STEP_PARTS = {k: WORDS["zh"]["part"][k] for k in ("compute", "recompute", "communication", "bubble")}
"""The parts of a step in drawing order (the keys of ``StepTime.decomposition`` plus recompute), with their
legend names: the words the reasons use (:data:`parallelsel.render.reasons.WORDS`), one name per part."""

STEP_AXIS = {"time": "每步时间（{unit}）", "share": "占每步时间的比例"}
"""Axis and line names of the step chart."""

_COLORS = {"compute": COLORS["compute"], "recompute": COLORS["recompute"], "communication": COLORS["comm"],
           "bubble": COLORS["bubble"]}


def step_parts(steps: Sequence) -> dict[str, list[float]]:
    """Seconds per part from :class:`parallelsel.core.estimate.StepTime` objects: compute (recompute included),
    exposed communication, bubble."""
    return {k: [float(s.decomposition[k]) for s in steps] for k in ("compute", "communication", "bubble")}


def scaling_parts(points) -> dict[str, list[float]]:
    """Seconds per step of each :class:`parallelsel.core.estimate.ScalingPoint`, split as E(P) reads it.

    "recompute", "communication" and "bubble" are the losses (``ScalingPoint.losses``), "compute" the
    rest: the useful (model-FLOPs) compute, so the four add up to the step time.
    """
    parts: dict[str, list[float]] = {"compute": [], "recompute": [], "communication": [], "bubble": []}
    for pt in points:
        total = pt.estimate.step.total
        parts["compute"].append(total * (1 - sum(share for _, share in pt.losses)))
        for k, share in pt.losses:
            parts[k].append(share * total)
    return parts


def _checked(labels: Sequence[str], parts: Mapping[str, Sequence[float]], notes) -> list[str]:
    labels = [str(x) for x in labels]
    if not labels:
        raise ParallelselError("labels=[]: must name at least one bar")
    if not parts:
        raise ParallelselError("parts={}: must hold at least one part (e.g. 'compute')")
    for name, values in parts.items():
        if name not in STEP_PARTS:
            raise ParallelselError(f"parts[{name!r}]: unknown part; must be one of {', '.join(STEP_PARTS)}")
        if len(values) != len(labels):
            raise ParallelselError(f"parts[{name!r}] has {len(values)} values: must have one per label ({len(labels)})")
        if any(v < 0 for v in values):
            raise ParallelselError(f"parts[{name!r}]={list(values)!r}: times must be >= 0")
    if notes is not None:
        one_per("notes", notes, len(labels))
    if any(sum(v[i] for v in parts.values()) <= 0 for i in range(len(labels))):
        raise ParallelselError("parts: every bar must have a positive total")
    return labels


def step_bars(labels: Sequence[str], parts: Mapping[str, Sequence[float]], *, title: str, salt: str,
              notes: Sequence[str] | None = None, shares: bool = False, ylabel: str | None = None,
              width: float = 7.5) -> str:
    """Horizontal stacked bars, top to bottom in the order given: each label's step split into its parts.

    ``parts`` maps keys of :data:`STEP_PARTS` to seconds per bar (:func:`step_parts` from StepTime
    objects, :func:`scaling_parts` from E(P) points); a part that is zero in every bar is left out
    of the legend. ``notes`` are printed after each bar's total (e.g. the MFU or E(P)). With
    ``shares`` a second panel shows the parts as shares of each step.
    """
    labels = _checked(labels, parts, notes)
    order = [k for k in STEP_PARTS if k in parts and any(parts[k])]
    totals = [sum(parts[k][i] for k in order) for i in range(len(labels))]
    ys = list(range(len(labels)))[::-1]
    lines = max(label.count("\n") + 1 for label in labels)
    height = (0.35 + 0.2 * lines) * len(labels) + 1.3
    with chart(width=width * (1.45 if shares else 1), height=height, ncols=2 if shares else 1,
               sharey=True) as (fig, axes):
        axes = list(axes) if shares else [axes]
        _seconds(axes[0], ys, {k: parts[k] for k in order}, totals, notes)
        axes[0].set_yticks(ys)
        axes[0].set_yticklabels(labels, fontsize=8)
        if ylabel:
            axes[0].set_ylabel(ylabel)
        if shares:
            _stack(axes[1], ys, {k: [v / t for v, t in zip(parts[k], totals)] for k in order}, legend=False)
            axes[1].set_xlim(0, 1)
            axes[1].xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
            axes[1].set_xlabel(STEP_AXIS["share"])
            fig.suptitle(title, fontsize=10)
            fig.tight_layout()
        else:
            axes[0].set_title(title)
        handles = [h for ax in axes for h in ax.get_legend_handles_labels()[0]]
        axes[-1].legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        return to_svg(fig, salt)


def _stack(ax, ys: list[int], parts: Mapping[str, Sequence[float]], legend: bool) -> None:
    left = [0.0] * len(ys)
    for k, vals in parts.items():
        ax.barh(ys, vals, left=left, color=_COLORS[k], height=0.6, label=STEP_PARTS[k] if legend else None,
                edgecolor="white", linewidth=0.5)
        left = [a + v for a, v in zip(left, vals)]
    ax.grid(False, axis="y")
    ax.set_axisbelow(True)


def _seconds(ax, ys: list[int], parts: Mapping[str, Sequence[float]], totals: list[float], notes) -> None:
    """The parts in the time unit of the longest step, each bar ending with its total (and note)."""
    div, unit = time_unit(max(totals))
    _stack(ax, ys, {k: [v / div for v in vals] for k, vals in parts.items()}, legend=True)
    for i, (y, total) in enumerate(zip(ys, totals)):
        text = fmt_time(total) + (f"  {notes[i]}" if notes is not None else "")
        ax.annotate(text, xy=(total / div, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
    ax.set_xlim(0, max(totals) / div * (1.6 if notes is not None else 1.3))
    ax.set_xlabel(STEP_AXIS["time"].format(unit=unit))

