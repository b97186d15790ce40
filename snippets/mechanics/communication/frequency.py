# How often each collective runs in one step: DP once per step, TP four times per layer per micro-batch.
import parallelsel as ps
from parallelsel.core.estimate import estimate
from parallelsel.render.tables import fmt_bytes, fmt_time, markdown_table
from parallelsel.render.reasons import plan_label

cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=2, gpus_per_node=8,
                     intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
workload = ps.Workload(ps.MODELS["llama3-8b"], global_batch=64)
plan = ps.Plan(dp=2, tp=8, zero=0, micro_batch=1)      # TP inside each node, DP across the two nodes
e = estimate(workload, plan, cluster)
assert e.fits, e.reasons
print(f"{workload.model.name}，{plan_label(plan)}，每条序列 {workload.seq_len} token，"
      f"每步每个 DP 副本 {plan.microbatches(workload)} 个微批次，{workload.model.layers} 层\n")
rows = []
for t in e.traffic:
    rows.append([t.strategy, t.op, fmt_bytes(t.nbytes, "MiB"), f"{t.calls:,.0f}", fmt_bytes(t.sent, "GiB"), t.link,
                 fmt_time(t.time), "可以" if t.overlappable else "不能"])
print(markdown_table(["维度", "操作", "每次数据量", "每步次数", "每卡每步发送", "链路", "每步用时", "能否与计算重叠"],
                     rows, align="llrrrlrl"))
