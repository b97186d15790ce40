# Bubble fraction (p-1)/(m+p-1) against the number of micro-batches, closed form vs simulation.
from parallelsel.render.pipeline_charts import bubble_curve
from parallelsel.render.style import figure_html  # markdown-exec: hide

svg = bubble_curve(stages_list=[2, 4, 8, 16], m_values=[1, 2, 4, 8, 16, 32, 64], salt="bubble_curve")
print(figure_html(svg, "气泡占比随微批次数 m 的变化：m 越大气泡越小，段数 p 越多需要越多的微批次来摊薄气泡"))  # markdown-exec: hide
