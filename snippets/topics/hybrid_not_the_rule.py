# "TP inside, DP across" vs sharding inside the node (HSDP), on NVLink nodes and on PCIe-only nodes.
import parallelsel as ps
from parallelsel.estimate import estimate
from parallelsel.render.tables import fmt_bytes, fmt_pct, fmt_time, markdown_table

workload = ps.Workload(ps.MODELS["llama2-13b"], global_batch=256)
plans = {
    "TP8 在节点内，DP4 跨节点": ps.Plan(dp=4, tp=8, sp=True),
    "FSDP 全分片到 32 卡": ps.Plan(dp=32, zero=3, recompute="selective"),
    "HSDP：节点内分片 8，节点间复制": ps.Plan(dp=32, zero=3, shard=8, recompute="selective"),
}
rows = []
for intra in ("nvlink3", "pcie4"):
    cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=4, gpus_per_node=8,
                         intra=ps.LINKS[intra], inter=ps.LINKS["eth-100g"])
    for name, plan in plans.items():
        e = estimate(workload, plan, cluster)
        rows.append([cluster.intra.name, name, fmt_bytes(e.memory.total), fmt_time(e.step.total),
                     fmt_time(e.step.communication), fmt_pct(e.step.mfu)])
print(f"{workload.model.name}，B={workload.global_batch}，{cluster.nodes} 节点 × {cluster.gpus_per_node} 张 "
      f"{cluster.device.name}，节点间 {cluster.inter.name}\n")
print(markdown_table(["节点内链路", "放法", "每卡内存", "每步时间", "暴露通信", "MFU"], rows, align="llrrrr"))
