# Self-check 4: the bubble fraction against m for three pipeline depths (lines: formula; points: simulation).
from parallelsel.render.pipeline_charts import bubble_curve
from parallelsel.render.style import figure_html  # markdown-exec: hide

svg = bubble_curve([2, 4, 8], [1, 2, 4, 8, 16, 32], salt="self-bubble-curve")
print(figure_html(svg, "气泡占比随微批次数 m 下降、随段数 p 上升：线为 (p-1)/(m+p-1)，点为 1F1B 模拟"))  # markdown-exec: hide
