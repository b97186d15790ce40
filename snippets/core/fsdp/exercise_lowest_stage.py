# Llama-2 13B on one node of 8 A100-40GB (dp=8, micro-batch 1, full recomputation): the lowest ZeRO stage that fits.
# --8<-- [start:givens]
import parallelsel as ps

model, device = ps.MODELS["llama2-13b"], ps.DEVICES["a100-40gb"]
DP, MICRO_BATCH, RECOMPUTE = 8, 1, "full"
print(f"{model.name}，一个节点 {DP} 张 {device.name}（dp={DP}，每卡微批次 {MICRO_BATCH}，完全重算）。")
# --8<-- [end:givens]
from parallelsel import memory
from parallelsel.render.tables import fmt_bytes, markdown_table

work = ps.Workload(model, global_batch=DP * MICRO_BATCH)
rows = []
for zero in (0, 1, 2, 3):
    b = memory.breakdown(work, ps.Plan(dp=DP, zero=zero, micro_batch=MICRO_BATCH, recompute=RECOMPUTE))
    rows.append([f"ZeRO-{zero}", fmt_bytes(b.states), fmt_bytes(b.gather_peak), fmt_bytes(b.total),
                 "放得下" if b.total <= device.memory else "放不下"])
print()
print(markdown_table(["阶段", "模型状态", "gather 峰值", "每卡合计", f"放进 {device.name}？"], rows, align="lrrrc"))
