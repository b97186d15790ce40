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

grads = model.params * ps.RECIPES["bf16-adam"].grads       # bytes
print(f"梯度大小 {fmt_bytes(grads)}")
for key, n in CASES:
    link = ps.LINKS[key]
    t = comm.collective_time("all-reduce", grads, n, link)
    bw_part = comm.bus_factor("all-reduce", n) * grads / link.bandwidth
    print(f"{n} 卡，{link.name}：{fmt_time(t)}（带宽项 {fmt_time(bw_part)}，延迟项 {fmt_time(t - bw_part)}）")
