# Gradient accumulation under ZeRO: Llama-2 7B, dp=64 on 8 nodes x 8 A100 (IB HDR), 1 vs 8 micro-batches per rank.
import parallelsel as ps
from parallelsel import comm
from parallelsel.render.comm_charts import describe_traffic
from parallelsel.render.tables import fmt_time, markdown_table

cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8, gpus_per_node=8)
rows = []
for m in (1, 8):
    work = ps.Workload(ps.MODELS["llama2-7b"], global_batch=64 * m)
    for zero in (0, 2, 3):
        items = comm.traffic(work, ps.Plan(dp=64, zero=zero), cluster)
        rows.append([m, f"ZeRO-{zero}", describe_traffic(items), fmt_time(sum(t.time for t in items))])
print(markdown_table(["每卡微批次数 m", "阶段", "每步的集合通信", "通信总时长"], rows, align="rllr"))
