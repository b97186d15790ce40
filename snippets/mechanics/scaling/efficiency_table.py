# E(P) for Llama-3 70B on H100 nodes, TP8 x PP8 fixed, DP growing; the global batch stays at 512 sequences.
import parallelsel as ps
from parallelsel.core.estimate import scaling_efficiency
from parallelsel.render.tables import fmt_pct, fmt_time, folded, markdown_table

cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=128, gpus_per_node=8,
                     intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
workload = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512)
plans = [ps.Plan(dp=d, tp=8, pp=8, sp=True, zero=1, recompute="selective") for d in (1, 2, 4, 8, 16)]

print(f"{workload.model.name}，全局批量 B={workload.global_batch} 条序列 × {workload.seq_len} token，"
      f"每条流水线 TP{plans[0].tp}×PP{plans[0].pp}，{cluster.device.name} 节点（节点内 {cluster.intra.name}，节点间 {cluster.inter.name}）\n")
rows, more = [], []
for pt in scaling_efficiency(workload, plans, cluster):
    st, loss = pt.estimate.step, pt.loss
    rows.append([pt.gpus, pt.plan.microbatches(workload), fmt_time(st.total), fmt_pct(pt.efficiency),
                 fmt_pct(loss["bubble"]), fmt_pct(loss["communication"])])
    more.append([pt.gpus, pt.plan.dp, f"{st.tokens_per_s:,.0f}", fmt_pct(loss["recompute"])])
print(markdown_table(["P", "每条流水线微批次 m", "每步时间", "E(P)", "气泡占比", "暴露通信占比"], rows, align="rrrrrr"))
print(folded("其余各列：DP 度、吞吐、重算占比",
             markdown_table(["P", "DP", "token/s", "重算占比"], more, align="rrrr")))
