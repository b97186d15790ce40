# Self-check 4: the variables the bubble depends on: stages p, micro-batches m, chunks v, schedule, stage balance.
from parallelsel import pipeline
from parallelsel.render.tables import markdown_table

rows = []
def add(what, kind, p, m, v=1, forward=1.0):
    tl = pipeline.simulate(pipeline.schedule(kind, p, m, v), forward=forward,
                           backward=[2 * f for f in forward] if isinstance(forward, list) else 2 * forward)
    rows.append([what, kind, p, m, v, f"{tl.bubble_fraction:.1%}"])

add("基准", "1f1b", 4, 8)
add("段数 p 加倍", "1f1b", 8, 8)
add("微批次数 m 加倍", "1f1b", 4, 16)
V, SLOW = 2, 1.5
add(f"每卡 {V} 个虚拟段", "interleaved", 4, 8, V)
add("零气泡调度（反向拆成 I 和 W）", "zb-h1", 4, 8)
add(f"末段慢 {SLOW:g} 倍", "1f1b", 4, 8, forward=[1.0, 1.0, 1.0, SLOW])
print(markdown_table(["改动", "调度", "p", "m", "v", "气泡占比（模拟）"], rows, align="llrrrr"))
