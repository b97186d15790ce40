# Exercise 3, answer: which verdicts change on the fast-inside, slow-between cluster, and why.
from parallelsel.course.lesson import topology_variant
from parallelsel.core.matrix import selection_matrix
from parallelsel.render.reasons import join
from parallelsel.render.tables import markdown_table
from parallelsel.render.lesson_text import named_paper_cases, verdict_word, verdict_word

rows, changes = [], []
for name, w, c in named_paper_cases():
    before = selection_matrix(w, c)
    after = selection_matrix(w, topology_variant(c))
    for b, a in zip(before, after):
        mark = "" if b.verdict == a.verdict else " ←"
        rows.append([name, b.strategy, verdict_word(b.verdict), verdict_word(a.verdict) + mark])
        if b.verdict != a.verdict:
            changes.append(f"- **{name} · {a.strategy}**：{verdict_word(b.verdict)} → {verdict_word(a.verdict)}。" + join(a.reasons[1:]))
print(markdown_table(["案例", "策略", "原拓扑", "节点间变慢后"], rows, align="llcc"))
print("\n变化的格子（“←”）及新拓扑下的理由：\n")
print("\n".join(changes) if changes else "- 没有格子变化。")
