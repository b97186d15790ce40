# Exercise 5, the givens: paper case 2 with the plan search's top plan, and the values the estimate assumes.
from parallelsel.core.memory import ALLOCATOR_OVERHEAD

from parallelsel.render.tables import fmt_pct, fmt_rate, fmt_time, markdown_table
from parallelsel.core.search import search
from parallelsel.render.reasons import plan_label
from parallelsel.render.lesson_text import named_paper_cases

name, work, cluster = named_paper_cases()[1]
best = search(work, cluster, top=1).best
device, inter = cluster.device, cluster.inter
print(f"基线：{name}（{work.model.name}，{cluster.gpus} × {device.name}），方案 {plan_label(best.plan)}，"
      f"估计步时 {fmt_time(best.estimate.step.total)}\n")
print(markdown_table(["未知量", "估计里的假设", "库里的参数"], [
    ["算子效率（kernel 在这个形状上达到峰值的比例）",
     f"kernel 模型：每个矩阵乘按它的形状计，形状理想时封顶 {fmt_pct(device.gemm_efficiency, 0)}",
     "`Device(gemm_efficiency=)`；`ps.calibrate`"],
    ["节点间实际带宽（争用、拥塞）",
     f"{fmt_rate(inter.achieved)}（nccl-tests 大消息实测，线速 {fmt_rate(inter.bandwidth)} 的 {fmt_pct(inter.efficiency, 0)}）",
     "`Link(efficiency=)`"],
    ["慢卡（straggler）", "所有卡一样快", "`pipeline.simulate(forward=[...])`"],
    ["数据输入管线的供给速度", "永远跟得上", "—（估计里没有这一项）"],
    ["分配器碎片与临时缓冲", f"其余内存的 {fmt_pct(ALLOCATOR_OVERHEAD, 0)}", "`memory.ALLOCATOR_OVERHEAD`"],
]))
