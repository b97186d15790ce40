# Exercise: Llama-3 405B sharded checkpoints on thousands of GPUs. How long is the write, the best interval, and the loss?
# --8<-- [start:givens]
import parallelsel as ps

model = ps.MODELS["llama3-405b"]
gpus, gpus_per_node = 2048, 8
STORAGE = (40e9, 200e9)                       # aggregate storage bandwidth tried, bytes/s
print(f"{model.name} 在 {gpus} 张卡（每节点 {gpus_per_node} 张）上训练，分片写 checkpoint；"
      f"存储总带宽取 {' 或 '.join(f'{bw / 1e9:g} GB/s' for bw in STORAGE)}。")
# --8<-- [end:givens]
import math

from parallelsel import memory
from parallelsel.render.tables import fmt_bytes, fmt_time

gpu_mtbf = 54 * 86400 * 16384 / 419          # Dubey et al. 2024 §3.3.4 (as on this page)
job_mtbf = gpu_mtbf / gpus
saved = memory.model_states(model.params).total - model.params * ps.RECIPES["bf16-adam"].grads
for bw in STORAGE:
    name = f"存储总带宽 {bw / 1e9:g} GB/s"
    c = saved / min(gpus // gpus_per_node * 2e9, bw)
    t = math.sqrt(2 * c * job_mtbf)
    print(f"{name}：写一次 {fmt_bytes(saved)} 需 {fmt_time(c)}，作业平均 {fmt_time(job_mtbf)} 故障一次，"
          f"最优间隔 {fmt_time(t)}，损失约 {c / t + t / (2 * job_mtbf):.1%}")
