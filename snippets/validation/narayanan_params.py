# Narayanan et al. 2021 Table 1: parameter counts of the GPT shapes (eq. 2), in billions.
from parallelsel.course.comparisons import comparisons
from parallelsel.render.comparisons import comparison_table

print(comparison_table(comparisons("narayanan")))
