# The same plan as a Megatron-LM launch script and a torchtitan TOML: the CLI's own export (parallelsel plan --export ...).
import tomllib

import parallelsel as ps
from parallelsel.core.launchers import export, refusals
from parallelsel.core.search import search

cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8, gpus_per_node=8)
on = {launcher: ps.Workload(ps.MODELS["llama3-70b"], global_batch=512, stack=stack)  # each launcher's own stack
      for launcher, stack in (("megatron", "megatron-core"), ("torchtitan", "torchtitan"))}
ranked = search(on["megatron"], cluster, top=20).results
plan = next(r.plan for r in ranked if r.plan.dp > 1 and r.plan.tp > 1
            and not any(refusals(w, r.plan, launcher) for launcher, w in on.items()))

megatron, titan = export(on["megatron"], plan, "megatron", cluster), export(on["torchtitan"], plan, "torchtitan", cluster)
par = tomllib.loads(titan)["parallelism"]  # the TOML parses, and its degrees cover the cluster
assert (par["data_parallel_replicate_degree"] * par["data_parallel_shard_degree"] * par["tensor_parallel_degree"]
        * par["pipeline_parallel_degree"] * par["context_parallel_degree"]) == cluster.gpus
print("Megatron-LM（启动脚本：注释头、环境变量、`torchrun … pretrain_gpt.py` 与全部参数）：\n\n```bash\n" + megatron + "```\n")
print("torchtitan（TOML 作业文件）：\n\n```toml\n" + titan + "```\n")
