# TP x DP x PP on 8-GPU nodes: which groups leave the node, for two rank orders.
# --8<-- [start:givens]
import parallelsel as ps

TP, DP, PP, GPUS_PER_NODE = 4, 8, 4, 8
print(f"计划 TP{TP}×DP{DP}×PP{PP}（{TP * DP * PP} 张卡），每节点 {GPUS_PER_NODE} 张卡。")
# --8<-- [end:givens]
from parallelsel.render.placement import group_spans
from parallelsel.render.tables import markdown_table

cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=TP * DP * PP // GPUS_PER_NODE, gpus_per_node=GPUS_PER_NODE)
rows = []
# Default order TP -> DP -> PP.
for s in group_spans(ps.Plan(tp=TP, dp=DP, pp=PP), cluster):
    rows.append(["TP→DP→PP", s.dim, s.size, s.stride, f"{s.crossing}/{s.groups}", s.nodes_per_group])
# Order TP -> PP -> DP: the library's layout with the roles of the 2nd and 3rd dimensions swapped.
swap = {"TP": "TP", "DP": "PP", "PP": "DP"}
for s in group_spans(ps.Plan(tp=TP, dp=PP, pp=DP), cluster):
    rows.append(["TP→PP→DP", swap[s.dim], s.size, s.stride, f"{s.crossing}/{s.groups}", s.nodes_per_group])
print()
print(markdown_table(["rank 顺序", "维度", "组大小", "步长", "跨节点的组", "一组最多跨几个节点"], rows, align="llrrrr"))
