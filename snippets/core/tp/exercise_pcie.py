# Llama-2 13B with TP=8 in one 8-GPU server: NVLink3 vs PCIe4 between the GPUs.
# --8<-- [start:givens]
import parallelsel as ps

work = ps.Workload(ps.MODELS["llama2-13b"], global_batch=8)
plan = ps.Plan(tp=8, micro_batch=1, recompute="selective")
device, LINKS = ps.DEVICES["a100-80gb"], ("nvlink3", "pcie4")
print(f"{work.model.name}，一台 {plan.tp} 卡 {device.name} 服务器：TP={plan.tp}，每卡微批次 {plan.micro_batch}，选择性重算，"
      f"全局批量 {work.global_batch}；卡间链路取 {' 或 '.join(ps.LINKS[k].name for k in LINKS)}。")
# --8<-- [end:givens]
from parallelsel.core.estimate import estimate
from parallelsel.render.tables import fmt_bytes, fmt_pct, fmt_time, markdown_table

rows = []
for key in LINKS:
    cluster = ps.Cluster(device, nodes=1, gpus_per_node=plan.tp, intra=ps.LINKS[key])
    e = estimate(work, plan, cluster)
    st = e.step
    rows.append([cluster.intra.name, fmt_bytes(e.memory.total), fmt_time(st.compute), fmt_time(st.communication),
                 fmt_pct(st.communication / st.total), f"{st.tokens_per_s:,.0f}"])
print()
print(markdown_table(["GPU 间链路", "每卡内存", "计算", "TP 通信（不可重叠）", "通信占步时", "tokens/s"], rows, align="lrrrrr"))
