# Exercise: Llama-3 8B at a long sequence length on one node of H100s. Which of these plans fit, and what does
# each cost -- with a fused attention kernel (what training stacks run today) and with the standard one?
# --8<-- [start:givens]
import parallelsel as ps

model, device = ps.MODELS["llama3-8b"], ps.DEVICES["h100-sxm-80gb"]
SEQ_LEN, GPUS = 32768, 8
print(f"{model.name}，序列长度 {SEQ_LEN:,} token，一个节点 {GPUS} 张 {device.name}（{ps.LINKS['nvlink4'].name}）。"
      f"候选方案：FSDP×{GPUS}（选择性重算或完全重算），TP{GPUS} + SP（选择性重算）；"
      f"注意力用融合内核（FlashAttention），再对照标准注意力。")
# --8<-- [end:givens]
from parallelsel.core.estimate import estimate
from parallelsel.render.tables import fmt_bytes, fmt_pct, fmt_time, markdown_table

cluster = ps.Cluster(device, nodes=1, gpus_per_node=GPUS, intra=ps.LINKS["nvlink4"])
plans = {
    f"FSDP×{GPUS}，选择性重算": ps.Plan(dp=GPUS, zero=3, recompute="selective"),
    f"FSDP×{GPUS}，完全重算": ps.Plan(dp=GPUS, zero=3, recompute="full"),
    f"TP{GPUS} + SP，选择性重算": ps.Plan(tp=GPUS, sp=True, zero=0, recompute="selective"),
}
kernels = {"融合内核": "flash", "标准注意力": "standard"}
rows = []
for kname, kernel in kernels.items():
    workload = ps.Workload(model, global_batch=GPUS, seq_len=SEQ_LEN, attention=kernel)
    for name, plan in plans.items():
        e = estimate(workload, plan, cluster)
        rows.append([kname, name, fmt_bytes(e.memory.activations), fmt_bytes(e.memory.total), fmt_bytes(e.budget),
                     ("是，余量 " + fmt_pct(e.margin)) if e.fits else "否", fmt_time(e.step.total)])
print()
print(markdown_table(["注意力", "方案", "每卡激活", "每卡总内存", "上限", "放得下", "每步时间"], rows,
                     align="llrrrlr"))
