# Exercise: B = 256 sequences, 1024 GPUs, TP8 x PP8, b = 1. Largest DP, its bubble, and the B for <= 10%.
import math

from parallelsel import pipeline

B, gpus, tp, pp, b = 256, 1024, 8, 8, 1
dp = gpus // (tp * pp)
m = B // (dp * b)
print(f"DP = {gpus} / ({tp}×{pp}) = {dp}，m = B/(DP·b) = {m}，气泡占比 = {pipeline.bubble_fraction(pp, m):.1%}")
x = 0.10
m_need = math.ceil((pp - 1) * (1 - x) / x)          # (p-1)/(m+p-1) <= x
print(f"要把气泡占比压到 {x:.0%} 以下需要 m >= {m_need}，即 B >= DP·b·m = {dp * b * m_need} 条序列"
      f"（此时 {pipeline.bubble_fraction(pp, m_need):.1%}）")
