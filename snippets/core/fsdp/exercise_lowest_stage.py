# Llama-2 13B on one node of 8 A100-40GB (dp=8, micro-batch 1, full recomputation): the lowest ZeRO stage that fits.
# --8<-- [start:givens]
import parallelsel as ps

model, device = ps.MODELS["llama2-13b"], ps.DEVICES["a100-40gb"]
DP, MICRO_BATCH, RECOMPUTE = 8, 1, "full"
print(f"{model.name}，一个节点 {DP} 张 {device.name}（dp={DP}，每卡微批次 {MICRO_BATCH}，完全重算）。")
# --8<-- [end:givens]
from parallelsel import memory
from parallelsel.core.memory import budget
from parallelsel.render.tables import fmt_bytes, markdown_table

work = ps.Workload(model, global_batch=DP * MICRO_BATCH)
rows, fits = [], []
for zero in (0, 1, 2, 3):
    plan = ps.Plan(dp=DP, zero=zero, micro_batch=MICRO_BATCH, recompute=RECOMPUTE)
    b = memory.breakdown(work, plan)
    cap = budget(device, plan)  # usable memory (driver total - CUDA context - NCCL buffers) x (1 - headroom)
    fits.append(b.total <= cap)
    rows.append([f"ZeRO-{zero}", fmt_bytes(b.states), fmt_bytes(b.gather_peak), fmt_bytes(b.total), fmt_bytes(cap),
                 "放得下" if fits[-1] else "放不下"])
assert fits == [False, False, False, True]
print()
print(markdown_table(["阶段", "模型状态", "gather 峰值", "每卡合计", "上限 C_device", "放得下？"], rows, align="lrrrrc"))
print(f"\n上限 C_device 是 {device.name} 的可用显存（驱动报告的 {fmt_bytes(device.memory, digits=0)} 减去 CUDA 上下文和 NCCL 缓冲）"
      "再留出预留比例（见“机制与推导”的内存页）。")
