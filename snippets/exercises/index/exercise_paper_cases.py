# Exercise 1, the givens: the three paper cases (model, recipe, device, cluster, batch) from parallelsel.core.matrix.

from parallelsel.render.tables import fmt_bytes, fmt_count, markdown_table
from parallelsel.render.lesson_text import named_paper_cases

rows = []
for name, w, c in named_paper_cases():
    m = w.model
    rows.append([name, m.name, f"{m.layers} 层 × 隐藏 {m.hidden}", fmt_count(m.params),
                 f"{w.recipe.name}（{w.recipe.per_param:g} B/参数）", f"{c.device.name}，{fmt_bytes(c.device.memory)}",
                 f"{c.nodes} 节点 × {c.gpus_per_node} 卡", f"{w.global_batch} × {w.seq_len}"])
print(markdown_table(["案例", "模型", "形状", "参数量", "训练配方", "单卡（可用显存）", "集群", "全局批量 × 序列长"],
                     rows, align="lllrllll"))
