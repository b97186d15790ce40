# Misconception 2: TP degree 4, 8, 16, 32 on paper case 2's cluster (4 nodes of 8): more TP is not faster.
# Llama-2 7B here: multi-head attention with 32 heads, so every TP degree up to 32 is legal
# (case 2's Llama-2 70B has 8 KV groups and cannot go past TP=8 at all).
from parallelsel import MODELS, Plan, Workload
from parallelsel.core.estimate import estimate

from parallelsel.render.step_charts import step_bars, step_parts
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.tables import fmt_pct, fmt_rate, fmt_time
import markdown  # markdown-exec: hide
from parallelsel.render.reasons import plan_label
from parallelsel.core.placement import link_for
from parallelsel.render.lesson_text import named_paper_cases

_, _, cluster = named_paper_cases()[1]
work = Workload(MODELS["llama2-7b"], global_batch=256)
name = f"{work.model.name}，{cluster.gpus} × {cluster.device.name}"
DEGREES = (4, 8, 16, 32)
labels, steps, notes, tp_calls = [], [], [], []
for tp in DEGREES:
    # The rest of the GPUs do data parallelism; ZeRO-1 if it fits, else ZeRO-3 (FSDP).
    for zero in (1, 3):
        e = estimate(work, Plan(dp=cluster.gpus // tp, tp=tp, zero=zero, sp=True, recompute="selective"), cluster)
        if e.fits:
            break
    assert e.fits, f"{plan_label(e.plan)} does not fit: {e.reasons}"  # never chart an infeasible plan
    labels.append(f"TP{tp} · DP{e.plan.dp} · ZeRO-{zero}")
    steps.append(e.step)
    notes.append(f"TP 组走 {link_for(cluster, tp).name}")
    tp_items = [t for t in e.traffic if t.strategy == "TP"]
    tp_calls.append((sum(t.calls for t in tp_items), sum(t.time for t in tp_items) / sum(t.calls for t in tp_items)))
svg = step_bars(labels, step_parts(steps), notes=notes, title=f"{name}：TP 度从 {DEGREES[0]} 到 {DEGREES[-1]} 的每步时间", salt="mis-tp-degree")
inside = max(i for i, t in enumerate(DEGREES) if t <= cluster.gpus_per_node)  # the last TP degree inside a node
out_link = link_for(cluster, DEGREES[inside + 1])  # markdown-exec: hide
(n_in, t_in), (n_out, t_out) = tp_calls[inside], tp_calls[inside + 1]  # markdown-exec: hide
print(figure_html(svg, f"TP 超过一个节点的卡数（{cluster.gpus_per_node}）后，TP 组的环改走 {out_link.name}（NCCL 每块网卡一个环，"  # markdown-exec: hide
                  f"合起来 {fmt_rate(out_link.achieved)}，节点内 {cluster.intra.name} 是 {fmt_rate(cluster.intra.achieved)}）；"  # markdown-exec: hide
                  f"每次集合通信从 {fmt_time(t_in)} 变为 {fmt_time(t_out)}（环更长、每步的延迟更大），"  # markdown-exec: hide
                  f"DP 度减半使每卡的微批次和 TP 调用从每步 {n_in:,.0f} 次变为 {n_out:,.0f} 次；步时从 TP{DEGREES[inside]} 的 "  # markdown-exec: hide
                  f"{fmt_time(steps[inside].total)} 变为 TP{DEGREES[inside + 1]} 的 {fmt_time(steps[inside + 1].total)}"))  # markdown-exec: hide
print("每步的计算 / 暴露的通信：" + "；".join(f"TP{t} {fmt_time(st.compute)} / {fmt_time(st.communication)}"
                                          for t, st in zip(DEGREES, steps)))
# What the page says: compute grows a little as the per-GPU matrices shrink; the exposed communication is what jumps
# once TP leaves the node.
assert all(a.compute <= b.compute for a, b in zip(steps, steps[1:]))
across = steps[inside + 1]
assert across.communication - steps[inside].communication > across.compute - steps[inside].compute
print(markdown.markdown(f"**要点**：TP 组一出节点（TP{DEGREES[inside + 1]}），暴露的通信就占了步时的 "  # markdown-exec: hide
                        f"{fmt_pct(across.communication / across.total, 0)}；节点内的 TP{DEGREES[0]} 到 TP{DEGREES[inside]}，"  # markdown-exec: hide
                        f"计算时间也从 {fmt_time(steps[0].compute)} 涨到 {fmt_time(steps[inside].compute)}（矩阵变窄，见下表）。"))  # markdown-exec: hide
