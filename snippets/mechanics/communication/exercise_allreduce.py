# Exercise: all-reduce a model's bf16 gradients over a node's GPUs on NVLink4, and over more GPUs on InfiniBand NDR.
# --8<-- [start:givens]
import parallelsel as ps

model = ps.MODELS["llama3-8b"]
CASES = (("nvlink4", 8), ("ib-ndr", 64))         # (link, ranks in the ring)
print(f"对 {model.name} 的 bf16 梯度做一次 all-reduce：" +
      "，和 ".join(f"{n} 张卡走 {ps.LINKS[key].name}" for key, n in CASES) + "。")
# --8<-- [end:givens]
from parallelsel import comm
from parallelsel.render.tables import fmt_bytes, fmt_time

from parallelsel.render.tables import markdown_table
from parallelsel.render.units import fmt_pct

grads = model.params * ps.RECIPES["bf16-adam"].grads       # bytes
print(f"梯度大小 {fmt_bytes(grads)}\n")
rows = []
for key, n in CASES:
    link = ps.LINKS[key]
    t = comm.collective_time("all-reduce", grads, n, link)
    f = comm.bus_factor("all-reduce", n)
    line = f * grads / link.bandwidth                      # at the link's line rate
    achieved = f * grads / link.achieved                   # at the bus bandwidth nccl-tests reaches on it
    latency = 2 * (n - 1) * link.latency                   # the alpha term: 2(n-1) ring steps
    assert abs(t - (achieved + latency)) < 1e-12 * t       # the three columns add up to the model's time
    assert latency < 0.01 * t                              # latency is negligible here: bandwidth-bound
    rows.append([f"{n} 卡，{link.name}", fmt_time(t), fmt_time(line), fmt_time(achieved - line),
                 fmt_pct(link.achieved / link.bandwidth, 0), fmt_time(latency)])
print(markdown_table(["情况", "总时间", "按线速的带宽项", "实测带宽低于线速多出的时间", "实测/线速", "延迟项 2(n−1)α"],
                     rows, align="lrrrrr"))
