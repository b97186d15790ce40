# One node of 16 fails. What the surviving GPUs can still run, per plan, with the global batch B = 512 kept.
import parallelsel as ps
from parallelsel.core.estimate import estimate
from parallelsel.core.plan import constraint_violations
from parallelsel.render.reasons import join
from parallelsel.render.placement import layout
from parallelsel.render.tables import markdown_table

model = ps.MODELS["llama3-70b"]
workload = ps.Workload(model, global_batch=512)
cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=16, gpus_per_node=8,
                     intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
nodes, gpus_per_node = cluster.nodes, cluster.gpus_per_node
plans = [ps.Plan(dp=4, tp=8, pp=4, zero=1, recompute="full"),
         ps.Plan(dp=16, tp=8, zero=3, recompute="full"),
         ps.Plan(dp=128, zero=3, recompute="full")]
rows = []
for plan in plans:
    e = estimate(workload, plan, cluster)
    assert e.fits, e.reasons                                     # every plan runs before the failure
    name = f"TP{plan.tp}×DP{plan.dp}×PP{plan.pp}（ZeRO-{plan.zero}）"
    failed = 0                                                   # node 0 goes down
    lost_replicas = {s.dp_rank for s in layout(plan, cluster) if s.node == failed}
    new = plan.with_(dp=plan.dp - len(lost_replicas))            # DP shrinks by the replicas that touched the node
    idle = (nodes - 1) * gpus_per_node - new.gpus                # healthy GPUs the shrunk plan cannot use
    bad = constraint_violations(workload, new)
    # Largest DP that still divides B (micro-batch 1), and the healthy GPUs it leaves idle.
    keep = max(d for d in range(1, new.dp + 1) if not constraint_violations(workload, plan.with_(dp=d)))
    rows.append([name, len(lost_replicas), f"DP {plan.dp} → {new.dp}", idle,
                 join(bad) if bad else f"可以，m = {new.microbatches(workload)}",
                 keep, (nodes - 1) * gpus_per_node - plan.with_(dp=keep).gpus])
print(f"{model.name}，{nodes} 节点 × {gpus_per_node} 张 {cluster.device.name}，完全重算，B={workload.global_batch}，节点 0 故障\n")
print(markdown_table(["计划", "失去的 DP 副本", "DP 缩小", "空闲的健康卡", "保持 B 不变能否直接继续",
                      "能整除 B 的最大 DP", "此时空闲的健康卡"], rows, align="lrrrlrr"))
