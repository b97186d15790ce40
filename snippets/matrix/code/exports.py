# The same plan as a Megatron-LM launch script and a torchtitan TOML: the CLI's own export (parallelsel plan --export ...).
import tomllib

import parallelsel as ps
from parallelsel.core.launchers import export, refusals
from parallelsel.core.search import search

workload = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512, stack="torchtitan")  # PyTorch-native: FSDP2 + TP + pipelining
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
print("torchtitan（训练配置 TOML 里与方案有关的三节）：\n\n```toml\n" + titan + "```\n")

megatron_work = ps.Workload(workload.model, global_batch=workload.global_batch)  # the same job on Megatron-Core (its recipe)
refused = refusals(megatron_work, plan, "megatron")
if not refused:
    print("Megatron-LM（`pretrain_gpt.py` 的启动命令；数据、分词器与优化器的参数照旧由你补上）：\n\n```bash\n"
          + export(megatron_work, plan, "megatron") + "```\n")
else:
    # The nearest plan Megatron-LM runs: the same degrees with its distributed optimizer (ZeRO-1) instead of FSDP.
    near = plan.with_(zero=1)
    assert not refusals(megatron_work, near, "megatron")
    print(f"Megatron-LM 跑不了这个方案：{refusals_text('megatron', refused)}。"
          f"同样的并行度改用它的分布式优化器（ZeRO-1，{plan_label(near)}）就可以，参数如下"
          "（`pretrain_gpt.py` 的启动命令；数据、分词器与优化器的参数照旧由你补上）：\n\n```bash\n"
          + export(megatron_work, near, "megatron") + "```\n")
