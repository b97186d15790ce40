# Step time beside the published Megatron-LM runs: Narayanan et al. 2021 Table 1 (TFLOP/s per GPU) and
# Korthikanti et al. 2022 Table 5 (iteration time), each run with the plan its paper describes.
from parallelsel.course.measured import compare_all
from parallelsel.course.references import KORTHIKANTI_TABLE5, NARAYANAN_THROUGHPUT
from parallelsel.render.tables import markdown_table
from parallelsel.render.units import fmt_pct


def plan(r):
    chunks = f" · 交错 v={r.chunks}" if r.chunks > 1 else ""
    return f"TP{r.tp} · PP{r.pp} · DP{r.gpus // (r.tp * r.pp)} · mb{r.micro_batch}{chunks}"


table1 = compare_all(NARAYANAN_THROUGHPUT)
print("**Narayanan et al. 2021 表 1**（每卡 TFLOP/s，按式 3 计 FLOPs；全部完全重算）\n")
print(markdown_table(["模型", "GPU 数", "方案", "论文", "本库", "误差"],
                     [[c.run.label, c.run.gpus, plan(c.run), f"{c.published:g}", f"{c.predicted:.1f}", f"{c.error:+.1%}"]
                      for c in table1], align="lrlrrr"))
table5 = compare_all(KORTHIKANTI_TABLE5)
print("\n**Korthikanti et al. 2022 表 5**（每步秒数；序列并行 + 选择性重算）\n")
print(markdown_table(["模型", "GPU 数", "方案", "论文", "本库", "误差", "论文 MFU", "本库 MFU"],
                     [[c.run.label, c.run.gpus, plan(c.run), f"{c.published:g} s", f"{c.predicted:.2f} s", f"{c.error:+.1%}",
                       fmt_pct(c.run.mfu), fmt_pct(c.estimate.step.mfu)] for c in table5], align="lrlrrrrr"))
# The same FLOPs over the paper's own iteration time: the library's model-FLOPs count against the paper's.
at_published = [c.estimate.step.mfu * c.predicted / c.published for c in table5]
gap = max(abs(m / c.run.mfu - 1) for m, c in zip(at_published, table5))
print(f"\n按论文的每步秒数换算，本库数出的模型 FLOPs 给出的 MFU 与论文印的 MFU 相对差不到 {fmt_pct(gap)}"
      f"（{'、'.join(fmt_pct(m) for m in at_published)}）：两边数的是同一个计算量，MFU 的差别只来自步时。")
rows = table1 + table5
mae = sum(abs(c.error) for c in rows) / len(rows)
worst = max(rows, key=lambda c: abs(c.error))
print(f"\n{len(rows)} 行的平均绝对误差 {fmt_pct(mae)}，最大 {worst.error:+.1%}（{worst.run.label}）。")
