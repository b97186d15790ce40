# Llama-2 13B on one node of 8 A100-40GB (dp=8, micro-batch 1, full recomputation): the lowest ZeRO stage that fits.
import parallelsel as ps
from parallelsel import memory
from parallelsel.render.tables import fmt_bytes, markdown_table

device = ps.DEVICES["a100-40gb"]
work = ps.Workload(ps.MODELS["llama2-13b"], global_batch=8)
rows = []
for zero in (0, 1, 2, 3):
    b = memory.breakdown(work, ps.Plan(dp=8, zero=zero, recompute="full"))
    rows.append([f"ZeRO-{zero}", fmt_bytes(b.states), fmt_bytes(b.gather_peak), fmt_bytes(b.total),
                 "放得下" if b.total <= device.memory else "放不下"])
print(markdown_table(["阶段", "模型状态", "聚合峰值", "每卡合计", device.name], rows, align="lrrrc"))
