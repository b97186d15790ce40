"""Pipeline charts: Gantt timelines, bubble curves, schedule comparison, a straggler.

Pure functions: data in, SVG string out (via :func:`parallelsel.render.style.to_svg`). Every function
takes ``salt``, which must be unique per figure on a page.
"""

from __future__ import annotations

import base64
import re
from html import escape
from collections.abc import Sequence

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.patches import Patch
from matplotlib.ticker import PercentFormatter

from parallelsel.core import pipeline as pl
from parallelsel.core._check import ParallelselError, positive_int, positive_number
from parallelsel.core.plan import SCHEDULES
from parallelsel.render.reasons import WORDS
from parallelsel.render.style import COLORS, SERIES, chart, to_svg
from parallelsel.render.units import fmt_time

__all__ = ["gantt", "bubble_curve", "schedule_comparison", "comparison_timelines", "timelines_chart", "straggler",
           "straggler_timelines", "schedule_name", "rank_label", "trace_name", "trace_link", "trace_links"]

DEFAULT_XLABEL = "时间（单位：前向耗时）"
_KIND_LABEL = {"F": "前向 F", "B": "反向 B", "I": "输入梯度 I", "W": "权重梯度 W"}
_KINDS = "FBIW"
_MAX_LABELLED_STAGES = 8
_MAX_LABELLED_MICROBATCHES = 16


def schedule_name(sched: pl.Schedule) -> str:
    """Short display name of a schedule (the one table, :data:`parallelsel.render.reasons.WORDS`), with the chunks
    per rank of an interleaved kind, e.g. ``"1F1B"`` or ``"交错 1F1B（v=2）"``."""
    name = WORDS["zh"]["schedule"].get(sched.kind, sched.kind)
    return name + (f"（v={sched.chunks}）" if sched.kind in ("interleaved", "looped-bfs", "interleaved-zb") else "")


def rank_label(sched: pl.Schedule, rank: int) -> str:
    """A Gantt row's label: ``"段 r"`` when a rank holds one stage, else the rank and the global stages
    it holds, e.g. ``"卡 0（段 0、7）"`` on the V layout (where the first and last stage share rank 0)."""
    if sched.chunks == 1:
        return f"段 {rank}"
    return f"卡 {rank}（段 {'、'.join(str(sched.virtual_stage(rank, c)) for c in range(sched.chunks))}）"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _default_title(tl: pl.Timeline) -> str:
    s = tl.schedule
    return f"{schedule_name(s)}，p={s.stages}，m={s.microbatches}：气泡占比 {_pct(tl.bubble_fraction)}"


def _draw(ax, tl: pl.Timeline, xlabel: str | None, legend: bool = True, labels: bool | None = None) -> None:
    """Draw ``tl`` as a Gantt chart on ``ax``: one row per stage, stage 0 at the top. Blocks carry their
    micro-batch number if ``labels`` (default: when ``p <= 8`` and ``m <= 16``)."""
    s = tl.schedule
    p, m, v = s.stages, s.microbatches, s.chunks
    labelled = (p <= _MAX_LABELLED_STAGES and m <= _MAX_LABELLED_MICROBATCHES) if labels is None else bool(labels)
    height = 0.8
    edge = dict(edgecolor="white", linewidth=0.6) if labelled else dict(linewidth=0)
    # Each row's full extent in a faint grey, so idle time reads as empty space inside the step.
    ax.add_collection(PolyCollection([_box(0, tl.makespan, stage, height) for stage in range(p)],
                                     facecolors=COLORS["bubble"], alpha=0.18, linewidth=0))
    boxes: dict[tuple[str, int], list] = {}  # one collection per kind and chunk, every stage in it: lighter to draw
    for stage in range(p):
        on_stage = tl.stage == stage
        for kind in _KINDS:
            for chunk in range(v):
                sel = on_stage & (tl.kind == kind) & (tl.chunk == chunk)
                if not sel.any():
                    continue
                starts, ends = tl.start[sel], tl.end[sel]
                if not labelled:
                    starts, ends = _merge_runs(starts, ends)  # fewer SVG paths, no seams between touching blocks
                boxes.setdefault((kind, chunk), []).extend(_box(a, b, stage, height) for a, b in zip(starts, ends))
                if labelled:
                    for a, b, mb in zip(starts, ends, tl.microbatch[sel]):
                        if b - a > 0:
                            # inside its block, so the crop need not measure it (hundreds per chart)
                            ax.text((a + b) / 2, stage, str(int(mb)), ha="center", va="center", fontsize=7, color="white",
                                    in_layout=False)
    for (kind, chunk), verts in boxes.items():
        alpha = 1.0 if v == 1 else 1.0 - 0.45 * chunk / (v - 1)  # later chunks lighter
        ax.add_collection(PolyCollection(verts, facecolors=COLORS[kind], alpha=alpha, **edge))
    ax.set_ylim(p - 0.5, -0.5)  # stage 0 at the top
    ax.set_yticks(range(p))
    ax.set_yticklabels([rank_label(s, i) for i in range(p)], fontsize=8 if p <= 16 else 6)
    ax.set_xlim(0, tl.makespan)
    ax.grid(False, axis="y")
    ax.set_axisbelow(True)
    if xlabel:
        ax.set_xlabel(xlabel)
    if legend:
        kinds = [k for k in _KINDS if (tl.kind == k).any()]
        handles = [Patch(facecolor=COLORS[k], label=_KIND_LABEL[k]) for k in kinds]
        handles.append(Patch(facecolor=COLORS["bubble"], alpha=0.3, label="空闲（气泡）"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)


def _box(start: float, end: float, row: float, height: float) -> list[tuple[float, float]]:
    """The four corners of one block of a Gantt row."""
    lo, hi = row - height / 2, row + height / 2
    return [(start, lo), (start, hi), (end, hi), (end, lo)]


def _merge_runs(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Join blocks that touch (one ends where the next starts) into one interval."""
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    gap = starts[1:] > ends[:-1] + 1e-9 * max(1.0, float(ends.max()))
    first = np.concatenate(([True], gap))
    last = np.concatenate((gap, [True]))
    return starts[first], ends[last]


def _height(p: int) -> float:
    return min(10.0, 1.3 + 0.32 * p)


def gantt(timeline: pl.Timeline, title: str | None = None, *, salt: str, xlabel: str = DEFAULT_XLABEL) -> str:
    """Gantt chart of a simulated step: rows are stages, blocks are F/B/W passes, gaps are the bubble.

    Blocks carry their micro-batch number when ``p <= 8`` and ``m <= 16``. The default title names the
    schedule, ``p``, ``m`` and the measured bubble fraction. ``xlabel`` should name the time unit of the
    costs given to :func:`parallelsel.core.pipeline.simulate`.
    """
    if not isinstance(timeline, pl.Timeline):
        raise ParallelselError(f"timeline={timeline!r}: must be a Timeline from pipeline.simulate()")
    with chart(width=8.0, height=_height(timeline.stages)) as (fig, ax):
        _draw(ax, timeline, xlabel)
        ax.set_title(title if title is not None else _default_title(timeline))
        return to_svg(fig, salt)


def bubble_curve(stages_list: Sequence[int], m_values: Sequence[int], salt: str) -> str:
    """Bubble fraction against the number of micro-batches ``m`` for several pipeline depths ``p``.

    Lines are the closed form ``(p-1)/(m+p-1)`` (:func:`parallelsel.core.pipeline.bubble_fraction`); points
    are steps simulated at each ``m`` in ``m_values`` -- 1F1B, or GPipe where ``m < p`` (torch's
    Schedule1F1B refuses it; GPipe has the same bubble) -- and lie on the lines.
    """
    ps = [positive_int("stages_list[]", p) for p in stages_list]
    ms = sorted({positive_int("m_values[]", m) for m in m_values})
    if not ps:
        raise ParallelselError(f"stages_list={stages_list!r}: must list at least one stage count")
    if not ms:
        raise ParallelselError(f"m_values={m_values!r}: must list at least one micro-batch count")
    grid = np.arange(1, max(ms) + 1)
    with chart(width=7.0, height=3.8) as (fig, ax):
        for i, p in enumerate(ps):
            c = SERIES[i % len(SERIES)]
            ax.plot(grid, [pl.bubble_fraction(p, int(m)) for m in grid], color=c, linewidth=1.6, label=f"p={p}（解析式）")
            sim = [pl.simulate(pl.schedule("1f1b" if m >= p else "gpipe", p, m)).bubble_fraction for m in ms]
            ax.plot(ms, sim, "o", color=c, markersize=5, markerfacecolor="white", markeredgewidth=1.4, label=f"p={p}（模拟）")
        ax.set_xlabel("微批次数 m")
        ax.set_ylabel("气泡占比")
        ax.set_ylim(0, 1)
        ax.set_xlim(0, max(ms) + 1)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        ax.set_title("气泡占比 (p-1)/(m+p-1)：线为解析式，点为模拟（1F1B；m<p 时 GPipe）")
        ax.legend(fontsize=8, ncol=2, frameon=False)
        return to_svg(fig, salt)


COMPARED = SCHEDULES
"""The kinds :func:`schedule_comparison` draws by default: the schedules a Plan may name."""


def comparison_schedules(stages: int, microbatches: int, chunks: int, kinds=COMPARED) -> list[pl.Schedule]:
    """The schedules :func:`schedule_comparison` draws: ``chunks`` for interleaved kinds, 2 for the V-shaped ones."""
    p = positive_int("stages", stages)
    m = positive_int("microbatches", microbatches)
    v = positive_int("chunks", chunks)
    own = {"interleaved": v, "looped-bfs": v, "interleaved-zb": v, "zbv": 2, "dualpipev": 2}
    return [pl.schedule(k, p, m, own.get(k, 1)) for k in kinds]


def comparison_timelines(stages: int, microbatches: int, chunks: int, kinds=COMPARED) -> list[pl.Timeline]:
    """The timelines :func:`schedule_comparison` draws: each of :func:`comparison_schedules` simulated
    with forward 1 and backward 2 (a split backward: I = 1 and W = 1)."""
    return [pl.simulate(s, forward=1.0, backward=2.0) for s in comparison_schedules(stages, microbatches, chunks, kinds)]


def schedule_comparison(stages: int, microbatches: int, chunks: int, salt: str, kinds=COMPARED) -> str:
    """The same ``p`` and ``m`` under several schedules: by default GPipe, 1F1B, interleaved 1F1B
    (``chunks``) and ZB-H1; ``kinds`` may name any of :data:`parallelsel.core.pipeline.KINDS`.

    Costs: forward 1, backward 2 (a split backward: I = 1 and W = 1), see :func:`comparison_timelines`.
    Each subplot's title gives the measured bubble fraction and the peak in-flight activations, in
    micro-batches through a whole rank.
    """
    tls = comparison_timelines(stages, microbatches, chunks, kinds)
    return timelines_chart(tls, salt=salt, title=f"同一 p={stages}、m={microbatches} 下的 {len(tls)} 种调度")


def timelines_chart(timelines: Sequence[pl.Timeline], *, salt: str, title: str, xlabel: str = DEFAULT_XLABEL,
                    labels: bool | None = None) -> str:
    """Several simulated steps stacked on one time axis, one subplot each, with a shared legend.

    Each subplot's title names the schedule and gives its measured bubble fraction and peak in-flight
    activations (micro-batches through a whole rank); rows holding several chunks name the global
    stages they hold (:func:`rank_label`). ``xlabel`` should name the time unit of the costs; ``labels``: number the
    blocks by micro-batch (default: when ``p <= 8`` and ``m <= 16``; ``False`` keeps a chart of many passes light: touching blocks merge into one).
    """
    tls = list(timelines)
    if not tls or not all(isinstance(t, pl.Timeline) for t in tls):
        raise ParallelselError(f"timelines={timelines!r}: must be a non-empty sequence of Timelines from pipeline.simulate()")
    span = max(t.makespan for t in tls)
    row = _height(max(t.stages for t in tls)) * 0.75
    with chart(width=8.0, height=row * len(tls) + 0.6, nrows=len(tls), ncols=1, sharex=True, squeeze=False) as (fig, axes):
        axes = axes[:, 0]
        for i, (ax, tl) in enumerate(zip(axes, tls)):
            _draw(ax, tl, xlabel if i == len(tls) - 1 else None, legend=False, labels=labels)
            ax.set_xlim(0, span)
            peak = float(max(tl.peak_activations))
            shade = "（颜色越浅，模型块越靠后）" if tl.schedule.chunks > 1 else ""
            ax.set_title(
                f"{schedule_name(tl.schedule)}：气泡占比 {_pct(tl.bubble_fraction)}，峰值在途激活 {peak:g} 个微批次{shade}",
                fontsize=9, loc="left",
            )
        # one shared legend naming every pass kind drawn (W and I only where a backward is split)
        handles = [Patch(facecolor=COLORS[k], label=_KIND_LABEL[k]) for k in _KINDS if any((t.kind == k).any() for t in tls)]
        handles.append(Patch(facecolor=COLORS["bubble"], alpha=0.3, label="空闲（气泡）"))
        axes[0].legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        fig.suptitle(title, y=1.0)
        fig.tight_layout()
        return to_svg(fig, salt)


def straggler_timelines(stages: int, microbatches: int, slow_stage: int, slowdown: float,
                        kind: str = "1f1b") -> tuple[pl.Timeline, pl.Timeline]:
    """``(uniform, slowed)``: the step :func:`straggler` draws, with forward 1 and backward 2 per
    stage, and the same step with both multiplied by ``slowdown`` on ``slow_stage``."""
    p = positive_int("stages", stages)
    m = positive_int("microbatches", microbatches)
    s = positive_int("slow_stage", slow_stage, minimum=0)
    if s >= p:
        raise ParallelselError(f"slow_stage={slow_stage!r}: must be a stage index in 0..{p - 1} (stages={p})")
    k = positive_number("slowdown", slowdown)
    sched = pl.schedule(kind, p, m)
    fwd, bwd = [1.0] * p, [2.0] * p
    fwd[s], bwd[s] = k, 2.0 * k
    return pl.simulate(sched, forward=1.0, backward=2.0), pl.simulate(sched, forward=fwd, backward=bwd)


def straggler(stages: int, microbatches: int, slow_stage: int, slowdown: float, salt: str, kind: str = "1f1b") -> str:
    """A uniform pipeline above the same pipeline with one stage ``slowdown`` times slower.

    Forward 1 and backward 2 per stage; on ``slow_stage`` both are multiplied by ``slowdown``
    (:func:`straggler_timelines`). The figure title states how much the bubble fraction and the step
    time grow.
    """
    base, slow = straggler_timelines(stages, microbatches, slow_stage, slowdown, kind)
    p, m, s, k = base.stages, microbatches, slow_stage, slowdown
    row = _height(p) * 0.8
    with chart(width=8.0, height=2 * row + 0.8, nrows=2, ncols=1, sharex=True) as (fig, (a0, a1)):
        _draw(a0, base, None)
        _draw(a1, slow, DEFAULT_XLABEL, legend=False)
        a1.set_xlim(0, slow.makespan)
        a0.set_title(f"各段一样快：气泡占比 {_pct(base.bubble_fraction)}，步时 {base.makespan:g}", fontsize=9, loc="left")
        a1.set_title(f"段 {s} 慢 {k:g} 倍：气泡占比 {_pct(slow.bubble_fraction)}，步时 {slow.makespan:g}", fontsize=9, loc="left")
        a1.get_yticklabels()[s].set_color(COLORS["wait"])
        grow = 100 * (slow.bubble_fraction - base.bubble_fraction)
        fig.suptitle(
            f"{schedule_name(base.schedule)}，p={p}，m={m}：一张慢卡使气泡占比增加 {grow:.1f} 个百分点，步时变为 {slow.makespan / base.makespan:.2f} 倍",
            y=1.0, fontsize=10,
        )
        fig.tight_layout()
        return to_svg(fig, salt)


# ---------------------------------------------------------------------------------------------- Chrome trace

TRACE_UNIT = 1e-3
"""Seconds per cost unit written into a trace (:meth:`parallelsel.core.pipeline.Timeline.to_chrome_trace`'s
default): charts in units of one forward pass show one unit as 1 ms."""


def trace_name(timeline: pl.Timeline, prefix: str = "") -> str:
    """File name of ``timeline``'s trace: ``<prefix><kind>-p<p>-m<m>[-v<chunks>].json``."""
    s = timeline.schedule
    return f"{prefix}{s.kind}-p{s.stages}-m{s.microbatches}" + (f"-v{s.chunks}" if s.chunks > 1 else "") + ".json"


def trace_link(timeline: pl.Timeline, label: str | None = None, *, name: str | None = None,
               time_unit: float = TRACE_UNIT) -> str:
    """An ``<a download>`` link whose ``data:`` URL holds ``timeline`` as Chrome-trace JSON.

    The file travels in the printed HTML (base64), since a snippet knows no site directory; the site's build
    (hooks/trace_files.py) writes it next to the page and points the link at that file, so the page stays
    light. The reader saves it and opens it in Perfetto or ``chrome://tracing``. ``name`` is the file name
    (default :func:`trace_name`), ``label`` the link text (default the file name); ``time_unit`` is the
    length of one cost unit in seconds.
    """
    if not isinstance(timeline, pl.Timeline):
        raise ParallelselError(f"timeline={timeline!r}: must be a Timeline from pipeline.simulate()")
    name = name or trace_name(timeline)
    data = base64.b64encode(timeline.to_chrome_trace(time_unit=time_unit).encode()).decode()
    return f'<a download="{escape(name)}" href="data:application/json;base64,{data}">{escape(label or name)}</a>'


_INLINE_TRACE = re.compile(r'<a download="([A-Za-z0-9_.+-]+\.json)" href="data:application/json;base64,([A-Za-z0-9+/=]+)"')


def traces_to_files(html: str, folder) -> tuple[str, dict[str, bytes]]:
    """``html`` with every inline trace of :func:`trace_link` pointed at ``traces/NAME.json`` instead, and those files'
    bytes by name: what the site's build (hooks/trace_files.py) writes beside the page, so that no page carries its
    traces as ``data:`` URLs (they made the PP page 1.1 MB). ``folder`` is only named in the links' paths."""
    files: dict[str, bytes] = {}

    def to_file(m: re.Match) -> str:
        files[m.group(1)] = base64.b64decode(m.group(2), validate=True)
        return f'<a download="{m.group(1)}" href="{folder}/{m.group(1)}" type="application/json"'

    return _INLINE_TRACE.sub(to_file, html), files


def trace_links(timelines: Sequence[pl.Timeline], labels: Sequence[str] | None = None, *, prefix: str = "",
                time_unit: float = TRACE_UNIT) -> str:
    """One paragraph offering each of ``timelines`` as a Chrome-trace file (:func:`trace_link`), for
    printing under its chart. Links are labelled by ``labels`` (default: the schedule names); file
    names are :func:`trace_name` with ``prefix``, numbered where two would coincide."""
    tls = list(timelines)
    labels = [schedule_name(t.schedule) for t in tls] if labels is None else list(labels)
    if len(labels) != len(tls):
        raise ParallelselError(f"labels={labels!r}: has {len(labels)} entries; must have one per timeline ({len(tls)})")
    names = [trace_name(t, prefix) for t in tls]
    names = [n if names.count(n) == 1 else n.replace(".json", f"-{names[:i].count(n) + 1}.json") for i, n in enumerate(names)]
    links = [trace_link(t, label, name=n, time_unit=time_unit) for t, label, n in zip(tls, labels, names)]
    return (f'<p class="ps-trace">下载 Chrome trace（JSON，每张卡一条轨道，一个时间单位记作 {fmt_time(time_unit)}）：'
            + "；".join(links) + "</p>\n")
