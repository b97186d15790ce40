# Exercise: p stages, two micro-batch counts m; also how many m keep the bubble fraction under a target.
# --8<-- [start:givens]
p, MS, TARGET = 4, (4, 16), 0.10
print(f"p = {p}，m 取 {' 和 '.join(map(str, MS))}；气泡占比的目标是不超过 {TARGET:.0%}。")
# --8<-- [end:givens]
import math

from parallelsel import pipeline

for m in MS:
    print(f"p={p}, m={m}: 气泡占比 (p-1)/(m+p-1) = {pipeline.bubble_fraction(p, m):.1%}，"
          f"气泡开销 (p-1)/m = {pipeline.bubble_overhead(p, m):.1%}")
# (p-1)/(m+p-1) <= x  <=>  m >= (p-1)(1-x)/x
x = TARGET
m_min = math.ceil((p - 1) * (1 - x) / x)
print(f"占比不超过 {x:.0%} 需要 m >= {m_min}：m={m_min} 时为 {pipeline.bubble_fraction(p, m_min):.1%}")
