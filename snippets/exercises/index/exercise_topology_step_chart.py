# Exercise 3, answer: case 2's FSDP and PP (the two cells that swap), step time before and after the slow link.
from parallelsel.course.lesson import topology_variant
from parallelsel.core.matrix import selection_matrix
from parallelsel.render.step_charts import step_bars, step_parts
from parallelsel.render.tables import fmt_time
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.lesson_text import named_paper_cases

name, w, c = named_paper_cases()[1]
labels, steps = [], []
for tag, cluster in (("原拓扑", c), ("节点间变慢", topology_variant(c))):
    for row in selection_matrix(w, cluster):
        if row.strategy in ("FSDP", "PP"):
            labels.append(f"{row.strategy}（{tag}）")
            steps.append(row.best.step)
svg = step_bars(labels, step_parts(steps), title=f"{name}：节点间变慢前后 FSDP 与 PP 的最佳步时", salt="ex-topology-steps")
total = dict(zip(labels, (s.total for s in steps)))  # markdown-exec: hide
print(figure_html(svg, "节点间链路变慢后，FSDP 每个微批次跨节点的参数 all-gather 与梯度 reduce-scatter 暴露出来，"  # markdown-exec: hide
                  f"步时从 {fmt_time(total['FSDP（原拓扑）'])} 变为 {fmt_time(total['FSDP（节点间变慢）'])}；"  # markdown-exec: hide
                  f"PP 只传相邻段的激活，步时从 {fmt_time(total['PP（原拓扑）'])} 变为 {fmt_time(total['PP（节点间变慢）'])}"))  # markdown-exec: hide  # markdown-exec: hide
