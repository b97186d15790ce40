# Exercise 3, answer: which verdicts change on the fast-inside, slow-between cluster, and why.
from parallelsel.course.lesson import paper_cases, topology_variant
from parallelsel.core.matrix import selection_matrix
from parallelsel.render.reasons import join
from parallelsel.render.tables import markdown_table

rows, changes = [], []
for name, w, c in paper_cases():
    before = selection_matrix(w, c)
    after = selection_matrix(w, topology_variant(c))
    for b, a in zip(before, after):
        mark = "" if b.verdict == a.verdict else " ←"
        rows.append([name, b.strategy, b.verdict.value, a.verdict.value + mark])
        if b.verdict != a.verdict:
            changes.append(f"- **{name} · {a.strategy}**：{b.verdict.value} → {a.verdict.value}。" + join(a.reasons[1:]))
print(markdown_table(["案例", "策略", "原拓扑", "节点间变慢后"], rows, align="llcc"))
print("\n变化的格子（“←”）及新拓扑下的理由：\n")
print("\n".join(changes) if changes else "- 没有格子变化。")
