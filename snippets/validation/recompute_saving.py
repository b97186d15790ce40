# Korthikanti et al. 2022 §5 and abstract: what selective recomputation saves (with TP + SP, t = 8).
from parallelsel.course.comparisons import comparisons
from parallelsel.render.comparisons import comparison_table

print(comparison_table(comparisons("recompute")))
