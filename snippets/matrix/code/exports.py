# The same plan as Megatron-LM arguments and a torchtitan TOML: the CLI's own export (parallelsel plan --export ...).
import tomllib

import parallelsel as ps
from parallelsel.core.launchers import export
from parallelsel.core.search import search

workload = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512)
cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8, gpus_per_node=8)
ranked = search(workload, cluster, top=20).results
plan = next(r for r in ranked if r.plan.dp > 1 and r.plan.tp > 1 and r.plan.pp > 1 and r.plan.zero == 3).plan

megatron, titan = export(workload, plan, "megatron"), export(workload, plan, "torchtitan")
par = tomllib.loads(titan)["parallelism"]  # the TOML parses, and its degrees cover the cluster
assert (par["data_parallel_replicate_degree"] * par["data_parallel_shard_degree"] * par["tensor_parallel_degree"]
        * par["pipeline_parallel_degree"]) == cluster.gpus
print("Megatron-LM（`pretrain_gpt.py` 的参数，模型结构与数据参数照旧由你给出）：\n\n```bash\n" + megatron + "```\n")
print("torchtitan（训练配置 TOML 里与方案有关的三节）：\n\n```toml\n" + titan + "```\n")
