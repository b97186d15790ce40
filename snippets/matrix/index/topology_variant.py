# 最小练习 3: the same cases with fast links inside a node and 25GbE Ethernet between nodes.
from parallelsel.course.lesson import topology_variant
from parallelsel.core.matrix import selection_matrix
from parallelsel.render.matrix_tables import headline
from parallelsel.render.placement import link_text
from parallelsel.render.reasons import join, text
from parallelsel.render.tables import fmt_rate, folded, markdown_table
from parallelsel.render.lesson_text import named_paper_cases, verdict_word, verdict_word

rows, details = [], []
for name, workload, cluster in named_paper_cases():
    slow = topology_variant(cluster)
    before = selection_matrix(workload, cluster)
    after = selection_matrix(workload, slow)
    for b, a in zip(before, after):
        new = [r for r in a.reasons if r not in b.reasons]
        change = "变" if a.verdict != b.verdict else "不变"
        rows.append([name, a.strategy, f"{verdict_word(b.verdict)} → {verdict_word(a.verdict)}", change, text(headline(a))])
        if new:
            details.append(f"- **{name} · {a.strategy}**：{join(new)}\n")
slow = topology_variant(named_paper_cases()[0][2])
print(f"拓扑变体：节点内 {slow.intra.name}（{fmt_rate(slow.intra.bandwidth)}），"
      f"节点间 {slow.inter.name}（{link_text(slow.inter)}），至少 {slow.nodes} 节点。\n")
print(markdown_table(["案例", "策略", "判断（原 → 变体）", "判断变化", "变体下的主要理由"], rows))
print(folded("变体下新增的全部理由", "".join(details)))
