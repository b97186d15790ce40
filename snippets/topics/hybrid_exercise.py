# TP4 x DP8 x PP4 on 8-GPU nodes: which groups leave the node, for two rank orders.
import parallelsel as ps
from parallelsel.render.placement import group_spans
from parallelsel.render.tables import markdown_table

gpus_per_node = 8
rows = []
# Default order TP -> DP -> PP.
for s in group_spans(ps.Plan(tp=4, dp=8, pp=4), gpus_per_node):
    rows.append(["TP→DP→PP", s.dim, s.size, s.stride, f"{s.crossing}/{s.groups}", s.nodes_per_group])
# Order TP -> PP -> DP: the library's layout with the roles of the 2nd and 3rd dimensions swapped.
swap = {"TP": "TP", "DP": "PP", "PP": "DP"}
for s in group_spans(ps.Plan(tp=4, dp=4, pp=8), gpus_per_node):
    rows.append(["TP→PP→DP", swap[s.dim], s.size, s.stride, f"{s.crossing}/{s.groups}", s.nodes_per_group])
print(markdown_table(["rank 顺序", "维度", "组大小", "步长", "跨节点的组", "一组最多跨几个节点"], rows, align="llrrrr"))
