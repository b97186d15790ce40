# ZBV and DualPipeV (two stages per rank, V layout) at p=4, m=8: forward 1, backward 2 split into I = 1 and W = 1.
from parallelsel.render.pipeline_charts import comparison_timelines, timelines_chart, trace_links
from parallelsel.render.style import figure_html  # markdown-exec: hide

p, m = 4, 8
timelines = comparison_timelines(stages=p, microbatches=m, chunks=2, kinds=("zbv", "dualpipev"))
svg = timelines_chart(timelines, salt="gantt_v_shape", title=f"V 形调度，p={p}、m={m}：卡 r 持有段 r 与 2p−1−r")  # markdown-exec: hide
print(figure_html(svg, f"ZBV 与 DualPipeV 的甘特图：{p} 张卡、每卡两段（V 形布局）、{m} 个微批次；深色是卡上的前一段，浅色是后一段"))  # markdown-exec: hide
print(trace_links(timelines))
