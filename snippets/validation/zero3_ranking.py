# Narayanan et al. 2021 §5.2: DeepSpeed ZeRO-3 against PTD-P for GPT-3 175B (batch 1536) -- not fitted, only checked.
from parallelsel.measured import compare_all
from parallelsel.references import NARAYANAN_ZERO3
from parallelsel.render.tables import markdown_table

rows = compare_all(NARAYANAN_ZERO3)
by = {(c.run.label.split()[0], c.run.gpus): c for c in rows}
out = []
for g in sorted({c.run.gpus for c in rows}):
    z, p = by["ZeRO-3", g], by["PTD-P", g]
    out.append([g, f"{z.published:g}", f"{z.predicted:.0f}（{z.error:+.0%}）", f"{p.published:g}", f"{p.predicted:.0f}（{p.error:+.0%}）",
                "PTD-P 更快" if p.predicted > z.predicted else "ZeRO-3 更快"])
print(markdown_table(["GPU 数", "ZeRO-3 论文", "ZeRO-3 本库", "PTD-P 论文", "PTD-P 本库", "本库的排序（论文：三处都是 PTD-P 更快）"],
                     out, align="rrrrrl"))
