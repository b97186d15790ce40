# Exercise 5, answer: move each unknown away from its assumed value and watch the estimate move.
from dataclasses import replace

from parallelsel import pipeline
from parallelsel.core.estimate import estimate

from parallelsel.core.memory import ALLOCATOR_OVERHEAD
from parallelsel.render.line_charts import sensitivity_lines
from parallelsel.render.style import figure_html  # markdown-exec: hide
import markdown  # markdown-exec: hide
from parallelsel.render.tables import markdown_table
from parallelsel.core.search import search
from parallelsel.render.lesson_text import named_paper_cases

name, work, cluster = named_paper_cases()[1]
plan = search(work, cluster, top=1).best.plan
base = estimate(work, plan, cluster).step.total
series, rows = [], []


def add(label, xs, ys, show):
    series.append((label, xs, ys))
    rows.append([label] + [f"×{x:g}：{show(y)}" for x, y in zip(xs, ys)])


# 1. Kernel efficiency: the device's matmul ceiling (every GEMM's rate scales with it), relative to the assumed one.
xs = [0.6, 0.8, 1.0, 1.2]
def kernels(f):
    return replace(cluster, device=replace(cluster.device, gemm_efficiency=cluster.device.gemm_efficiency * f))
add("算子效率", xs, [estimate(work, plan, kernels(x)).step.total / base for x in xs], lambda y: f"步时 ×{y:.2f}")

# 2. Achieved inter-node bandwidth, relative to the nccl-tests bus bandwidth the link preset assumes.
xs = [0.25, 0.5, 0.75, 1.0]
def slower(f):
    return replace(cluster, inter=replace(cluster.inter, efficiency=cluster.inter.efficiency * f))
add("节点间带宽", xs, [estimate(work, plan, slower(x)).step.total / base for x in xs], lambda y: f"步时 ×{y:.2f}")

# 3. One slow stage: simulate the plan's pipeline with that stage k times slower; the step stretches by the
#    simulated makespan ratio on its compute and bubble (every other rank waits at the next collective).
e = estimate(work, plan, cluster).step
sched = pipeline.schedule(plan.schedule, plan.pp, plan.microbatches(work), plan.chunks)
uniform = pipeline.simulate(sched).makespan
xs = [1.0, 1.1, 1.25, 1.5]
def straggle(k):
    f = [1.0] * plan.pp
    f[-1] = k
    r = pipeline.simulate(sched, forward=f, backward=[2 * x for x in f]).makespan / uniform
    return ((e.compute + e.bubble) * r + e.communication) / base
add("一个慢段（慢 k 倍）", xs, [straggle(k) for k in xs], lambda y: f"步时 ×{y:.2f}")

# 4. Input pipeline: the loader delivers x times the tokens/s the step needs (prefetched, so only a shortfall shows).
xs = [0.5, 0.75, 1.0, 1.5]
add("数据供给速度", xs, [max(1.0, 1.0 / x) for x in xs], lambda y: f"步时 ×{y:.2f}")

# 5. Allocator fragmentation: the allowance as a multiple of the assumed one; memory against the card.
mem = estimate(work, plan, cluster).memory
rest = mem.total - mem.allocator
cap = cluster.device.memory
xs = [1.0, 2.0, 3.0, 4.0]
rows.append(["分配器开销"] + [f"×{x:g}（{ALLOCATOR_OVERHEAD * x:.0%}）：{rest * (1 + ALLOCATOR_OVERHEAD * x) / cap:.0%} 卡内存"
                              + ("，放不下" if rest * (1 + ALLOCATOR_OVERHEAD * x) > cap else "") for x in xs])

table = markdown_table(["未知量", "取值 1", "取值 2", "取值 3", "取值 4"], rows)
svg = sensitivity_lines(series, title="一个未知量偏离假设时，估计的步时怎么变", xlabel="实测值 / 估计里的假设值",
                        salt="ex-measured")
print(markdown.markdown(table, extensions=["tables"]))  # markdown-exec: hide
print(figure_html(svg, f"{len(series)} 个必须测量的量各自偏离假设时的步时变化（相对基线）；横轴 1 处为估计所用的假设"))  # markdown-exec: hide
(_, kx, ky), (_, bx, by) = series[0], series[1]  # markdown-exec: hide
crossing = sorted({it.strategy for it in estimate(work, plan, cluster).traffic if it.link == cluster.inter.name})  # markdown-exec: hide
print(markdown.markdown(f"**要点**：算子效率降到 ×{kx[1]:g}，步时就变成 ×{ky[1]:.2f}，几乎一比一；"  # markdown-exec: hide
                        f"节点间带宽降到 ×{bx[0]:g}，这个方案的步时只变 ×{by[0]:.2f}，因为跨节点的只有 "  # markdown-exec: hide
                        f"{'、'.join(crossing)} 的通信，而且量小。"))  # markdown-exec: hide
