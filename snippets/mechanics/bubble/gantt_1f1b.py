# 1F1B with p=4 stages and m=8 micro-batches: forward costs 1, backward 2 (time unit = one forward).
from parallelsel import pipeline
from parallelsel.render.pipeline_charts import gantt, trace_links
from parallelsel.render.style import figure_html  # markdown-exec: hide

p, m = 4, 8
timeline = pipeline.simulate(pipeline.schedule("1f1b", stages=p, microbatches=m), forward=1.0, backward=2.0)
print(f"步时 {timeline.makespan:g}，气泡占比 {timeline.bubble_fraction:.1%}，段 0 峰值在途微批次 {timeline.peak_inflight[0]}")
svg = gantt(timeline, salt="gantt_1f1b")  # markdown-exec: hide
print(figure_html(svg, f"{p} 段、{m} 个微批次：一步里 {timeline.bubble_fraction:.1%} 的时间在空等（灰色）；"  # markdown-exec: hide
                       f"第 0 段最多同时保存 {timeline.peak_inflight[0]} 个微批次的激活，不随 m 增长"))  # markdown-exec: hide
print(trace_links([timeline]))  # the same timeline as Chrome-trace JSON (Timeline.to_chrome_trace)
