# One model, one node, four ways to use its 8 GPUs: Llama-2 13B, 8 x A100-80GB (NVLink3), global batch 64.
import parallelsel as ps
from parallelsel.core.estimate import estimate
from parallelsel.render.comm_charts import describe_traffic
from parallelsel.render.tables import fmt_bytes, fmt_pct, fmt_time, markdown_table

cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=1, gpus_per_node=8)
work = ps.Workload(ps.MODELS["llama2-13b"], global_batch=64)
plans = {
    "DP": ps.Plan(dp=8, recompute="selective"),
    "FSDP（ZeRO-3）": ps.fsdp_plan("FULL_SHARD", dp=8, recompute="selective"),
    "TP": ps.Plan(tp=8, recompute="selective"),
    "PP（1F1B）": ps.Plan(pp=8, recompute="selective"),
}
print(f"{work.model.name}，{cluster.nodes} 个节点 × {cluster.gpus_per_node} 张 {cluster.device.name}（{cluster.intra.name}），"
      f"全局批量 {work.global_batch} 条序列，各方案都开选择性重算、用满 {cluster.gpus} 张卡。\n")
rows = []
for name, plan in plans.items():
    e = estimate(work, plan, cluster)
    mem = e.memory
    rows.append([name, fmt_bytes(mem.states), fmt_bytes(mem.activations + mem.embeddings), fmt_bytes(mem.total),
                 "放得下" if e.fits else "放不下", describe_traffic(e.traffic), fmt_time(e.step.communication_total),
                 fmt_time(e.step.total), fmt_pct(e.step.bubble / e.step.total)])
print(markdown_table([f"策略（度 {cluster.gpus}）", "每卡模型状态", "每卡激活", "每卡合计", f"放进 {cluster.device.name}？", "每步的通信", "通信总时长", "步时（估算）", "其中气泡"],
                     rows, align="lrrrclrrr"))
