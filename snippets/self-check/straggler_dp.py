# Self-check 8: one GPU 20% slower. Synchronous DP waits for it at every all-reduce; a pipeline waits at every hand-off.
from parallelsel import pipeline
from parallelsel.render.tables import markdown_table

SLOW = 1.2
SLOW_STAGE = 1  # index of the slow pipeline stage
rows = [["纯 DP（每步末尾同步）", "一张卡", f"{SLOW:.2f}"]]     # the step ends when the slowest rank ends
for p, m in ((4, 8), (4, 32)):
    sched = pipeline.schedule("1f1b", p, m)
    base = pipeline.simulate(sched).makespan
    f = [1.0] * p
    f[SLOW_STAGE] = SLOW
    slow = pipeline.simulate(sched, forward=f, backward=[2 * x for x in f]).makespan
    rows.append([f"1F1B，p={p}，m={m}", f"第 {SLOW_STAGE + 1} 段", f"{slow / base:.2f}"])
print(markdown_table(["并行方式", "变慢的位置", "步时 / 原步时"], rows, align="llr"))
print(f"\n慢卡的速度为其他卡的 1/{SLOW:g}。")
