# The same plan as a torchtitan TOML and a Megatron-LM launch script: the CLI's own export (parallelsel plan --export ...).
import tomllib

import parallelsel as ps
from parallelsel.core.launchers import export, refusals
from parallelsel.core.search import search
from parallelsel.render.launchers import refusals_text
from parallelsel.render.reasons import plan_label

workload = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512, stack="torchtitan")  # PyTorch-native: FSDP2 + TP + pipelining
cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8, gpus_per_node=8)
ranked = search(workload, cluster, top=100).results
plan = next(r for r in ranked if r.plan.dp > 1 and r.plan.tp > 1 and r.plan.pp > 1 and r.plan.zero == 3
            and r.plan.cp == 1 and r.plan.ep == 1).plan

titan = export(workload, plan, "torchtitan", cluster)
par = tomllib.loads(titan)["parallelism"]  # the TOML parses, and its degrees cover the cluster
assert (par["data_parallel_replicate_degree"] * par["data_parallel_shard_degree"] * par["tensor_parallel_degree"]
        * par["pipeline_parallel_degree"] * par["context_parallel_degree"]) == cluster.gpus
print("torchtitan（训练配置 TOML 里与方案有关的几节）：\n\n```toml\n" + titan + "```\n")

megatron_work = ps.Workload(workload.model, global_batch=workload.global_batch)  # the same job on Megatron-Core (its recipe)
refused = refusals(megatron_work, plan, "megatron")
near = plan if not refused else plan.with_(zero=1)  # the nearest plan Megatron-LM runs: its distributed optimizer
assert not refusals(megatron_work, near, "megatron")
if refused:
    print(f"Megatron-LM 跑不了这个方案：{refusals_text('megatron', refused)}。"
          f"同样的并行度改用它的分布式优化器（ZeRO-1，{plan_label(near)}）就可以。")
print("Megatron-LM（`pretrain_gpt.py` 的启动命令；数据、分词器与优化器的参数照旧由你补上）：\n\n```bash\n"
      + export(megatron_work, near, "megatron", cluster) + "```\n")
