"""Step timelines: one compute lane and one communication lane per plan, on a shared time axis.

Draws :class:`parallelsel.course.steptrace.StepTrace` objects: forward and backward blocks, waits on
critical-path or exposed communication, pipeline bubble; communication hidden under compute is
drawn pale violet; exposed communication is drawn in the same red as the compute lane's wait for it. Seconds in, milliseconds drawn; SVG string out.
"""

from __future__ import annotations

from collections.abc import Mapping

from matplotlib.patches import Patch

from parallelsel.core._check import ParallelselError
from parallelsel.render.step_charts import STEP_PARTS
from parallelsel.render.style import COLORS, chart, to_svg
from parallelsel.course.steptrace import LANES

__all__ = ["KIND_LABELS", "step_timelines"]

KIND_LABELS = {
    "forward": "前向计算",
    "backward": "反向计算",
    "bubble": STEP_PARTS["bubble"],
    "overlapped": "被计算盖住的通信",
    "exposed": "暴露的通信（计算在等）",
}
_FACE = {
    "forward": COLORS["F"],
    "backward": COLORS["B"],
    "wait": COLORS["wait"],
    "bubble": COLORS["bubble"],
    "overlapped": COLORS["overlapped"],
    "exposed": COLORS["wait"],   # exposed communication and the wait it causes share a colour
}
_LANE_NAMES = {"compute": "计算", "comm": "通信"}


def step_timelines(traces: Mapping[str, object], *, title: str, salt: str, width: float = 8.0,
                   lane_height: float = 0.42) -> str:
    """Two lanes (compute, communication) per trace, top to bottom in the order given."""
    if not traces:
        raise ParallelselError("traces={}: must hold at least one StepTrace")
    rows = len(traces) * 2
    with chart(width=width, height=0.9 + rows * lane_height) as (fig, ax):
        yticks, ylabels = [], []
        y = rows - 1
        for name, trace in traces.items():
            for lane in LANES:
                spans: dict[str, list[tuple[float, float]]] = {}  # one collection per colour: lighter to draw
                for seg in trace.lane(lane):
                    spans.setdefault(_FACE[seg.kind], []).append((seg.start * 1e3, seg.duration * 1e3))
                for face, xs in spans.items():
                    ax.broken_barh(xs, (y - 0.38, 0.76), facecolors=face, edgecolor="white", linewidth=0.3)
                yticks.append(y)
                ylabels.append(f"{name} · {_LANE_NAMES[lane]}")
                y -= 1
            ax.axhline(y + 0.5, color="#999999", linewidth=0.6)
        ax.set_yticks(yticks)
        ax.set_yticklabels(ylabels, fontsize=8)
        ax.set_ylim(-0.6, rows - 0.4)
        ax.set_xlim(0, max(t.total for t in traces.values()) * 1e3 * 1.01)
        ax.set_xlabel("时间（ms）")
        ax.set_title(title)
        ax.grid(False, axis="y")
        present = {"exposed" if s.kind == "wait" else s.kind for t in traces.values() for s in t.segments}
        kinds = [k for k in KIND_LABELS if k in present]
        ax.legend(handles=[Patch(facecolor=_FACE[k], label=KIND_LABELS[k]) for k in kinds],
                  loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        return to_svg(fig, salt)
