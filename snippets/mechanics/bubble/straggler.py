# One stage 1.5x slower than the others (1F1B, p=4, m=8): the whole pipeline waits for it.
from parallelsel.render.pipeline_charts import straggler
from parallelsel.render.style import figure_html  # markdown-exec: hide

slow_stage, slowdown = 2, 1.5
svg = straggler(stages=4, microbatches=8, slow_stage=slow_stage, slowdown=slowdown, salt="straggler")
print(figure_html(svg, f"慢阶段（straggler）的影响：阶段 {slow_stage} 慢 {slowdown:g} 倍时，其余阶段都要等它，气泡变大、步时变长"))  # markdown-exec: hide
