# Exercise 4, answer: the closed forms beside a simulated 1F1B step, for the givens above.
from parallelsel import pipeline
from parallelsel.render.tables import markdown_table

P, M_VALUES = 8, (8, 32)        # the givens of exercise 4
rows = []
for m in M_VALUES:
    tl = pipeline.simulate(pipeline.schedule("1f1b", P, m), forward=1.0, backward=2.0)
    rows.append([m, f"{pipeline.bubble_fraction(P, m):.1%}", f"{tl.bubble_fraction:.1%}",
                 f"{pipeline.bubble_overhead(P, m):.1%}", f"{tl.bubble_overhead:.1%}", f"{tl.makespan:g}"])
print(markdown_table(["m", "气泡占比 (p−1)/(m+p−1)", "模拟：空闲/总时间", "气泡开销 (p−1)/m", "模拟：空闲/忙碌",
                      "步时（前向耗时为 1）"], rows, align="rrrrrr"))
