# A fixed global batch and micro-batch per rank: which DP degrees pass the batch constraint?
# --8<-- [start:givens]
import parallelsel as ps

GLOBAL_BATCH, MICRO_BATCH = 256, 4
print(f"全局批量固定为 {GLOBAL_BATCH} 条序列，每卡微批次 {MICRO_BATCH}。\n")
# --8<-- [end:givens]
from parallelsel.core.plan import constraint_violations
from parallelsel.render.reasons import join

work = ps.Workload(ps.MODELS["llama2-7b"], global_batch=GLOBAL_BATCH)
for dp in (16, 32, 64, 128, 256):
    reasons = constraint_violations(work, ps.Plan(dp=dp, micro_batch=MICRO_BATCH))
    print(f"dp={dp:>3}: " + ("满足" if not reasons else join(reasons)))
print(f"\n最大 DP 度 = 全局批量 / 微批次 = {GLOBAL_BATCH // MICRO_BATCH}")
