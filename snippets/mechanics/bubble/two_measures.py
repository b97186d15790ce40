# The lesson's bubble fraction (idle / total) and Narayanan's bubble overhead (idle / ideal), side by side.
from parallelsel import pipeline
from parallelsel.render.tables import fmt_pct, markdown_table

rows = []
for p, m in [(2, 4), (4, 4), (4, 8), (4, 16), (8, 8), (8, 32), (16, 16), (16, 128)]:
    frac = pipeline.bubble_fraction(p, m)      # (p-1)/(m+p-1)
    over = pipeline.bubble_overhead(p, m)      # (p-1)/m
    sim = pipeline.simulate(pipeline.schedule("1f1b", p, m), forward=1.0, backward=2.0)
    rows.append([p, m, fmt_pct(frac), fmt_pct(sim.bubble_fraction), fmt_pct(over), fmt_pct(sim.bubble_overhead),
                 f"{over / (1 + over):.4f} = {frac:.4f}"])
print(markdown_table(
    ["p", "m", "气泡占比 (p-1)/(m+p-1)", "模拟", "气泡开销 (p-1)/m", "模拟", "o/(1+o) 与占比"],
    rows, align="rrrrrrr",
))
