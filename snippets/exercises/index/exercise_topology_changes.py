# Exercise 3, answer: which verdicts change on the fast-inside, slow-between cluster, and why.
# Two things change at once for a one-node case (a node is added, and the link between nodes is slow), so the answer
# separates them: a control cluster with the new node count but the original link between nodes.
from dataclasses import replace

from parallelsel.course.lesson import topology_variant
from parallelsel.core.matrix import selection_matrix
from parallelsel.render.reasons import join
from parallelsel.render.tables import markdown_table
from parallelsel.render.lesson_text import named_paper_cases, verdict_word

rows, by_nodes, by_link = [], [], []
for name, w, c in named_paper_cases():
    slow = topology_variant(c)
    control = replace(slow, inter=c.inter)  # same nodes and GPUs as the variant, the original link between nodes
    before, more, after = selection_matrix(w, c), selection_matrix(w, control), selection_matrix(w, slow)
    for b, m, a in zip(before, more, after):
        rows.append([name, b.strategy, verdict_word(b.verdict),
                     verdict_word(m.verdict) + (" ←" if m.verdict != b.verdict else ""),
                     verdict_word(a.verdict) + (" ←" if a.verdict != m.verdict else "")])
        if m.verdict != b.verdict:
            by_nodes.append(f"- **{name} · {m.strategy}**：{verdict_word(b.verdict)} → {verdict_word(m.verdict)}"
                            f"（{c.nodes} → {control.nodes} 个节点）。" + join(m.reasons[1:]))
        if a.verdict != m.verdict:  # caused by the slow link: the new verdict's reasons name it
            assert any(slow.inter.name in str(r.values) for r in a.reasons), (name, a.strategy)
            by_link.append(f"- **{name} · {a.strategy}**：{verdict_word(m.verdict)} → {verdict_word(a.verdict)}。"
                           + join(a.reasons[1:]))
    # What the answer says about the slow link: PP only sends activations between neighbours and keeps its verdict;
    # DP and FSDP, which move whole gradients or weights across nodes, can only get worse.
    order = ("infeasible", "not_preferred", "feasible")
    for m, a in zip(more, after):
        assert a.strategy != "PP" or a.verdict == m.verdict, (name, a.strategy)
        if a.strategy in ("DP", "FSDP") and m.verdict.code in order and a.verdict.code in order:
            assert order.index(a.verdict.code) <= order.index(m.verdict.code), (name, a.strategy)
print(markdown_table(["案例", "策略", "原拓扑", "加节点，节点间链路不变", "再把节点间换成慢链路"], rows, align="llccc"))
print("\n只因为节点变多而变化的格子（第二列的“←”）：\n")
print("\n".join(by_nodes) if by_nodes else "- 没有格子变化。")
print("\n因为节点间变慢而变化的格子（第三列的“←”），及慢链路下的理由：\n")
print("\n".join(by_link) if by_link else "- 没有格子变化。")
