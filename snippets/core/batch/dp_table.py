# Llama-3 70B with TP8 per pipeline: how the global batch B bounds DP, and the bubble that follows.
import parallelsel as ps
from parallelsel import pipeline
from parallelsel.core.plan import constraint_violations
from parallelsel.render.reasons import join
from parallelsel.render.tables import fmt_pct, markdown_table

model = ps.MODELS["llama3-70b"]
tp, b = 8, 1                                   # TP degree, micro-batch (sequences per rank per pass)
rows = []
for B in (512, 1024):
    workload = ps.Workload(model, global_batch=B)
    for pp in (4, 8):
        for dp in (8, 32, 128, B // b, 2 * B // b):
            plan = ps.Plan(dp=dp, tp=tp, pp=pp, micro_batch=b)
            bad = constraint_violations(workload, plan)
            if bad:
                rows.append([B, pp, dp, dp * tp * pp, "—", "—", join(bad)])
                continue
            m = plan.microbatches(workload)    # B / (dp * b): gradient-accumulation steps per pipeline
            rows.append([B, pp, dp, dp * tp * pp, m, fmt_pct(pipeline.bubble_fraction(pp, m)), ""])
print(f"{model.name}，每条序列 {model.seq_len} token，TP={tp}，微批次大小 b={b}\n")
print(markdown_table(["B（序列）", "PP", "DP", "GPU 数", "每条流水线的微批次 m", "气泡占比 (p-1)/(m+p-1)", "不可行的原因"],
                     rows, align="rrrrrrl"))
