# 1F1B vs ZB-H1 when forward, input-gradient and weight-gradient passes each cost 1 (Qi et al. 2024, §2.1).
from parallelsel import pipeline
from parallelsel.render.tables import markdown_table

rows = []
for p, m in [(4, 8), (8, 16), (8, 32), (16, 64)]:
    one = pipeline.simulate(pipeline.schedule("1f1b", p, m), forward=1.0, backward=1.0, weight=1.0)
    zb = pipeline.simulate(pipeline.schedule("zb-h1", p, m), forward=1.0, backward=1.0, weight=1.0)
    rows.append([
        p, m,
        f"{pipeline.onef1b_bubble_time(p, 1.0, 1.0, 1.0):g}", f"{one.idle.max():g}",
        f"{pipeline.zb_h1_bubble_time(p, 1.0, 1.0, 1.0):g}", f"{zb.idle.max():g}",
        f"{one.bubble_fraction:.1%}", f"{zb.bubble_fraction:.1%}",
        int(one.peak_inflight.max()), int(zb.peak_inflight.max()),
    ])
print(markdown_table(
    ["p", "m", "1F1B 空闲（公式）", "1F1B 空闲（模拟）", "ZB-H1 空闲（公式）", "ZB-H1 空闲（模拟）",
     "1F1B 气泡占比", "ZB-H1 气泡占比", "1F1B 峰值在途", "ZB-H1 峰值在途"],
    rows, align="rrrrrrrrrr",
))
