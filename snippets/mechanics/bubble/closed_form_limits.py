# Where (p-1)/(m+p-1) stops holding: uneven stages, one slow GPU, p2p latency (1F1B, p=4, m=16; F=1, B=2).
from parallelsel import pipeline
from parallelsel.render.tables import fmt_pct, markdown_table

p, m = 4, 16
sched = pipeline.schedule("1f1b", p, m)
base = pipeline.simulate(sched, forward=1.0, backward=2.0)
layers = [3, 3, 2, 2]                        # layers per stage when they do not divide evenly
extra, slow, latency = 0.3, 1.2, 0.2         # last-stage head share, slow-GPU factor, p2p latency per send
uneven = [p * n / sum(layers) for n in layers]                     # stage time relative to an even split
last = [1.0] * (p - 1) + [1 + extra]
slowed = [1.0, slow] + [1.0] * (p - 2)
cases = {
    "各段均匀": dict(forward=1.0, backward=2.0),
    f"层数不整除：{sum(layers)} 层分成 {'/'.join(map(str, layers))}": dict(forward=uneven, backward=[2 * x for x in uneven]),
    f"末段多了输出层与 loss（+{extra:.0%}）": dict(forward=last, backward=[2 * x for x in last]),
    f"一张卡降频 {slow:g} 倍": dict(forward=slowed, backward=[2 * x for x in slowed]),
    f"每次跨段发送延迟 {latency:g}": dict(forward=1.0, backward=2.0, p2p=latency),
}
rows = []
for name, kw in cases.items():
    tl = pipeline.simulate(sched, **kw)
    rows.append([name, fmt_pct(pipeline.bubble_fraction(p, m)), fmt_pct(tl.bubble_fraction),
                 f"{tl.makespan:g}", f"{tl.makespan / base.makespan:.2f}×"])
print(markdown_table(["情形", "公式 (p-1)/(m+p-1)", "模拟气泡占比", "步时", "相对均匀"], rows, align="lrrrr"))
