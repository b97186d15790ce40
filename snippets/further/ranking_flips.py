# The same two plans for the same workload, on two clusters: which one is faster depends on the hardware.
import parallelsel as ps
from parallelsel.core.estimate import estimate
from parallelsel.render.tables import fmt_bytes, fmt_time, markdown_table

work = ps.Workload(ps.MODELS["llama2-13b"], global_batch=64)
plans = [ps.Plan(dp=16, zero=3, micro_batch=1, recompute="selective"),
         ps.Plan(dp=2, tp=8, zero=1, micro_batch=1, sp=True, recompute="selective")]
plans = {(f"TP{p.tp} × DP{p.dp}（ZeRO-{p.zero}）" if p.tp > 1 else f"FSDP（ZeRO-{p.zero}）×{p.dp}"): p for p in plans}
device = ps.DEVICES["h100-sxm-80gb"]
clusters = [ps.Cluster(device, nodes=2, gpus_per_node=8, intra=ps.LINKS["nvlink4"], inter=ps.LINKS[k])
            for k in ("ib-ndr", "eth-100g")]
clusters = {f"{c.intra.name} 节点内 + {c.inter.name} 节点间（每节点 {c.nics_per_node} 块）": c for c in clusters}
c0 = next(iter(clusters.values()))
print(f"{work.model.name}，全局批量 {work.global_batch}，{c0.nodes} 个节点 × {c0.gpus_per_node} 张 {device.name}，"
      f"框架栈 {ps.STACKS[work.stack].name}，只换节点间互联：\n")
rows, first = [], []
for cname, cluster in clusters.items():
    results = [(estimate(work, plan, cluster), pname) for pname, plan in plans.items()]
    results.sort(key=lambda r: r[0].step.total)
    first.append(results[0][1])
    for rank, (est, pname) in enumerate(results, 1):
        rows.append([cname, pname, fmt_bytes(est.memory.total), fmt_time(est.step.total),
                     fmt_time(est.step.communication), f"第 {rank}"])
print(markdown_table(["集群", "方案", "每卡内存（GiB）", "每步时间", "其中暴露通信", "排名"], rows, align="llrrrc"))
assert first[0] != first[1], first   # what the page says: changing the cluster flips which plan is faster
