# Which micro-batch counts the interleaved schedules accept (torch 2.13's rule, which the library applies): p=4, v=2.
from parallelsel import pipeline

p, v = 4, 2
accepted, refused = [], {}
for m in range(1, 4 * p + 1):
    try:
        pipeline.schedule("interleaved", p, m, chunks=v)
        accepted.append(m)
    except ValueError:  # the library refuses it; the sentence below says why, in the page's words
        refused[m] = max(1, m // p)  # the rounds torch splits m into, as the text above states the rule
print(f"p={p}、v={v} 时，m 取 1…{4 * p} 中的 {'、'.join(map(str, accepted))} 都可以；"
      f"{'、'.join(map(str, refused))} 被 `pipeline.schedule` 拒绝。")
m, rounds = next(iter(refused.items()))
assert m % rounds, "every refused m should be the rule's case: not a multiple of its rounds"
print(f"\n例如 m={m}：分成 r = max(1, ⌊{m}/{p}⌋) = {rounds} 轮，{m} 不是 {rounds} 的整数倍，每轮分不到一样多的微批次。")
