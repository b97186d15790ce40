# ZeRO Figure 1 (7.5B parameters, N_d = 64, K = 12): model states per device by ZeRO stage, in GB (1e9 bytes).
from parallelsel.course.comparisons import comparisons
from parallelsel.course.references import ZERO_FIGURE1_SETUP
from parallelsel.render.comparisons import comparison_table
from parallelsel.render.tables import fmt_count

z = ZERO_FIGURE1_SETUP
print(f"设定：Ψ = {fmt_count(z['params'])} 参数，N_d = {z['dp']}，K = {z['K']}；单位 GB = 10^9 字节\n")
print(comparison_table(comparisons("zero")))
