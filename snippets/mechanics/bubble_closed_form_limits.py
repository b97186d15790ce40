# Where (p-1)/(m+p-1) stops holding: uneven stages, one slow GPU, p2p latency (1F1B, p=4, m=16; F=1, B=2).
from parallelsel import pipeline
from parallelsel.render.tables import fmt_pct, markdown_table

p, m = 4, 16
sched = pipeline.schedule("1f1b", p, m)
base = pipeline.simulate(sched, forward=1.0, backward=2.0)
cases = {
    "各阶段均匀": dict(forward=1.0, backward=2.0),
    "层数不整除：10 层分成 3/3/2/2": dict(forward=[1.2, 1.2, 0.8, 0.8], backward=[2.4, 2.4, 1.6, 1.6]),
    "末段多了输出层与 loss（+30%）": dict(forward=[1, 1, 1, 1.3], backward=[2, 2, 2, 2.6]),
    "一张卡降频 1.2 倍": dict(forward=[1, 1.2, 1, 1], backward=[2, 2.4, 2, 2]),
    "每次跨阶段发送延迟 0.2": dict(forward=1.0, backward=2.0, p2p=0.2),
}
rows = []
for name, kw in cases.items():
    tl = pipeline.simulate(sched, **kw)
    rows.append([name, fmt_pct(pipeline.bubble_fraction(p, m)), fmt_pct(tl.bubble_fraction),
                 f"{tl.makespan:g}", f"{tl.makespan / base.makespan:.2f}×"])
print(markdown_table(["情形", "公式 (p-1)/(m+p-1)", "模拟气泡占比", "步时", "相对均匀"], rows, align="lrrrr"))
