# Exercise 3, the givens: the same cases on a cluster whose nodes are fast inside and slow between.
from parallelsel.course.lesson import topology_variant
from parallelsel.render.tables import fmt_rate, markdown_table
from parallelsel.render.lesson_text import named_paper_cases


def link(x):
    return f"{x.name}，{fmt_rate(x.bandwidth)}"


rows = []
for name, w, c in named_paper_cases():
    v = topology_variant(c)
    rows.append([name, f"{c.nodes} × {c.gpus_per_node}", link(c.intra), link(c.inter),
                 f"{v.nodes} × {v.gpus_per_node}", link(v.intra), link(v.inter)])
print(markdown_table(["案例", "原：节点 × 卡", "原：节点内", "原：节点间", "新：节点 × 卡", "新：节点内", "新：节点间"], rows))
print("\n带宽为每卡单向带宽（GB/s = 10^9 字节/秒）。")
