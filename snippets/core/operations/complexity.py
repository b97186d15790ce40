# A rough operational-complexity count per plan on 16 nodes x 8 GPUs: dimensions in use and communication groups.
import parallelsel as ps
from parallelsel.render.placement import group_spans
from parallelsel.render.tables import markdown_table
from parallelsel.render.reasons import plan_label

cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=16, gpus_per_node=8)
plans = [
    ps.Plan(dp=128, zero=3),
    ps.Plan(dp=16, tp=8, zero=3, sp=True),
    ps.Plan(dp=4, tp=8, pp=4, zero=1, sp=True),
]
rows = []
for plan in plans:
    spans = [s for s in group_spans(plan, cluster) if s.size > 1]
    groups = sum(s.groups for s in spans)
    crossing = sum(s.crossing for s in spans)
    rows.append([plan_label(plan).replace(" · mb1", ""), plan.dims, groups, crossing])
print(markdown_table(["计划", "使用的并行维度数（plan.dims）", "TP/DP/PP 通信组总数", "其中跨节点的组"], rows, align="lrrr"))
