# Gradient accumulation under ZeRO: Llama-2 7B, dp=64 on 8 nodes x 8 A100 (IB HDR), 1 vs 8 micro-batches per rank.
# --8<-- [start:givens]
import parallelsel as ps

model = ps.MODELS["llama2-7b"]
cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8, gpus_per_node=8)
PER_RANK, STAGES = (1, 8), (0, 2, 3)
dp = cluster.gpus
print(f"{model.name}，dp={dp}（{cluster.nodes} 个节点 × {cluster.gpus_per_node} 张 {cluster.device.name}，节点间 {cluster.inter.name}）；"
      f"每卡每步跑 {' 或 '.join(map(str, PER_RANK))} 个微批次；比较 {'、'.join(f'ZeRO-{z}' for z in STAGES)}。")
# --8<-- [end:givens]
from parallelsel import comm
from parallelsel.render.comm_charts import describe_traffic
from parallelsel.render.tables import fmt_time, markdown_table

rows = []
for m in PER_RANK:
    work = ps.Workload(model, global_batch=dp * m)
    for zero in STAGES:
        items = comm.traffic(work, ps.Plan(dp=dp, zero=zero), cluster)
        rows.append([m, f"ZeRO-{zero}", describe_traffic(items), fmt_time(sum(t.time for t in items))])
print()
print(markdown_table(["每卡微批次数 m", "阶段", "每步的集合通信", "通信总时长"], rows, align="rllr"))
