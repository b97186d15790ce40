# Self-check 3: a fixed global batch caps the DP degree (global batch = dp x micro-batch x micro-batches).
import parallelsel as ps
from parallelsel.core.plan import constraint_violations
from parallelsel.render.reasons import join
from parallelsel.render.tables import markdown_table

work = ps.Workload(ps.MODELS["llama2-7b"], global_batch=256)
rows = []
for dp in (64, 128, 256, 512):
    for b in (1, 2):
        plan = ps.Plan(dp=dp, micro_batch=b)
        bad = constraint_violations(work, plan)
        rows.append([dp, b, plan.microbatches(work) if not bad else "—", join(bad) or "满足"])
print(f"全局批量 = {work.global_batch} 条序列\n")
print(markdown_table(["DP 度", "每卡微批次", "每卡微批次数（梯度累积）", "batch 约束"], rows, align="rrrl"))
