# Global batch 256 sequences, micro-batch 4 per rank: which DP degrees pass the batch constraint?
import parallelsel as ps
from parallelsel.plan import constraint_violations

work = ps.Workload(ps.MODELS["llama2-7b"], global_batch=256)
for dp in (16, 32, 64, 128, 256):
    reasons = constraint_violations(work, ps.Plan(dp=dp, micro_batch=4))
    print(f"dp={dp:>3}: " + ("满足" if not reasons else "；".join(reasons)))
