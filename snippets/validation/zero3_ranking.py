# Narayanan et al. 2021 §5.2, Table 2: DeepSpeed ZeRO-3 (no model parallelism) against PTD-P, GPT-3 175B and
# the 530B model, as the GPUs double at a fixed global batch. ZeRO-3 is timed by DeepSpeed 2021's own
# coordinator rules (parallelsel.course.zero3_timeline, its default settings); nothing here is fitted to these rows.
from parallelsel.course.measured import compare_all
from parallelsel.course.references import NARAYANAN_ZERO3
from parallelsel.render.tables import markdown_table

rows = compare_all(NARAYANAN_ZERO3)
out = []
for name in ("175B", "530B"):
    zero = [c for c in rows if c.run.zero == 3 and name in c.run.label]
    ptdp = [c for c in rows if c.run.zero == 0 and name in c.run.label]
    for z, p in zip(zero, ptdp):   # same order in Table 2: fewest GPUs first
        out.append([name, f"{z.run.gpus} / {p.run.gpus}", f"{z.published:g}", f"{z.predicted:.0f}（{z.error:+.0%}）",
                    f"{p.published:g}", f"{p.predicted:.0f}（{p.error:+.0%}）",
                    "PTD-P 更快" if p.predicted > z.predicted else "ZeRO-3 更快"])
print(markdown_table(["模型", "GPU 数（ZeRO-3 / PTD-P）", "ZeRO-3 论文", "ZeRO-3 本库", "PTD-P 论文", "PTD-P 本库",
                      "本库的排序（论文：每处都是 PTD-P 更快）"], out, align="lrrrrrl"))
# What the page says: the model times every ZeRO-3 row faster than published, and puts ZeRO-3 ahead where the paper does not.
assert all(c.predicted > c.published for c in rows if c.run.zero == 3)
assert any(r[-1] == "ZeRO-3 更快" for r in out) and any(r[-1] == "PTD-P 更快" for r in out)
