# Exercise 2: after one node fails, which plan keeps more of the healthy GPUs working? (The table's first and last plans.)
import parallelsel as ps
from parallelsel.render.placement import layout
from parallelsel.render.tables import markdown_table

workload = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512)
cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=16, gpus_per_node=8,
                     intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
healthy = (cluster.nodes - 1) * cluster.gpus_per_node
plans = {"TP8×DP4×PP4": ps.Plan(dp=4, tp=8, pp=4, zero=1, recompute="full"),
         "纯 FSDP（DP128）": ps.Plan(dp=128, zero=3, recompute="full")}
out = {}
for name, plan in plans.items():
    lost = {s.dp_rank for s in layout(plan, cluster) if s.node == 0}      # replicas with a GPU on the failed node 0
    working = (plan.dp - len(lost)) * plan.tp * plan.pp                   # GPUs of the surviving replicas
    out[name] = (len(lost), healthy - working)
rows = [[name, lost, idle, f"{(healthy - idle) / healthy:.0%}"] for name, (lost, idle) in out.items()]
(lost3d, idle3d), (lostf, idlef) = out.values()
assert lost3d < lostf and idle3d > idlef == 0  # fewer replicas lost, yet more healthy GPUs left idle
print(markdown_table(["计划", "失去的 DP 副本", "空闲的健康卡", "仍在干活的健康卡"], rows, align="lrrr"))
