# Misconception 5: a five-dimension stack against a two-dimension plan, Llama-2 13B on 2 nodes x 8 A100 (InfiniBand).
import parallelsel as ps
from parallelsel.core.estimate import estimate
from parallelsel.render.step_charts import step_bars, step_parts
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.tables import fmt_bytes, fmt_time, folded_html, markdown_table
from parallelsel.core.search import search
import markdown  # markdown-exec: hide
from parallelsel.render.reasons import plan_label

work = ps.Workload(ps.MODELS["llama2-13b"], global_batch=256)
cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=2, gpus_per_node=8)
plans = [
    ps.Plan(dp=16, zero=2, recompute="selective"),                                         # DP + ZeRO
    ps.Plan(dp=4, tp=2, pp=2, zero=3, sp=True, recompute="selective", schedule="interleaved", chunks=2),
    ps.Plan(dp=2, tp=4, pp=2, zero=3, sp=True, schedule="interleaved", chunks=2),
    search(work, cluster, top=1).best.plan,                                                # the search's first place
]
labels, steps, notes, rows = [], [], [], []
for plan in plans:
    e = estimate(work, plan, cluster)
    assert e.fits, e.reasons
    kinds = len({(t.strategy, t.op) for t in e.traffic})        # distinct collectives a step issues
    labels.append(plan_label(plan))
    steps.append(e.step)
    notes.append(f"{plan.dims} 个维度")
    rows.append([plan_label(plan), plan.dims, kinds, fmt_time(e.step.total), f"{e.step.mfu:.0%}", fmt_bytes(e.memory.total)])
table = markdown_table(["方案", "并行维度数", "每步的通信种类", "步时", "MFU", "每卡内存"], rows, align="lrrrrr")
svg = step_bars(labels, step_parts(steps), notes=notes, title=f"{work.model.name}，{cluster.gpus} 卡：维度越多不等于越快",
                salt="mis-stacked-dims")
print(folded_html("深入：各方案的维度、通信种类、步时与内存", markdown.markdown(table, extensions=["tables"])))  # markdown-exec: hide
dims = [p.dims for p in plans]  # markdown-exec: hide
totals = [s.total for s in steps]  # markdown-exec: hide
print(figure_html(svg, f"并行维度从 {min(dims)} 个到 {max(dims)} 个，步时都在 {fmt_time(min(totals))} 到 {fmt_time(max(totals))} 之间；"  # markdown-exec: hide
                  "维度多的方案多出 TP 和流水线的通信、调度与调试成本"))  # markdown-exec: hide
