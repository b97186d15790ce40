# Misconception 2: TP degree 4, 8, 16, 32 for paper case 2 (32 GPUs in 4 nodes of 8): more TP is not faster.
from parallelsel import Plan
from parallelsel.estimate import estimate
from parallelsel.matrix import paper_cases
from parallelsel.render.lesson_charts import step_bars
from parallelsel.render.style import figure_html  # markdown-exec: hide

name, work, cluster = paper_cases()[1]
labels, steps, notes = [], [], []
for tp in (4, 8, 16, 32):
    # The rest of the GPUs do data parallelism; ZeRO-1 if it fits, else ZeRO-3 (FSDP).
    for zero in (1, 3):
        e = estimate(work, Plan(dp=cluster.gpus // tp, tp=tp, zero=zero, sp=True, recompute="selective"), cluster)
        if e.fits:
            break
    labels.append(f"TP{tp} · DP{e.plan.dp} · ZeRO-{zero}")
    steps.append(e.step)
    notes.append(f"TP 组走 {cluster.link_for(tp).name}")
svg = step_bars(labels, steps, notes=notes, title=f"{name}：TP 度从 4 到 32 的每步时间", salt="mis-tp-degree")
print(figure_html(svg, "TP 超过一个节点的卡数后，每层的 all-reduce 改走节点间链路，暴露的通信使步时成倍增加"))  # markdown-exec: hide
