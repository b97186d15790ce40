# How many rings a DP group runs across two nodes, and the bus bandwidth they reach, as NCCL spreads them over the HCAs.
import parallelsel as ps
from parallelsel.core.placement import placement
from parallelsel.render.tables import fmt_rate, markdown_table

a100 = ps.DEVICES["a100-80gb"]
nodes = {"每卡一块 HDR（DGX A100）": ps.LINKS["ib-hdr"], "每节点 4 块 HDR，两卡共用一块": ps.LINKS["ib-hdr-4hca"]}
plans = [ps.Plan(dp=16), ps.Plan(tp=2, dp=8), ps.Plan(tp=8, dp=2)]
rows = []
for name, inter in nodes.items():
    cluster = ps.Cluster(a100, nodes=2, gpus_per_node=8, inter=inter)
    for plan in plans:
        g = placement(plan, cluster)["DP"]
        per_node = plan.dp // cluster.nodes
        rows.append([name, plan.label().split(" · mb")[0], per_node, g.rings, g.link.name, fmt_rate(g.link.achieved)])
print(markdown_table(["节点的网卡", "方案", "DP 组每节点的卡", "环数", "限速的链路", "DP 组的总线带宽"], rows, align="llrrlr"))
