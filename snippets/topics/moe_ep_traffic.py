# Expert-parallel all-to-all per step for Mixtral 8x7B: EP inside a node vs EP spanning two nodes.
import parallelsel as ps
from parallelsel import comm
from parallelsel.estimate import estimate
from parallelsel.render.tables import fmt_bytes, fmt_pct, fmt_time, markdown_table

cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=2, gpus_per_node=8,
                     intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
model = ps.MODELS["mixtral-8x7b"]
workload = ps.Workload(model, global_batch=64)
b, s, h = 1, workload.seq_len, model.hidden
msg = b * s * h * model.top_k * 2       # bf16 tokens dispatched per micro-batch per MoE layer (top_k copies)
print(f"每层每个微批次 dispatch 的数据量 b·s·h·k·2 = {fmt_bytes(msg, 'MiB')}；"
      f"一次 all-to-all：8 卡 NVLink4 {fmt_time(comm.collective_time('all-to-all', msg, 8, cluster.intra))}，"
      f"16 卡 InfiniBand NDR {fmt_time(comm.collective_time('all-to-all', msg, 16, cluster.inter))}\n")
rows = []
for ep in (8, 16):
    plan = ps.Plan(dp=16, ep=ep, zero=3, micro_batch=b, recompute="selective")
    e = estimate(workload, plan, cluster)
    t = next(x for x in e.traffic if x.strategy == "EP")
    rows.append([f"EP={ep}", t.link, f"{t.calls:,.0f}", fmt_time(t.time), fmt_time(e.step.compute),
                 fmt_pct(t.time / e.step.total), fmt_bytes(e.memory.total), "是" if e.fits else "否"])
print(markdown_table(["专家并行", "链路", "每步 all-to-all 次数", "每步 all-to-all 用时", "每步计算", "占步时", "每卡内存", "放得下"],
                     rows, align="llrrrrrl"))
