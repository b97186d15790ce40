# Exercise 4, the givens: one pipeline depth and two micro-batch counts (uniform stages, backward = 2 x forward).
from parallelsel.render.tables import markdown_table

P, M_VALUES = 8, (8, 32)
print(markdown_table(["量", "值"], [["流水线段数 p", P], ["微批次数 m（两种）", "、".join(map(str, M_VALUES))],
                                   ["每段每微批前向 : 反向耗时", "1 : 2"]], align="lr"))
