# How the search narrows the space: Llama-3 70B on 8 nodes x 8 A100-80GB, global batch 512.
import parallelsel as ps
from parallelsel.render.matrix_tables import excluded_table, funnel_table
from parallelsel.core.search import search

workload = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512)
cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8, gpus_per_node=8)
result = search(workload, cluster, top=10)

print(f"{workload.model.name}，全局批量 {workload.global_batch}，{cluster.nodes} 个节点 × {cluster.gpus_per_node} 张 "
      f"{cluster.device.name}（节点间 {cluster.inter.name}）。\n")

print(funnel_table(result))
print(excluded_table(result))
