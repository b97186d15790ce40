# Closed-form bubble (Narayanan et al. 2021, §2.2) beside the simulated one, uniform stages.
from parallelsel import pipeline
from parallelsel.render.tables import markdown_table
from parallelsel.render.units import fmt_pct

rows = []
for p, m, v in [(4, 4, 1), (4, 8, 1), (4, 32, 1), (8, 8, 1), (8, 32, 1), (8, 32, 2), (8, 32, 4), (16, 64, 1), (16, 64, 2)]:
    kind = "interleaved" if v > 1 else "1f1b"
    sim = pipeline.simulate(pipeline.schedule(kind, p, m, chunks=v), forward=1.0, backward=2.0)
    rows.append([
        p, m, v,
        fmt_pct(pipeline.bubble_fraction(p, m, v)), fmt_pct(sim.bubble_fraction),
        fmt_pct(pipeline.bubble_overhead(p, m, v)), fmt_pct(sim.bubble_overhead),
    ])
print(markdown_table(
    ["段数 p", "微批次数 m", "每段块数 v", "气泡占比（公式）", "气泡占比（模拟）", "气泡开销（公式）", "气泡开销（模拟）"],
    rows, align="rrrrrrr",
))
