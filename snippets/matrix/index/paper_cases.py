# The lesson's three paper cases (最小练习 1-2): each strategy alone, judged with reasons.

from parallelsel.core.matrix import BUBBLE_LIMIT, SLOWER, selection_matrix
from parallelsel.render.matrix_tables import matrix_table, paper_cases_table, reasons_list
from parallelsel.render.tables import fmt_bytes, fmt_count, folded
from parallelsel.render.lesson_text import named_paper_cases

results = []
for name, workload, cluster in named_paper_cases():
    results.append((name, selection_matrix(workload, cluster), workload, cluster))

print(paper_cases_table([(name, rows) for name, rows, _, _ in results]))
for name, rows, w, c in results:
    m = w.model
    print(f"**{name}**：{m.name}（{fmt_count(m.params)} 参数，训练状态 {fmt_bytes(w.recipe.per_param * m.params)}），"
          f"{c.nodes} 节点 × {c.gpus_per_node} 卡 {c.device.name}（每卡 {fmt_bytes(c.device.memory)}），"
          f"全局批量 {w.global_batch}\n")
    print(matrix_table(rows, reasons="short"))
    print(folded(f"{name}：每种策略的全部理由", reasons_list(rows)))
print(f"判 `不优先` 的两个门槛：每步 GPU·秒（步时 × 所用卡数）超过最省可行策略的 {SLOWER:g} 倍（`SLOWER`）；"
      f"纯 PP 的气泡占比超过 {BUBBLE_LIMIT:.0%}（`BUBBLE_LIMIT`）。")
