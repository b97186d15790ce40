# Pin TP to 16 (two nodes) and compare the best plan with the unconstrained best.
import parallelsel as ps
from parallelsel.render.tables import fmt_time, markdown_table

workload = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512)
cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8, gpus_per_node=8)
free = ps.search(workload, cluster, top=1).best
tp16 = ps.search(workload, cluster, top=1, fixed={"tp": 16}).best
print(markdown_table(["约束", "最佳方案", "每步时间"], [
    ["无", free.plan.label(), fmt_time(free.estimate.step.total)],
    ["TP = 16", tp16.plan.label(), fmt_time(tp16.estimate.step.total)],
], align="llr"))
print(f"TP=16 的最佳方案慢 {tp16.estimate.step.total / free.estimate.step.total:.2f} 倍。它的理由：\n")
for line in tp16.why:
    print(f"- {line}")
