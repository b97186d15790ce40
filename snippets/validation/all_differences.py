# Every comparison on this page in one chart: the relative difference between the library and the paper.
from parallelsel.course.comparisons import comparisons
from parallelsel.render.comparisons import validation_bars
from parallelsel.render.lesson_text import reference_label
from parallelsel.render.style import figure_html  # markdown-exec: hide

comps = comparisons()
names = {"zero": "ZeRO 图1", "activations": "Korthikanti 表2", "recompute": "Korthikanti §5",
         "narayanan": "Narayanan 表1", "days": "Narayanan §5.1", "models": "模型论文"}
labels = [f"{names[c.group]}：{reference_label(c.label)}" for c in comps]
svg = validation_bars(labels, [c.difference for c in comps], [c.agrees for c in comps],
                      title="本库与论文数字的相对差", salt="validation-all")
n_ok = sum(c.agrees for c in comps)
print(f"共 {len(comps)} 项对照，按论文的舍入一致的有 {n_ok} 项。\n")
worst = max(comps, key=lambda c: abs(c.difference))  # markdown-exec: hide
print(figure_html(svg, f"{len(comps)} 项对照里 {n_ok} 项按论文的舍入一致（蓝色）；相差最大的一项："  # markdown-exec: hide
                       f"{labels[comps.index(worst)]}（{worst.difference:+.1%}）"))  # markdown-exec: hide
