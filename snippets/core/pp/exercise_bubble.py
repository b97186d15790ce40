# The lesson's exercise 4: the bubble at two micro-batch counts, closed form beside a simulated 1F1B step.
# --8<-- [start:givens]
CASES = [(4, 4), (4, 16), (8, 8), (8, 32)]  # (stages p, micro-batches m)
FORWARD, BACKWARD = 1.0, 2.0                 # per stage and micro-batch, uniform stages
print("；".join(f"p={p}，m={m}" for p, m in CASES) + f"（各段均匀，反向耗时为前向的 {BACKWARD / FORWARD:g} 倍）。")
# --8<-- [end:givens]
from parallelsel import pipeline
from parallelsel.render.tables import fmt_pct, markdown_table

rows = []
for p, m in CASES:
    sim = pipeline.simulate(pipeline.schedule("1f1b", p, m), forward=FORWARD, backward=BACKWARD)
    rows.append([p, m, fmt_pct(pipeline.bubble_fraction(p, m)), fmt_pct(sim.bubble_fraction)])
print()
print(markdown_table(["段数 p", "微批次数 m", "(p-1)/(m+p-1)", "1F1B 模拟"], rows, align="rrrr"))
