# Every schedule kind at one setting, p=4 and m=8 (two stages per rank where the kind takes more than one):
# forward 1, backward 2 (a split backward: I = 1, W = 1), without and with a p2p latency on every cross-rank send.
from parallelsel import pipeline
from parallelsel.render.pipeline_charts import comparison_schedules, schedule_name
from parallelsel.render.tables import fmt_pct, markdown_table

p, m, v, latency = 4, 8, 2, 0.2
rows = []
for sched in comparison_schedules(p, m, v, kinds=pipeline.KINDS):
    tl = pipeline.simulate(sched, forward=1.0, backward=2.0)
    slow = pipeline.simulate(sched, forward=1.0, backward=2.0, p2p=latency)
    layout = "V 形" if sched.layout == "v" else "循环"
    rows.append([schedule_name(sched), f"{sched.chunks}（{layout}）", f"{tl.makespan:g}", fmt_pct(tl.bubble_fraction),
                 fmt_pct(slow.bubble_fraction), " / ".join(f"{x:g}" for x in tl.peak_activations)])
print(markdown_table(
    ["调度", "每卡段数（布局）", "步时（单位：前向耗时）", "气泡占比", f"气泡占比（p2p 延迟 {latency:g}）", f"每卡峰值在途激活（卡 0→{p - 1}，微批次）"],
    rows, align="llrrrl",
))
