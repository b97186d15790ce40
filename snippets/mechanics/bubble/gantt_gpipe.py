# GPipe (all forwards, then all backwards) with the same p=4, m=8 as the 1F1B chart.
from parallelsel import pipeline
from parallelsel.render.pipeline_charts import gantt, trace_links
from parallelsel.render.style import figure_html  # markdown-exec: hide

p, m = 4, 8
timeline = pipeline.simulate(pipeline.schedule("gpipe", stages=p, microbatches=m), forward=1.0, backward=2.0)
print(f"步时 {timeline.makespan:g}，气泡占比 {timeline.bubble_fraction:.1%}，段 0 峰值在途微批次 {timeline.peak_inflight[0]}")
svg = gantt(timeline, salt="gantt_gpipe")  # markdown-exec: hide
ref = pipeline.simulate(pipeline.schedule("1f1b", stages=p, microbatches=m), forward=1.0, backward=2.0)  # markdown-exec: hide
print(figure_html(svg, f"气泡与 1F1B 一样是 {timeline.bubble_fraction:.1%}，但第 0 段要同时保存 {timeline.peak_inflight[0]} 个"  # markdown-exec: hide
                       f"微批次的激活，1F1B 只要 {ref.peak_inflight[0]} 个"))  # markdown-exec: hide
print(trace_links([timeline]))  # the same timeline as Chrome-trace JSON (Timeline.to_chrome_trace)
