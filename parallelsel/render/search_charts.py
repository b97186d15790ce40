"""Charts of a plan search: the funnel from enumerated plans to the top N (the top plans' steps are
:func:`parallelsel.render.step_charts.step_bars`)."""

from __future__ import annotations

from .reasons import stage_title
from .style import COLORS, chart, to_svg


def funnel(result, salt: str) -> str:
    """Horizontal bars, widest first: how many plans survive each stage of ``result.funnel()`` (log scale)."""
    stages = list(result.funnel())
    with chart(7.0, 2.6) as (fig, ax):
        names = [stage_title(name, result.top) for name, _ in stages][::-1]
        counts = [max(n, 1) for _, n in stages][::-1]
        bars = ax.barh(names, counts, color=COLORS["compute"])
        ax.set_xscale("log")
        ax.set_xlabel("方案数（对数刻度）")
        ax.set_title(f"方案搜索漏斗：{result.workload.model.name}，{result.cluster.gpus} 卡")
        for bar, (_, n) in zip(bars, stages[::-1]):
            ax.annotate(f"{n:,}", xy=(bar.get_width(), bar.get_y() + bar.get_height() / 2), xytext=(4, 0),
                        textcoords="offset points", va="center", fontsize=9)
        ax.grid(axis="y", visible=False)
        return to_svg(fig, salt)

