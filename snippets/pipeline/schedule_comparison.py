# The same p=4, m=8 under GPipe, 1F1B, interleaved 1F1B (2 chunks per stage) and ZB-H1.
from parallelsel.render.pipeline_charts import schedule_comparison
from parallelsel.render.style import figure_html  # markdown-exec: hide

svg = schedule_comparison(stages=4, microbatches=8, chunks=2, salt="schedule_comparison")
print(figure_html(svg, "四种流水线调度对比：同样 4 个阶段、8 个微批次下的气泡占比与峰值在途激活"))  # markdown-exec: hide
