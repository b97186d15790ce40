# Exercise: Llama-3 8B at s = 32K on 8 H100s (one node). Which of these plans fit, and what does each cost?
import parallelsel as ps
from parallelsel.estimate import estimate
from parallelsel.render.tables import fmt_bytes, fmt_time, markdown_table

cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=1, gpus_per_node=8, intra=ps.LINKS["nvlink4"])
workload = ps.Workload(ps.MODELS["llama3-8b"], global_batch=8, seq_len=32768)
plans = {
    "FSDP×8，选择性重算": ps.Plan(dp=8, zero=3, recompute="selective"),
    "FSDP×8，完全重算": ps.Plan(dp=8, zero=3, recompute="full"),
    "TP8 + SP，选择性重算": ps.Plan(tp=8, sp=True, zero=0, recompute="selective"),
}
rows = []
for name, plan in plans.items():
    e = estimate(workload, plan, cluster)
    rows.append([name, fmt_bytes(e.memory.activations), fmt_bytes(e.memory.total), "是" if e.fits else "否",
                 fmt_time(e.step.total)])
print(markdown_table(["方案", "每卡激活", "每卡总内存", "放得下", "每步时间"], rows, align="lrrlr"))
