# Korthikanti et al. 2022 Table 2 for GPT-3 175B: activation bytes per layer divided by sbh,
# the paper's formula evaluated beside the library's term-by-term count (micro-batch b = 1).
from parallelsel.course.comparisons import comparisons
from parallelsel.course.references import KORTHIKANTI_GPT3
from parallelsel.render.comparisons import comparison_table

g = KORTHIKANTI_GPT3
print(f"设定：a = {g['a']}，s = {g['s']}，h = {g['h']}，t = {g['t']}；于是 5as/h = {5 * g['a'] * g['s'] / g['h']:g}\n")
print(comparison_table(comparisons("activations")))
