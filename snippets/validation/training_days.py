# Narayanan et al. 2021 §5.1, eq. 4: GPT-3 175B on 300B tokens with 1024 A100s at 140 TFLOP/s each.
from parallelsel.course.comparisons import comparisons
from parallelsel.course.references import NARAYANAN_EQ4
from parallelsel.render.comparisons import comparison_table
from parallelsel.render.tables import fmt_count, fmt_flops

k = NARAYANAN_EQ4.key
print(f"设定：{fmt_count(k['tokens'])} token，{k['gpus']} 张 GPU，每张 {fmt_flops(k['flops_per_gpu'])}\n")
print(comparison_table(comparisons("days")))
