# Exercise: Llama-3 8B at a long sequence length on one node of H100s. Which of these plans fit, and what does each cost?
# --8<-- [start:givens]
import parallelsel as ps

model, device = ps.MODELS["llama3-8b"], ps.DEVICES["h100-sxm-80gb"]
SEQ_LEN, GPUS = 32768, 8
print(f"{model.name}，序列长度 {SEQ_LEN:,} token，一个节点 {GPUS} 张 {device.name}（{ps.LINKS['nvlink4'].name}）。"
      f"候选方案：FSDP×{GPUS}（选择性重算或完全重算），TP{GPUS} + SP（选择性重算）。")
# --8<-- [end:givens]
from parallelsel.estimate import estimate
from parallelsel.render.tables import fmt_bytes, fmt_time, markdown_table

cluster = ps.Cluster(device, nodes=1, gpus_per_node=GPUS, intra=ps.LINKS["nvlink4"])
workload = ps.Workload(model, global_batch=GPUS, seq_len=SEQ_LEN)
plans = {
    f"FSDP×{GPUS}，选择性重算": ps.Plan(dp=GPUS, zero=3, recompute="selective"),
    f"FSDP×{GPUS}，完全重算": ps.Plan(dp=GPUS, zero=3, recompute="full"),
    f"TP{GPUS} + SP，选择性重算": ps.Plan(tp=GPUS, sp=True, zero=0, recompute="selective"),
}
rows = []
for name, plan in plans.items():
    e = estimate(workload, plan, cluster)
    rows.append([name, fmt_bytes(e.memory.activations), fmt_bytes(e.memory.total), "是" if e.fits else "否：" + "；".join(e.reasons),
                 fmt_time(e.step.total)])
print()
print(markdown_table(["方案", "每卡激活", "每卡总内存", "放得下", "每步时间"], rows, align="lrrlr"))
