# FSDP FULL_SHARD (ZeRO-3) on Llama-2 70B: states shrink as 1/P, activations and the gather peak do not.
import parallelsel as ps
from parallelsel import memory
from parallelsel.render.tables import fmt_bytes, markdown_table
from parallelsel.render.memory_charts import breakdown_parts, memory_bars  # markdown-exec: hide
from parallelsel.render.style import figure_html  # markdown-exec: hide

model = ps.MODELS["llama2-70b"]
a100 = ps.DEVICES["a100-80gb"]
sizes = [8, 16, 32, 64, 128, 256]
# One 4096-token sequence per device, full recomputation (FSDP is usually run with activation checkpointing).
print(f"{model.name}，FSDP FULL_SHARD，每卡一条 {model.seq_len} token 的序列，完全重算；分片数 P 取 {'、'.join(map(str, sizes))}。\n")
results = [memory.breakdown(ps.Workload(model, global_batch=p), ps.fsdp_plan("FULL_SHARD", dp=p, recompute="full"))
           for p in sizes]

rows = [[p, fmt_bytes(b.states), fmt_bytes(b.activations + b.embeddings), fmt_bytes(b.gather_peak), fmt_bytes(b.total),
         "放得下" if b.total <= memory.budget(a100, ps.Plan(dp=p, zero=3)) else "放不下"] for p, b in zip(sizes, results)]
print(markdown_table(["P", "模型状态 / P", "激活（含 logits）", "gather 峰值", "每卡合计", f"放进 {a100.name}？"], rows, align="rrrrrc"))
svg = memory_bars([f"P={p}" for p in sizes], breakdown_parts(results), capacities=[(f"{a100.name} 上限", memory.budget(a100, ps.Plan(dp=sizes[0], zero=3)))],  # markdown-exec: hide
                  title=f"{model.name}，FSDP FULL_SHARD：每卡内存随 P 变化（完全重算）", salt="fsdp-vs-p")  # markdown-exec: hide
print(figure_html(svg, f"{model.name} 用 FSDP FULL_SHARD 时每卡内存（GiB）随分片数 P 变化：模型状态按 1/P 下降，激活和 gather 峰值不变"))  # markdown-exec: hide
