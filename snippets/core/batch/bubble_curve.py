# Bubble fraction against GPU count when TP8 x PP8 is fixed and DP grows, for three global batches.
from parallelsel import pipeline
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.line_charts import curves  # markdown-exec: hide

tp, pp, b = 8, 8, 1
dps = [1, 2, 4, 8, 16, 32, 64, 128, 256]
series = {}
for B in (256, 1024, 4096):
    # m = B / (dp * b); beyond dp = B / b there is no whole micro-batch left per pipeline.
    series[f"B={B}"] = [pipeline.bubble_fraction(pp, B // (dp * b)) if dp * b <= B else None for dp in dps]
svg = curves([tp * pp * dp for dp in dps], series, title=f"TP{tp}×PP{pp}，DP 翻倍时的气泡占比（微批次大小 b={b}）",  # markdown-exec: hide
             xlabel="GPU 数（对数刻度）", ylabel="气泡占比 (p-1)/(m+p-1)", percent=True, logx=2, ylim=(0, 1),  # markdown-exec: hide
             salt="batch-bubble-curve")  # markdown-exec: hide
print(figure_html(svg, "全局批量固定时，DP 每翻倍一次，每条流水线的微批次减半，气泡占比上升；批量越小，越早到达 m=1 的尽头"))  # markdown-exec: hide
