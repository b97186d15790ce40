# The same p=4, m=8 under GPipe, 1F1B, interleaved 1F1B (2 chunks per stage) and ZB-H1.
from parallelsel.render.pipeline_charts import comparison_timelines, schedule_comparison, trace_links
from parallelsel.render.style import figure_html  # markdown-exec: hide

p, m, v = 4, 8, 2
svg = schedule_comparison(stages=p, microbatches=m, chunks=v, salt="schedule_comparison")
print(figure_html(svg, f"四种流水线调度对比：同样 {p} 段、{m} 个微批次下的气泡占比与峰值在途激活"))  # markdown-exec: hide
print(trace_links(comparison_timelines(stages=p, microbatches=m, chunks=v), prefix="compare-"))
