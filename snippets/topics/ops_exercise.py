# Exercise: Llama-3 405B sharded checkpoints on 2048 GPUs. How long is the write, the best interval, and the loss?
import math

import parallelsel as ps
from parallelsel import memory
from parallelsel.render.tables import fmt_bytes, fmt_time

gpus, gpus_per_node = 2048, 8
gpu_mtbf = 54 * 86400 * 16384 / 419          # Dubey et al. 2024 §3.3.4 (as on this page)
job_mtbf = gpu_mtbf / gpus
model = ps.MODELS["llama3-405b"]
saved = memory.model_states(model.params).total - model.params * ps.RECIPES["bf16-adam"].grads
for bw in (40e9, 200e9):
    name = f"存储总带宽 {bw / 1e9:g} GB/s"
    c = saved / min(gpus // gpus_per_node * 2e9, bw)
    t = math.sqrt(2 * c * job_mtbf)
    print(f"{name}：写一次 {fmt_bytes(saved)} 需 {fmt_time(c)}，作业平均 {fmt_time(job_mtbf)} 故障一次，"
          f"最优间隔 {fmt_time(t)}，损失约 {c / t + t / (2 * job_mtbf):.1%}")
