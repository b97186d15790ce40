"""Charts of a plan search: the funnel from enumerated plans to the top N, and the top plans' step decomposition."""

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


def top_decomposition(result, salt: str) -> str:
    """Stacked bars of compute / exposed communication / bubble (seconds) for each of the top plans."""
    ranked = list(result.results)
    with chart(7.0, 0.5 + 0.45 * max(len(ranked), 1)) as (fig, ax):
        labels = [f"#{r.rank} {r.plan.label()}" for r in ranked][::-1]
        left = [0.0] * len(ranked)
        for key, name in (("compute", "计算"), ("communication", "暴露的通信"), ("bubble", "气泡")):
            vals = [r.estimate.step.decomposition[key] for r in ranked][::-1]
            ax.barh(labels, vals, left=left, color=COLORS[key if key != "communication" else "comm"], label=name)
            left = [a + b for a, b in zip(left, vals)]
        ax.set_xlabel("每步时间（秒）")
        ax.set_title("排名靠前的方案：每步时间的构成")
        ax.legend(loc="lower right", fontsize=8)
        ax.grid(axis="y", visible=False)
        ax.tick_params(axis="y", labelsize=7)
        return to_svg(fig, salt)
