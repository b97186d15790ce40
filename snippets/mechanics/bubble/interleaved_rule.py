# Which micro-batch counts the interleaved schedules accept (torch 2.13's rule, which the library applies): p=4, v=2.
from parallelsel import pipeline

p, v = 4, 2
accepted, refused = [], {}
for m in range(1, 4 * p + 1):
    try:
        pipeline.schedule("interleaved", p, m, chunks=v)
        accepted.append(m)
    except ValueError as error:
        refused[m] = str(error)
print(f"p={p}、v={v} 时，m 取 1…{4 * p} 中的 {'、'.join(map(str, accepted))} 都可以；"
      f"{'、'.join(map(str, refused))} 被拒绝。")
m, why = next(iter(refused.items()))
print(f"\n例如 m={m} 时，`pipeline.schedule` 报的错是：\n\n    ValueError: {why}")
