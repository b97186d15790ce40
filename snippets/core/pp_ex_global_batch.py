# Llama-2 70B, global batch 512, micro-batch 1, PP=8: the more DP replicas, the fewer micro-batches each pipeline gets.
import parallelsel as ps
from parallelsel import pipeline
from parallelsel.plan import constraint_violations
from parallelsel.render.tables import fmt_pct, markdown_table

work = ps.Workload(ps.MODELS["llama2-70b"], global_batch=512)
rows = []
for dp in (8, 16, 32, 64, 128):
    plan = ps.Plan(dp=dp, pp=8, micro_batch=1)
    bad = constraint_violations(work, plan)
    m = plan.microbatches(work)
    rows.append([dp, plan.gpus, m, fmt_pct(pipeline.bubble_fraction(plan.pp, m)) if m else "—", "；".join(bad) or "满足"])
print(markdown_table(["DP 度", "总卡数", "每条流水线的微批次数 m", "气泡占比", "约束"], rows, align="rrrrl"))
