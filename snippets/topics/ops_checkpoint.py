# Checkpoint size and write time: a full state dict written by one rank vs a sharded one written by every rank.
import parallelsel as ps
from parallelsel import memory
from parallelsel.render.tables import fmt_bytes, fmt_time, markdown_table

node_write = 2e9          # bytes/s one node can write to shared storage (assumption: measure yours)
storage_cap = 40e9        # bytes/s the parallel file system sustains in aggregate (assumption)
gpus_per_node = 8
rows = []
for key, gpus in (("llama3-8b", 64), ("llama3-70b", 512), ("llama3-405b", 2048)):
    model = ps.MODELS[key]
    full = memory.model_states(model.params, ps.RECIPES["bf16-adam"]).total           # weights + grads + Adam
    shard = memory.model_states(model.params, ps.RECIPES["bf16-adam"], dp=gpus, zero=3).total
    # Gradients are not saved: a checkpoint holds weights and optimizer state.
    saved_full = full - model.params * ps.RECIPES["bf16-adam"].grads
    saved_shard = saved_full / gpus
    nodes = gpus // gpus_per_node
    t_full = saved_full / node_write                                # one writer
    t_shard = saved_full / min(nodes * node_write, storage_cap)     # every node writes its ranks' shards
    rows.append([model.name, gpus, fmt_bytes(saved_full), fmt_time(t_full), fmt_bytes(saved_shard, "MiB"),
                 fmt_time(t_shard), fmt_bytes(shard)])
print(f"假设：每节点写入 {node_write / 1e9:g} GB/s，存储总带宽上限 {storage_cap / 1e9:g} GB/s，每节点 {gpus_per_node} 卡\n")
print(markdown_table(["模型", "GPU 数", "checkpoint 大小（权重+优化器）", "完整 state dict：单 rank 写", "分片：每 rank 写",
                      "分片：全体并行写", "FSDP 下每卡常驻状态"], rows, align="lrrrrrr"))
