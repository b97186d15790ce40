# The four-column matrix (解决的瓶颈 — 主要通信 — 适用条件 — 代价), kept as data in parallelsel.course.lesson.
from parallelsel.render.lesson_text import FOUR_COLUMNS
from parallelsel.render.matrix_tables import four_column_table

print(four_column_table(FOUR_COLUMNS))
