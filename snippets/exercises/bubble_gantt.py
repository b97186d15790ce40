# Exercise 4, answer: the two simulated steps drawn on one time axis (grey = idle).
from parallelsel import pipeline
from parallelsel.render.pipeline_charts import gantt
from parallelsel.render.style import figure_html  # markdown-exec: hide

P, M_VALUES = 8, (8, 32)        # the givens of exercise 4
for m in M_VALUES:
    tl = pipeline.simulate(pipeline.schedule("1f1b", P, m), forward=1.0, backward=2.0)
    svg = gantt(tl, salt=f"ex-bubble-m{m}")
    print(figure_html(svg, f"1F1B，p={P}，m={m} 的一步：灰色为空闲，气泡占比 {tl.bubble_fraction:.1%}"))  # markdown-exec: hide
