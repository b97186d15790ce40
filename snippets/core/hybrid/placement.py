# TP8 x DP4 x PP4 on 16 nodes x 8 GPUs: rank order TP fastest, then DP, then PP (parallelsel.core.plan).
import parallelsel as ps
from parallelsel.render.placement import placement_diagram
from parallelsel.render.style import figure_html  # markdown-exec: hide

cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=16, gpus_per_node=8,
                     intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
plan = ps.Plan(dp=4, tp=8, pp=4)
assert plan.tp == cluster.gpus_per_node  # the caption says one TP group per node
svg = placement_diagram(plan, cluster, salt="hybrid-placement-tp8")  # markdown-exec: hide
print(figure_html(svg, f"TP{plan.tp}×DP{plan.dp}×PP{plan.pp} 的放置：每个节点正好是一个 TP 组，DP 组和 PP 组都跨节点"))  # markdown-exec: hide
