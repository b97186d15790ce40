# Llama-2 70B, global batch 512, micro-batch 1, PP=8: the more DP replicas, the fewer micro-batches each pipeline gets.
# --8<-- [start:givens]
import parallelsel as ps

work = ps.Workload(ps.MODELS["llama2-70b"], global_batch=512)
PP, MICRO_BATCH, DP_DEGREES = 8, 1, (8, 16, 32, 64, 128)
print(f"{work.model.name}，全局批量 {work.global_batch} 条序列，每卡微批次 {MICRO_BATCH}，PP={PP}；"
      f"DP 度从 {DP_DEGREES[0]} 加到 {DP_DEGREES[-1]}。")
# --8<-- [end:givens]
from parallelsel import pipeline
from parallelsel.core.plan import constraint_violations
from parallelsel.render.reasons import join
from parallelsel.render.tables import fmt_pct, markdown_table

rows = []
for dp in DP_DEGREES:
    plan = ps.Plan(dp=dp, pp=PP, micro_batch=MICRO_BATCH)
    bad = constraint_violations(work, plan)
    m = plan.microbatches(work)
    rows.append([dp, plan.gpus, m, fmt_pct(pipeline.bubble_fraction(plan.pp, m)) if m else "—", join(bad) or "满足"])
print()
print(markdown_table(["DP 度", "总卡数", "每条流水线的微批次数 m", "气泡占比", "约束"], rows, align="rrrrl"))
