# Misconception 1: the thriftiest pure-DP setting (micro-batch 1, full recompute) of each setup, per GPU.
import parallelsel as ps
from parallelsel.memory import breakdown
from parallelsel.render.memory_charts import breakdown_parts, memory_bars
from parallelsel.render.style import figure_html  # markdown-exec: hide

model = ps.MODELS["llama2-7b"]
device = ps.DEVICES["a100-80gb"]
setups = [("bf16-adam", 4096, 64), ("bf16-adam8bit", 4096, 64), ("bf16-adam8bit", 16384, 16)]
plan = ps.Plan(dp=8, micro_batch=1, recompute="full")

labels, parts = [], []
for recipe, seq, batch in setups:
    w = ps.Workload(model, recipe=ps.RECIPES[recipe], global_batch=batch, seq_len=seq)
    labels.append(f"{w.recipe.name}\n序列 {seq}")
    parts.append(breakdown(w, plan))
svg = memory_bars(labels, breakdown_parts(parts), title=f"{model.name}：纯 DP 最省内存的设置下每卡内存",
                  capacities=[(device.name, device.memory)], salt="mis-same-params")
print(figure_html(svg, "同一个模型：换优化器或加长序列后，纯 DP 每卡内存跨过或退回单卡容量线"))  # markdown-exec: hide
