# The same two plans for the same workload, on two clusters: which one is faster depends on the hardware.
import parallelsel as ps
from parallelsel.estimate import estimate
from parallelsel.render.tables import fmt_bytes, fmt_time, markdown_table

work = ps.Workload(ps.MODELS["llama2-13b"], global_batch=64)
plans = {
    "FSDP（ZeRO-3）×16": ps.Plan(dp=16, zero=3, micro_batch=1, recompute="selective"),
    "TP8 × DP2（ZeRO-1）": ps.Plan(dp=2, tp=8, zero=1, micro_batch=1, sp=True, recompute="selective"),
}
clusters = {
    "NVLink 节点内 + IB NDR 节点间": ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=2, gpus_per_node=8,
                                          intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"]),
    "PCIe 节点内 + IB NDR 节点间": ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=2, gpus_per_node=8,
                                        intra=ps.LINKS["pcie4"], inter=ps.LINKS["ib-ndr"]),
}
rows = []
for cname, cluster in clusters.items():
    results = [(estimate(work, plan, cluster), pname) for pname, plan in plans.items()]
    results.sort(key=lambda r: r[0].step.total)
    for rank, (est, pname) in enumerate(results, 1):
        rows.append([cname, pname, fmt_bytes(est.memory.total), fmt_time(est.step.total),
                     fmt_time(est.step.communication), f"第 {rank}"])
print(markdown_table(["集群", "方案", "每卡内存（GiB）", "每步时间", "其中暴露通信", "排名"], rows, align="llrrrc"))
