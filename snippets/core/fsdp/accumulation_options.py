# FSDP with gradient accumulation: reshard_after_forward (FULL_SHARD vs SHARD_GRAD_OP) x gradient sync on every
# micro-batch vs only the last (FSDP2 set_requires_gradient_sync(False), FSDP1 no_sync()); Llama-2 7B, dp=64.
import parallelsel as ps
from parallelsel.render.comm_charts import describe_traffic
from parallelsel.render.tables import fmt_bytes, fmt_time, markdown_table

cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8, gpus_per_node=8)
dp, m = cluster.gpus, 8
work = ps.Workload(ps.MODELS["llama2-7b"], global_batch=dp * m)
print(f"{work.model.name}，dp={dp}（{cluster.nodes} 个节点 × {cluster.gpus_per_node} 张 {cluster.device.name}，"
      f"节点间 {cluster.inter.name}），每卡每步 {m} 个微批次，选择性重算。\n")
rows = []
for raf in (True, False):
    for no_sync in (False, True):
        plan = ps.Plan(dp=dp, zero=3, recompute="selective", reshard_after_forward=raf, no_sync=no_sync)
        e = ps.estimate(work, plan, cluster)
        rows.append([f"reshard_after_forward={raf}（{'FULL_SHARD' if raf else 'SHARD_GRAD_OP'}）",
                     "只在最后一个微批次" if no_sync else "每个微批次", fmt_bytes(e.memory.grads), fmt_bytes(e.memory.gather_peak),
                     fmt_bytes(e.memory.total), describe_traffic(e.traffic), fmt_time(e.step.communication_total)])
print(markdown_table(["前向后释放权重？", "梯度同步", "每卡梯度", "gather 峰值", "每卡内存", "每步的集合通信", "通信总时长"],
                     rows, align="llrrrlr"))
