# One stage 1.5x slower than the others (1F1B, p=4, m=8): the whole pipeline waits for it.
from parallelsel.render.pipeline_charts import straggler, straggler_timelines, trace_links
from parallelsel.render.style import figure_html  # markdown-exec: hide

p, m, slow_stage, slowdown = 4, 8, 2, 1.5
svg = straggler(stages=p, microbatches=m, slow_stage=slow_stage, slowdown=slowdown, salt="straggler")
print(figure_html(svg, f"慢卡（straggler）的影响：段 {slow_stage} 慢 {slowdown:g} 倍时，其余段都要等它，气泡变大、步时变长"))  # markdown-exec: hide
uniform, slowed = straggler_timelines(p, m, slow_stage, slowdown)
print(trace_links([uniform, slowed], ["各段一样快", f"段 {slow_stage} 慢 {slowdown:g} 倍"], prefix="straggler-"))
