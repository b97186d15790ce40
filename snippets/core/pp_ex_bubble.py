# The lesson's exercise 4: the bubble at two micro-batch counts, closed form beside a simulated 1F1B step.
from parallelsel import pipeline
from parallelsel.render.tables import fmt_pct, markdown_table

rows = []
for p, m in [(4, 4), (4, 16), (8, 8), (8, 32)]:
    sim = pipeline.simulate(pipeline.schedule("1f1b", p, m), forward=1.0, backward=2.0)
    rows.append([p, m, fmt_pct(pipeline.bubble_fraction(p, m)), fmt_pct(sim.bubble_fraction)])
print(markdown_table(["阶段数 p", "微批次数 m", "(p-1)/(m+p-1)", "1F1B 模拟"], rows, align="rrrr"))
