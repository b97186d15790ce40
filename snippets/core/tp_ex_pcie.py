# Llama-2 13B with TP=8 in one 8-GPU server: NVLink3 vs PCIe4 between the GPUs.
import parallelsel as ps
from parallelsel.estimate import estimate
from parallelsel.render.tables import fmt_bytes, fmt_pct, fmt_time, markdown_table

work = ps.Workload(ps.MODELS["llama2-13b"], global_batch=8)
plan = ps.Plan(tp=8, micro_batch=1, recompute="selective")
rows = []
for key in ("nvlink3", "pcie4"):
    cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=1, gpus_per_node=8, intra=ps.LINKS[key])
    e = estimate(work, plan, cluster)
    st = e.step
    rows.append([cluster.intra.name, fmt_bytes(e.memory.total), fmt_time(st.compute), fmt_time(st.communication),
                 fmt_pct(st.communication / st.total), f"{st.tokens_per_s:,.0f}"])
print(markdown_table(["GPU 间链路", "每卡内存", "计算", "TP 通信（不可重叠）", "通信占步时", "tokens/s"], rows, align="lrrrrr"))
