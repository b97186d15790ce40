# Held-out measured runs: NVIDIA's DGX Cloud benchmark tables (NeMo 24.09 / 24.11 on H100, BF16 and FP8), added after
# the model's constants were set and priced as they are; dense models and one MoE (Grok-1).
from dataclasses import replace

from parallelsel.core.hardware import CUDNN_OVER_FA2
from parallelsel.course.measured import compare_stack
from parallelsel.course.stack_runs import DGXC_ASSUMED, DGXC_H100
from parallelsel.render.reasons import plan_label
from parallelsel.render.tables import markdown_table
from parallelsel.render.units import fmt_pct

rows = [compare_stack(r) for r in DGXC_H100]
assert all(c.estimate.fits for c in rows)          # every published plan trained, and the model lets each fit
print(markdown_table(
    ["运行", "方案", "公布 tokens/s/卡", "本库", "误差"],
    [[c.run.label.removeprefix("DGXC "), plan_label(c.estimate.plan), f"{c.published:g}", f"{c.predicted:.1f}",
      f"{c.error:+.1%}"] for c in rows], align="llrrr"))

moe = [c for c in rows if c.estimate.workload.model.is_moe]
dense = [c for c in rows if c not in moe]
groups = {"稠密模型": dense, "MoE（Grok-1）": moe, "全部": rows}
print("\n" + markdown_table(["分组", "行数", "平均绝对误差", "最大误差"],
                            [[name, len(cs), fmt_pct(sum(abs(c.error) for c in cs) / len(cs), 1),
                              f"{max((c.error for c in cs), key=abs):+.1%}"] for name, cs in groups.items()],
                            align="lrrr"))
# The page's reading: every row within issue 28's 20% and the mean under its 8%, once each row runs the attention
# kernel its launch script picks (three set NVTE_FUSED_ATTN=0); the largest errors are GPT-3 175B's BF16 rows, whose
# FP8 twins are close; the MoE rows all predicted fast, the FP8 ones more than the BF16 ones.
mae = sum(abs(c.error) for c in rows) / len(rows)
assert all(abs(c.error) <= 0.20 for c in rows) and mae <= 0.08
worst = sorted(rows, key=lambda c: -abs(c.error))[:2]
assert all(c.run.label.startswith("DGXC GPT-3 175B") and c.estimate.workload.recipe.gemm != "fp8" for c in worst)
fa2 = sorted({c.run.label.removeprefix("DGXC ").split(" (")[0] for c in rows if c.estimate.workload.attention == "fa2"})
print("\n启动脚本设了 NVTE_FUSED_ATTN=0、按 FlashAttention-2 计注意力的模型：" + "、".join(fa2)
      + f"（H100 上 cuDNN 内核比它快 {CUDNN_OVER_FA2:.2f} 倍，`CUDNN_OVER_FA2`）。")
# The same rows with every attention priced as cuDNN's kernel (what the model assumed before it read the scripts).
cudnn = [compare_stack(replace(c.run, attention="flash")) for c in rows]
cudnn_mae = sum(abs(c.error) for c in cudnn) / len(cudnn)
print(f"若都按 cuDNN 内核计：平均绝对误差 {fmt_pct(cudnn_mae, 1)}（按脚本计为 {fmt_pct(mae, 1)}），"
      f"最大误差 {max((c.error for c in cudnn), key=abs):+.1%}。")
assert cudnn_mae > 0.08 > mae
assert all(c.error > 0 for c in moe)
assert min(c.error for c in moe if c.estimate.workload.recipe.gemm == "fp8") > max(
    c.error for c in moe if c.estimate.workload.recipe.gemm != "fp8")
print("\n这些表没有写出、这里按假设取的：" + "；".join(DGXC_ASSUMED) + "。")
