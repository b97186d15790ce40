# Misconception 1: one model (same parameter count), three training setups, three different rows of the matrix.
import parallelsel as ps
from parallelsel.matrix import selection_matrix
from parallelsel.render.tables import fmt_bytes, fmt_count, markdown_table

model = ps.MODELS["llama2-7b"]
cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=1, gpus_per_node=8)
setups = [("bf16-adam", 4096, 64), ("bf16-adam8bit", 4096, 64), ("bf16-adam8bit", 16384, 16)]

rows, dp = [], []
for recipe, seq, batch in setups:
    w = ps.Workload(model, recipe=ps.RECIPES[recipe], global_batch=batch, seq_len=seq)
    verdicts = {r.strategy: r.verdict.value for r in selection_matrix(w, cluster)}
    dp.append(verdicts["DP"])
    rows.append([w.recipe.name, seq, batch, fmt_bytes(w.recipe.per_param * model.params)]
                + [verdicts[s] for s in ("DP", "FSDP", "TP", "PP")])
print(f"{model.name}，{fmt_count(model.params)} 参数，{cluster.gpus} × {cluster.device.name}\n")
print(markdown_table(["训练配方", "序列长", "global batch", "训练状态", "DP", "FSDP", "TP", "PP"], rows, align="lrrrcccc"))
print(f"\n纯 DP 在这 {len(setups)} 种设置下依次是：{'、'.join(dp)}。")
