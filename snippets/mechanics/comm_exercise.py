# Exercise: all-reduce the bf16 gradients of Llama-3 8B over 8 GPUs on NVLink4, and over 64 GPUs on InfiniBand NDR.
import parallelsel as ps
from parallelsel import comm
from parallelsel.render.tables import fmt_bytes, fmt_time

grads = ps.MODELS["llama3-8b"].params * ps.RECIPES["bf16-adam"].grads       # bytes
print(f"梯度大小 {fmt_bytes(grads)}")
for key, n in (("nvlink4", 8), ("ib-ndr", 64)):
    link = ps.LINKS[key]
    t = comm.collective_time("all-reduce", grads, n, link)
    bw_part = comm.bus_factor("all-reduce", n) * grads / link.bandwidth
    print(f"{n} 卡，{link.name}：{fmt_time(t)}（带宽项 {fmt_time(bw_part)}，延迟项 {fmt_time(t - bw_part)}）")
