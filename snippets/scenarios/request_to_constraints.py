# A training request turned into scheduling constraints: paper case 2 with the plan search's first place.
from parallelsel import reliability as rel

from parallelsel.core.placement import placement
from parallelsel.render.tables import fmt_bytes, fmt_pct, fmt_rate, fmt_time, markdown_table
from parallelsel.render.units import fmt_size
from parallelsel.core.search import search
from parallelsel.render.reasons import plan_label
from parallelsel.render.lesson_text import named_paper_cases

name, work, cluster = named_paper_cases()[1]
best = search(work, cluster, top=1).best
plan, e = best.plan, best.estimate

# Assumptions a platform team would replace with its own measurements:
STORAGE_BW = 10e9          # bytes/s the checkpoint store sustains for this job's writers
RESTART = 15 * 60          # seconds to reschedule, reload the checkpoint and warm up

r = work.recipe
ckpt = rel.checkpoint_bytes(work.model.params, r)    # weights + optimizer state, no gradients
write = rel.write_time(ckpt, storage_bandwidth=STORAGE_BW, node_bandwidth=STORAGE_BW)
mtbf = rel.job_mtbf(plan.gpus)                        # Llama 3's interruption rate (Dubey et al. 2024 §3.3.4)
interval = rel.young_interval(write, mtbf)            # Young 1974: optimal checkpoint interval
lost = interval / 2 + RESTART + write                 # expected time lost per failure

per_link = {}
for t in e.traffic:
    per_link[t.link] = per_link.get(t.link, 0.0) + t.sent
# The plan's own placement (TP fastest, then DP, then PP; ranks fill nodes in order): which groups leave a node.
groups = placement(plan, cluster)
affinity = "；".join(f"{k}={g.size} 的组{'跨节点' if g.spans_nodes else '须在同一节点'}"
                     for k, g in groups.items() if k in ("TP", "DP", "PP") and g.size > 1)

rows = [
    ["设备", f"{plan.gpus} × {cluster.device.name}，{cluster.nodes} 节点 × {cluster.gpus_per_node} 卡，整节点分配"],
    ["同机亲和", affinity],
    ["互联（每卡每步发送）", "；".join(f"{k}：{fmt_bytes(v, 'GiB')}" for k, v in per_link.items())],
    ["每卡内存", f"{fmt_bytes(e.memory.total)} / 可用 {fmt_bytes(e.usable)}（驱动报告 {fmt_bytes(cluster.device.memory)}，"
                 f"余量 {fmt_pct(e.margin)}）"],
    ["checkpoint 大小", f"{fmt_size(ckpt)}（权重 {r.weights:g} + 优化器 {r.optimizer:g} 字节/参数）"],
    ["写一次 checkpoint", f"{fmt_time(write)}（存储 {fmt_rate(STORAGE_BW)}）"],
    ["作业的平均故障间隔", f"{fmt_time(mtbf)}（按 Llama 3 报告的中断率折算到 {plan.gpus} 卡）"],
    ["建议的 checkpoint 间隔", f"{fmt_time(interval)}（Young 公式 √(2·写入时间·MTBF)）"],
    ["每次故障的预期损失", f"{fmt_time(lost)}（半个间隔 + 重启 {fmt_time(RESTART)} + 一次写入）"],
    ["估计步时", f"{fmt_time(e.step.total)}，每个 checkpoint 间隔约 {interval / e.step.total:.0f} 步"],
]
print(f"{name}：{work.model.name}，方案 {plan_label(plan)}\n")
print(markdown_table(["调度约束", "由方案算出"], rows))
