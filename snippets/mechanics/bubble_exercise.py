# Exercise: p = 4 stages, m = 4 or m = 16 micro-batches; also how many m keep the bubble fraction under 10%.
import math

from parallelsel import pipeline

p = 4
for m in (4, 16):
    print(f"p={p}, m={m}: 气泡占比 (p-1)/(m+p-1) = {pipeline.bubble_fraction(p, m):.1%}，"
          f"气泡开销 (p-1)/m = {pipeline.bubble_overhead(p, m):.1%}")
# (p-1)/(m+p-1) <= x  <=>  m >= (p-1)(1-x)/x
x = 0.10
m_min = math.ceil((p - 1) * (1 - x) / x)
print(f"占比不超过 {x:.0%} 需要 m >= {m_min}：m={m_min} 时为 {pipeline.bubble_fraction(p, m_min):.1%}")
