# The same 128 GPUs as TP16 x DP2 x PP4: every TP group now spans two nodes.
import parallelsel as ps
from parallelsel.render.placement import placement_diagram
from parallelsel.render.style import figure_html  # markdown-exec: hide

cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=16, gpus_per_node=8,
                     intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
plan = ps.Plan(dp=2, tp=16, pp=4)
svg = placement_diagram(plan, cluster, salt="hybrid-placement-tp16")  # markdown-exec: hide
print(figure_html(svg, f"TP{plan.tp}×DP{plan.dp}×PP{plan.pp} 的放置：每个 TP 组跨 {plan.tp // cluster.gpus_per_node} 个节点（红色虚线框），"  # markdown-exec: hide
                       "每层的 TP 通信都要走节点间链路"))  # markdown-exec: hide  # markdown-exec: hide
