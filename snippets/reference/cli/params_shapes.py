# The shapes `--params N` builds (parallelsel.render.cli.gpt_like): heads rounded so that the TP degrees of one node divide them.
from parallelsel.render.cli import gpt_like
from parallelsel.render.tables import fmt_count, markdown_table

rows = []
for n in (1.3e9, 7e9, 13e9, 70e9, 175e9, 1e12):  # markdown-exec: hide
    m = gpt_like(n)
    tps = [t for t in (1, 2, 4, 8) if m.heads % t == 0]
    rows.append([f"{n:.3g}", fmt_count(m.params), m.layers, m.hidden, m.heads, "、".join(map(str, tps))])
print(markdown_table(["--params", "实际参数", "层数", "hidden", "头数", "可整除头数的 TP（单节点内）"], rows, align="rrrrrl"))
