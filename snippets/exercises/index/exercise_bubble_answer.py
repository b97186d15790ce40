# Exercise 4: the closed forms beside a simulated 1F1B step, and both simulated steps drawn on one time axis.
# --8<-- [start:givens]
P, M_VALUES = 8, (8, 32)      # pipeline stages, the two micro-batch counts
FORWARD, BACKWARD = 1.0, 2.0  # per stage and micro-batch; all stages equally fast
print(f"流水线段数 p = {P}；微批次数 m 取 {' 和 '.join(map(str, M_VALUES))}；"
      f"每段每个微批次的前向 : 反向耗时 = {FORWARD:g} : {BACKWARD:g}，各段一样快。")
# --8<-- [end:givens]
from parallelsel import pipeline
from parallelsel.render.pipeline_charts import gantt, trace_links
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.tables import markdown_table
import markdown  # markdown-exec: hide

rows, charts, links = [], [], []
for m in M_VALUES:
    tl = pipeline.simulate(pipeline.schedule("1f1b", P, m), forward=FORWARD, backward=BACKWARD)
    rows.append([m, f"{pipeline.bubble_fraction(P, m):.1%}", f"{tl.bubble_fraction:.1%}",
                 f"{pipeline.bubble_overhead(P, m):.1%}", f"{tl.bubble_overhead:.1%}", f"{tl.makespan:g}"])
    charts.append(figure_html(gantt(tl, salt=f"ex-bubble-m{m}"),  # markdown-exec: hide
                              f"1F1B，p={P}，m={m} 的一步：灰色为空闲，气泡占比 {tl.bubble_fraction:.1%}"))  # markdown-exec: hide
    links.append(trace_links([tl], prefix="exercise-4-"))  # the same timeline as Chrome-trace JSON, under its chart
table = markdown_table(["m", "气泡占比 (p−1)/(m+p−1)", "模拟：空闲/总时间", "气泡开销 (p−1)/m", "模拟：空闲/忙碌",
                        f"步时（前向耗时为 {FORWARD:g}）"], rows, align="rrrrrr")
print(markdown.markdown(table, extensions=["tables"]))  # markdown-exec: hide
print("\n".join(c + "\n" + t for c, t in zip(charts, links)))  # markdown-exec: hide
