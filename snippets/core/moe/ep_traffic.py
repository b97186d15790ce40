# Expert-parallel all-to-all per step for Mixtral 8x7B: the same EP group inside a node vs spanning two nodes.
import parallelsel as ps
from parallelsel import comm
from parallelsel.core.estimate import estimate
from parallelsel.render.tables import fmt_bytes, fmt_pct, fmt_time, markdown_table
from parallelsel.render.reasons import plan_label

model = ps.MODELS["mixtral-8x7b"]
device, gpus, ep = ps.DEVICES["h100-sxm-80gb"], 16, model.experts      # one expert per GPU of an EP group
intra, inter = ps.LINKS["nvlink4"], ps.LINKS["ib-ndr"]
workload = ps.Workload(model, global_batch=64)
b, s, h = 1, workload.seq_len, model.hidden
msg = b * s * h * model.top_k * 2       # bf16 tokens dispatched per micro-batch per MoE layer (top_k copies)
print(f"每层每个微批次 dispatch 的数据量 b·s·h·k·2 = {fmt_bytes(msg, 'MiB')}；"
      f"一次 {ep} 卡 all-to-all：走 {intra.name} {fmt_time(comm.collective_time('all-to-all', msg, ep, intra))}，"
      f"走 {inter.name} {fmt_time(comm.collective_time('all-to-all', msg, ep, inter))}\n")
rows = []
for per_node in (ep, ep // 2):          # a node holds the whole EP group, or half of it
    cluster = ps.Cluster(device, nodes=gpus // per_node, gpus_per_node=per_node, intra=intra, inter=inter)
    plan = ps.Plan(dp=gpus, ep=ep, zero=3, micro_batch=b, recompute="full")
    e = estimate(workload, plan, cluster)
    assert e.fits, e.reasons
    t = next(x for x in e.traffic if x.strategy == "EP")
    rows.append([f"{cluster.nodes} 节点 × {per_node} 卡", f"EP={ep}", t.link, f"{t.calls:,.0f}", fmt_time(t.time),
                 fmt_time(e.step.compute), fmt_pct(t.time / e.step.total), fmt_bytes(e.memory.total)])
print(f"{gpus} 张 {device.name}，方案 {plan_label(plan)}，每卡都放得下\n")
print(markdown_table(["集群", "专家并行", "EP 组走的链路", "每步 all-to-all 次数", "每步 all-to-all 用时", "每步计算", "占步时",
                      "每卡内存"], rows, align="lllrrrrr"))
