# Checkpoint size and write time: a full state dict written by one rank vs a sharded one written by every rank.
import parallelsel as ps
from parallelsel import memory, reliability
from parallelsel.render.tables import fmt_bytes, fmt_rate, fmt_time, markdown_table

gpus_per_node = 8
rows = []
for key, gpus in (("llama3-8b", 64), ("llama3-70b", 512), ("llama3-405b", 2048)):
    model = ps.MODELS[key]
    full = memory.model_states(model.params, ps.RECIPES["bf16-adam"]).total           # weights + grads + Adam
    shard = memory.model_states(model.params, ps.RECIPES["bf16-adam"], dp=gpus, zero=3).total
    saved_full = reliability.checkpoint_bytes(model.params, ps.RECIPES["bf16-adam"])  # no gradients
    saved_shard = saved_full / gpus
    t_full = reliability.write_time(saved_full)                                      # one writer
    t_shard = reliability.write_time(saved_full, writers=gpus // gpus_per_node)      # every node writes its shards
    rows.append([model.name, gpus, fmt_bytes(saved_full), fmt_time(t_full), fmt_bytes(saved_shard, "MiB"),
                 fmt_time(t_shard), fmt_bytes(shard)])
print(f"假设：每节点写入 {fmt_rate(reliability.NODE_WRITE_BANDWIDTH)}，"
      f"存储总带宽上限 {fmt_rate(reliability.STORAGE_BANDWIDTH)}，每节点 {gpus_per_node} 卡\n")
print(markdown_table(["模型", "GPU 数", "checkpoint 大小（权重+优化器）", "完整 state dict：单 rank 写", "分片：每 rank 写",
                      "分片：全体并行写", "FSDP 下每卡常驻状态"], rows, align="lrrrrrr"))
