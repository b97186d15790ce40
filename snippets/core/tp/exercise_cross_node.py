# 16 A100 in 2 nodes (NVLink3 inside, IB HDR between), Llama-2 7B (32 heads, so TP=16 divides them): TP=16 across nodes, or TP=8 inside x DP=2?
# --8<-- [start:givens]
import parallelsel as ps

cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=2, gpus_per_node=8)
work = ps.Workload(ps.MODELS["llama2-7b"], global_batch=16)
plans = (ps.Plan(tp=16, recompute="selective"), ps.Plan(tp=8, dp=2, recompute="selective"))
print(f"{cluster.nodes} 个节点共 {cluster.gpus} 张 {cluster.device.name}（节点内 {cluster.intra.name}、节点间 {cluster.inter.name}），"
      f"训练 {work.model.name}，全局批量 {work.global_batch}，选择性重算。候选："
      + "；".join(f"TP={p.tp}" + (f" × DP={p.dp}" if p.dp > 1 else "") for p in plans) + "。")
# --8<-- [end:givens]
from parallelsel.core.estimate import estimate
from parallelsel.render.comm_charts import describe_traffic
from parallelsel.render.tables import fmt_bytes, fmt_time, markdown_table
from parallelsel.render.reasons import plan_label

rows, total = [], {}
for plan in plans:
    e = estimate(work, plan, cluster)
    total[plan.tp] = e.step.total
    assert e.fits, e.reasons  # compare only plans that are legal and fit
    rows.append([plan_label(plan), fmt_bytes(e.memory.total), describe_traffic(e.traffic), fmt_time(e.step.communication),
                 fmt_time(e.step.total), f"{e.step.tokens_per_s:,.0f}"])
print()
print(markdown_table(["方案", "每卡内存", "集合通信", "暴露的通信", "步时", "tokens/s"], rows, align="lrlrrr"))
assert total[max(total)] > total[min(total)], total   # the answer: TP across nodes is the slower plan
