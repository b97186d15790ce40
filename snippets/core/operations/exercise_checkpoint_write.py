# Exercise: Llama-3 405B sharded checkpoints on thousands of GPUs. How long is the write, the best interval, and the loss?
# --8<-- [start:givens]
import parallelsel as ps
from parallelsel.render.tables import fmt_rate

model = ps.MODELS["llama3-405b"]
gpus, gpus_per_node = 2048, 8
STORAGE = (40e9, 200e9)                       # aggregate storage bandwidth tried, bytes/s
print(f"{model.name} 在 {gpus} 张卡（每节点 {gpus_per_node} 张）上训练，分片写 checkpoint；"
      f"存储总带宽取 {' 或 '.join(fmt_rate(bw) for bw in STORAGE)}。")
# --8<-- [end:givens]
from parallelsel import reliability as rel
from parallelsel.render.tables import fmt_bytes, fmt_time

job_mtbf = rel.job_mtbf(gpus)                 # Dubey et al. 2024 §3.3.4 (as on this page)
saved = rel.checkpoint_bytes(model.params, ps.RECIPES["bf16-adam"])
for bw in STORAGE:
    name = f"存储总带宽 {fmt_rate(bw)}"
    c = rel.write_time(saved, writers=gpus // gpus_per_node, storage_bandwidth=bw)
    t = rel.young_interval(c, job_mtbf)
    print(f"{name}：写一次 {fmt_bytes(saved)} 需 {fmt_time(c)}，作业平均 {fmt_time(job_mtbf)} 故障一次，"
          f"最优间隔 {fmt_time(t)}，损失约 {rel.lost_fraction(c, t, job_mtbf):.1%}")
