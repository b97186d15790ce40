# Exercise 5, calibration: one measured step of the top plan -> ps.calibrate -> every other plan re-estimated.
# The "measurement" is the Llama 2 paper's own: 2.0T tokens in 1,720,320 A100-80GB GPU-hours for 70B.
# --8<-- [start:givens]
import parallelsel as ps

from parallelsel.course.references import LLAMA2_70B_PRETRAINING as run
from parallelsel.render.tables import fmt_pct, fmt_time, markdown_table
from parallelsel.core.search import search
from parallelsel.render.reasons import plan_label
from parallelsel.render.lesson_text import named_paper_cases

name, work, cluster = named_paper_cases()[1]
result = search(work, cluster, top=1000)   # every plan that fits, fastest first
best = result.best.estimate
per_gpu = run.tokens / (run.gpu_hours * 3600)                      # tokens/s per GPU, averaged over the whole run
measured_mfu = per_gpu * work.model.model_flops_per_token(work.seq_len) / cluster.device.peak_flops
print(f"你的测量（输入）：{work.model.name} 在 {cluster.device.name} 上平均每卡 {per_gpu:,.0f} token/s，即 MFU "
      f"{fmt_pct(measured_mfu)}。这里借用 {run.source}：{run.tokens / 1e12:g}T token、{run.gpu_hours:,} GPU 时。"
      f"\n\n把它当作基线方案 {plan_label(best.plan)} 的实测；库的估计是 MFU {fmt_pct(best.step.mfu)}、"
      f"步时 {fmt_time(best.step.total)}。")
# --8<-- [end:givens]
cal = ps.calibrate(best, measured_mfu=measured_mfu)
print(f"\n拟合结果：矩阵乘上限 {fmt_pct(best.cluster.device.gemm_efficiency)} → {fmt_pct(cal.device.gemm_efficiency)}"
      f"（×{cal.scale:.3f}）；其余常数（带宽、重叠、气泡）不变。\n")

# Every other plan: the fastest of each TP x PP split (the search's own order), before and after.
firsts = {}
for r in result:
    firsts.setdefault((r.plan.tp, r.plan.pp), r)
before = list(firsts.values())
after = [cal.apply(work, r.plan) for r in before]
again = [r.plan for r in search(work, cal.cluster, top=1000)]      # the search re-run with the fitted constant
kept = [p for p in again if (p.tp, p.pp) in firsts and firsts[(p.tp, p.pp)].plan == p]
rows = [[i + 1, kept.index(r.plan) + 1 if r.plan in kept else "—", plan_label(r.plan), fmt_time(r.estimate.step.total), fmt_pct(r.estimate.step.mfu, 0),
         fmt_time(a.step.total), fmt_pct(a.step.mfu, 0), f"×{a.step.total / r.estimate.step.total:.2f}"]
        for i, (r, a) in enumerate(zip(before, after))]
print(markdown_table(["校准前名次", "校准后名次", "方案（每种 TP × PP 切法最快的一个）", "步时（前）", "MFU（前）",
                      "步时（后）", "MFU（后）", "步时变化"], rows, align="rrlrrrrr"))
ratios = [a.step.total / r.estimate.step.total for r, a in zip(before, after)]
lo, hi = min(range(len(ratios)), key=ratios.__getitem__), max(range(len(ratios)), key=ratios.__getitem__)
exposed = [r.estimate.step.communication / r.estimate.step.total for r in before]
moved = sum(kept.index(r.plan) != i for i, r in enumerate(before) if r.plan in kept)
print(f"\n**要点**：校准后重跑搜索，第一名{'仍是' if again[0] == best.plan else '换成了'} {plan_label(again[0])}，"
      f"表中 {len(before)} 个方案{'的名次都没变' if not moved else f'有 {moved} 个换了名次'}；"
      f"每个方案都变慢了 ×{ratios[lo]:.2f} 到 ×{ratios[hi]:.2f}：暴露的通信多的变慢得少"
      f"（{plan_label(before[lo].plan)}，通信占 {fmt_pct(exposed[lo], 0)}），几乎全是计算的变慢得多"
      f"（{plan_label(before[hi].plan)}，通信占 {fmt_pct(exposed[hi], 0)}）。")
