# Misconception 1: one model (same parameter count), three training setups, three different rows of the
# matrix; then pure DP's thriftiest setting (micro-batch 1, full recompute) of each setup, per GPU.
import parallelsel as ps
from parallelsel.core.matrix import selection_matrix
from parallelsel.core.memory import breakdown
from parallelsel.render.memory_charts import breakdown_parts, memory_bars
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.tables import fmt_bytes, fmt_count, markdown_table
import markdown  # markdown-exec: hide
from parallelsel.render.reasons import plan_label
from parallelsel.render.lesson_text import verdict_word

model = ps.MODELS["llama2-7b"]
cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=1, gpus_per_node=8)
setups = [("bf16-adam", 4096, 64), ("bf16-adam8bit", 4096, 64), ("bf16-adam8bit", 32768, 8)]
thrifty_dp = ps.Plan(dp=cluster.gpus, micro_batch=1, recompute="full")

rows, dp, labels, parts = [], [], [], []
for recipe, seq, batch in setups:
    w = ps.Workload(model, recipe=ps.RECIPES[recipe], global_batch=batch, seq_len=seq)
    verdicts = {r.strategy: verdict_word(r.verdict) for r in selection_matrix(w, cluster)}
    dp.append(verdicts["DP"])
    rows.append([w.recipe.name, seq, batch, fmt_bytes(w.recipe.per_param * model.params)]
                + [verdicts[s] for s in ("DP", "FSDP", "TP", "PP")])
    labels.append(f"{w.recipe.name}\n序列 {seq}")
    parts.append(breakdown(w, thrifty_dp, cluster.device))

text = (f"{model.name}，{fmt_count(model.params)} 参数，{cluster.gpus} × {cluster.device.name}\n\n"
        + markdown_table(["训练配方", "序列长", "global batch", "训练状态", "DP", "FSDP", "TP", "PP"], rows,
                         align="lrrrcccc")
        + f"\n纯 DP 在这 {len(setups)} 种设置下依次是：{'、'.join(dp)}。下图把纯 DP 最省内存的设置"
          f"（{plan_label(thrifty_dp)}）的每卡内存拆开：\n")
print(markdown.markdown(text, extensions=["tables"]))  # markdown-exec: hide
budget = ps.estimate(ps.Workload(model, global_batch=setups[0][2]), thrifty_dp, cluster).budget
svg = memory_bars(labels, breakdown_parts(parts), title=f"{model.name}：纯 DP 最省内存的设置下每卡内存",
                  capacities=[(f"{cluster.device.name} 上限", budget)], salt="mis-same-params")
print(figure_html(svg, "同一个模型：换优化器或加长序列后，纯 DP 每卡内存跨过或退回单卡的上限（可用显存 ×(1 − 预留比例)）"))  # markdown-exec: hide
# The same third setup under the paper's accounting (attention="standard": the s x s scores are stored).
recipe, seq, batch = setups[-1]
for kernel in ("flash", "standard"):
    w = ps.Workload(model, recipe=ps.RECIPES[recipe], global_batch=batch, seq_len=seq // 2, attention=kernel)
    e = ps.estimate(w, thrifty_dp, cluster)
    print(f"<p>序列减半到 {seq // 2}、注意力按{'融合内核' if kernel == 'flash' else '标准注意力（存 s×s 分数）'}算："
          f"每卡 {fmt_bytes(e.memory.total)}，{'放得下' if e.fits else '放不下'}（上限 {fmt_bytes(e.budget)}）。</p>")
