# TP degree vs the GEMMs each GPU runs: Llama-2 7B on paper case 2's cluster (4 nodes x 8 A100), TP 1..32 and
# data parallelism on the rest. Per-GPU GEMM shapes (M x N x K), the share of peak the kernel model gives
# them, and what it does to the step: compute, exposed communication, per-GPU throughput.
from parallelsel import MODELS, Plan, Workload
from parallelsel.core.estimate import estimate
from parallelsel.core.kernels import layer_gemms

from parallelsel.render.line_charts import share_vs_degree
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.tables import fmt_pct, fmt_time, markdown_table
import markdown  # markdown-exec: hide
from parallelsel.render.reasons import plan_label
from parallelsel.render.lesson_text import named_paper_cases

_, _, cluster = named_paper_cases()[1]
device = cluster.device
work = Workload(MODELS["llama2-7b"], global_batch=256)
DEGREES = (1, 2, 4, 8, 16, 32)
NAMES = ("qkv", "proj", "fc1", "fc2")

shapes, steps = [], []
for tp in DEGREES:
    # The rest of the GPUs do data parallelism; ZeRO-1 if it fits, else ZeRO-3 (FSDP).
    for zero in (1, 3):
        e = estimate(work, Plan(dp=cluster.gpus // tp, tp=tp, zero=zero, sp=True, recompute="selective"), cluster)
        if e.fits:
            break
    assert e.fits, f"{plan_label(e.plan)} does not fit: {e.reasons}"  # never tabulate an infeasible plan
    gemms = layer_gemms(work.model, e.plan.micro_batch * work.seq_len, tp)  # one micro-batch, after the TP split
    every = [x for g in gemms for x in (g, *g.backward)]                    # forward and both backward GEMMs
    layer = sum(g.flops for g in every) / (sum(g.time(device) for g in every) * device.peak_flops)
    shapes.append((gemms, layer))
    steps.append(e)

intro = (f"{work.model.name}，微批次 {steps[0].plan.micro_batch} × {work.seq_len} token，{cluster.gpus} × {device.name}"
         f"（每节点 {cluster.gpus_per_node} 卡）。矩阵乘的形状写作 M×N×K（输出 M×N，内维 K），括号里是 kernel 模型给出的"
         f"达到峰值的比例；形状理想时的上限是 {fmt_pct(device.gemm_efficiency, 0)}。")
gemm_table = markdown_table(["TP 度", *NAMES, "一层矩阵乘合计（前向 + 反向）"],
                            [[tp] + [f"{g.m}×{g.n}×{g.k}（{fmt_pct(g.efficiency(device), 0)}）" for g in gemms]
                             + [fmt_pct(layer, 0)] for tp, (gemms, layer) in zip(DEGREES, shapes)], align="r" * (len(NAMES) + 2))
step_table = markdown_table(["TP 度", "方案", "计算", "暴露的通信", "步时", "每卡吞吐（token/s）", "MFU"],
                            [[tp, plan_label(e.plan), fmt_time(e.step.compute), fmt_time(e.step.communication),
                              fmt_time(e.step.total), f"{e.step.tokens_per_s / cluster.gpus:,.0f}", fmt_pct(e.step.mfu, 0)]
                             for tp, e in zip(DEGREES, steps)], align="rlrrrrr")

inside = max(i for i, t in enumerate(DEGREES) if t <= cluster.gpus_per_node)   # the widest TP group inside one node
eff = {n: [next(g for g in gemms if g.name == n).efficiency(device) for gemms, _ in shapes] for n in NAMES}
worst = min(NAMES, key=lambda n: eff[n][inside])
growth = steps[inside].step.compute / steps[0].step.compute - 1
per_gpu = [e.step.tokens_per_s / cluster.gpus for e in steps]
takeaway_chart = (f"**要点**：TP 从 {DEGREES[0]} 到 {DEGREES[inside]}（仍在一个节点内），一层矩阵乘的效率从 "
                  f"{fmt_pct(shapes[0][1], 0)} 降到 {fmt_pct(shapes[inside][1], 0)}，降得最多的是 {worst}"
                  f"（{fmt_pct(eff[worst][0], 0)} → {fmt_pct(eff[worst][inside], 0)}）；TP 度 {DEGREES[-1]} 时只剩 "
                  f"{fmt_pct(shapes[-1][1], 0)}。")
takeaway_table = (f"**要点**：总计算量不变，TP{DEGREES[inside]} 的计算时间却比 TP{DEGREES[0]} 多 {fmt_pct(growth, 0)}，"
                  f"这是小矩阵的损失；每卡吞吐从 {per_gpu[0]:,.0f} 降到 {per_gpu[inside]:,.0f} token/s，"
                  f"其余的差距来自 TP 的 all-reduce，出了节点（TP{DEGREES[inside + 1]}）后降到 {per_gpu[inside + 1]:,.0f}。")
svg = share_vs_degree(DEGREES, [(n, eff[n]) for n in NAMES] + [("一层矩阵乘合计（前向 + 反向）", [x for _, x in shapes])],
                      title=f"{work.model.name}：每卡矩阵乘随 TP 度变窄", xlabel="TP 度 t", salt="tp-small-matrices",
                      ceiling=("形状理想时的上限", device.gemm_efficiency))
print(markdown.markdown(intro + "\n\n" + gemm_table, extensions=["tables"]))  # markdown-exec: hide
print(figure_html(svg, f"每卡四个矩阵乘达到峰值算力的比例随 TP 度变化（{device.name}，kernel 模型）"))  # markdown-exec: hide
print(markdown.markdown(takeaway_chart + "\n\n" + step_table + "\n\n" + takeaway_table, extensions=["tables"]))  # markdown-exec: hide
