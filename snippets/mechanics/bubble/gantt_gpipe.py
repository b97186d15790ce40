# GPipe (all forwards, then all backwards) with the same p=4, m=8 as the 1F1B chart.
from parallelsel import pipeline
from parallelsel.render.pipeline_charts import gantt, trace_links
from parallelsel.render.style import figure_html  # markdown-exec: hide

p, m = 4, 8
timeline = pipeline.simulate(pipeline.schedule("gpipe", stages=p, microbatches=m), forward=1.0, backward=2.0)
print(f"步时 {timeline.makespan:g}，气泡占比 {timeline.bubble_fraction:.1%}，阶段 0 峰值在途微批次 {timeline.peak_inflight[0]}")
svg = gantt(timeline, salt="gantt_gpipe")  # markdown-exec: hide
print(figure_html(svg, f"GPipe 调度甘特图：先做完全部前向再做反向，气泡与 1F1B 相同，但要同时保存全部 {m} 个微批次的激活"))  # markdown-exec: hide
print(trace_links([timeline]))  # the same timeline as Chrome-trace JSON (Timeline.to_chrome_trace)
