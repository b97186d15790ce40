# Held-out measured runs: NVIDIA's DGX Cloud benchmark tables (NeMo 24.09 / 24.11 on H100, BF16 and FP8), added after
# the model's constants were set and priced as they are; dense models and one MoE (Grok-1).
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
# The page's reading: every dense row within issue 28's 20%, the mean just past its 8%, the largest dense errors BF16
# rows of large models whose FP8 twins are close; the MoE rows all predicted fast, the FP8 ones more than the BF16 ones.
mae = sum(abs(c.error) for c in rows) / len(rows)
over = [c for c in rows if abs(c.error) > 0.20]
assert all(c in moe for c in over) and 0.08 < mae < 0.09
worst = sorted(dense, key=lambda c: -abs(c.error))[:4]
assert all(c.estimate.workload.recipe.gemm != "fp8" and c.error > 0.10 for c in worst)
print("\n超出 20% 的行：" + ("，".join(f"{c.run.label.removeprefix('DGXC ')} {c.error:+.1%}" for c in over) or "无") + "。")
assert all(c.error > 0 for c in moe)
assert min(c.error for c in moe if c.estimate.workload.recipe.gemm == "fp8") > max(
    c.error for c in moe if c.estimate.workload.recipe.gemm != "fp8")
print("\n这些表没有写出、这里按假设取的：" + "；".join(DGXC_ASSUMED) + "。")
