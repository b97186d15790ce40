# 16 A100 in 2 nodes (NVLink3 inside, IB HDR between), Llama-2 13B: TP=16 across nodes, or TP=8 inside x DP=2?
import parallelsel as ps
from parallelsel.estimate import estimate
from parallelsel.render.comm_charts import describe_traffic
from parallelsel.render.tables import fmt_bytes, fmt_time, markdown_table

cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=2, gpus_per_node=8)
work = ps.Workload(ps.MODELS["llama2-13b"], global_batch=16)
rows = []
for plan in (ps.Plan(tp=16, recompute="selective"), ps.Plan(tp=8, dp=2, recompute="selective")):
    e = estimate(work, plan, cluster)
    rows.append([plan.label(), fmt_bytes(e.memory.total), describe_traffic(e.traffic), fmt_time(e.step.communication),
                 fmt_time(e.step.total), f"{e.step.tokens_per_s:,.0f}"])
print(markdown_table(["方案", "每卡内存", "集合通信", "暴露的通信", "步时", "tokens/s"], rows, align="lrlrrr"))
