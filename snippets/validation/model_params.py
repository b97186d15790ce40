# Parameter counts the model papers print for each preset, beside the library's exact count.
from parallelsel.course.comparisons import comparisons
from parallelsel.render.comparisons import comparison_table

print(comparison_table(comparisons("models")))
