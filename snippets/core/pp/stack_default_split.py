# BLOOM 176B's 70 layers on 12 pipeline stages, with no split stated: what each stack builds by itself
# (parallelsel.core.plan.stack_split), and what that costs on the same job (DP8 x TP4 x PP12, ZeRO-1, mb 2).
import parallelsel as ps
from parallelsel.core.plan import megatron_split, stack_split
from parallelsel.render.reasons import join
from parallelsel.render.tables import markdown_table

model = ps.Transformer(layers=70, hidden=14336, heads=112, seq_len=2048, vocab=250880)
cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=48)
plan = ps.Plan(dp=8, tp=4, pp=12, zero=1, micro_batch=2, recompute="full")
rows = []
for stack in ("deepspeed", "torchtitan", "megatron-core"):
    e = ps.estimate(ps.Workload(model, global_batch=2048, seq_len=2048, stack=stack), plan, cluster)
    split = stack_split(stack, model.layers, plan.pp)
    hard = [r for r in e.reasons if r.code == "layers_not_divisible"]
    if hard:
        rows.append([ps.STACKS[stack].name, "—", "拒绝：" + join(hard, "zh"), "—"])
    else:
        work = [f + b for f, b in e.step.stages]  # one micro-batch's forward + backward on each stage
        rows.append([ps.STACKS[stack].name, "/".join(map(str, split)), "接受",
                     f"第 {work.index(max(work)) + 1} 段（{split[work.index(max(work))]} 层）"])
print(markdown_table(["框架", "各段层数", "不写切分时", "最慢的段"], rows, align="llll"))
# BLOOM itself named a partition method: type:transformer|embedding also counts the two embedding layers.
print(f"\nBLOOM 本身写明了 `partition_method='type:transformer|embedding'`（两个嵌入层也各算一层），得到的是 "
      f"{'/'.join(map(str, megatron_split(model.layers, plan.pp, account_for_embedding=True, account_for_loss=True)))}。")
# What the page says: DeepSpeed puts the spare layers on the earliest stages, torchtitan gives the two end stages
# fewer layers than the middle ones, Megatron-Core refuses.
ds, tt = stack_split("deepspeed", model.layers, plan.pp), stack_split("torchtitan", model.layers, plan.pp)
assert list(ds) == sorted(ds, reverse=True) and ds[0] > ds[-1]
assert tt[0] < max(tt) and tt[-1] < max(tt) and rows[-1][2].startswith("拒绝")
