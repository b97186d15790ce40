# Plain DP keeps the full model states on every device: per-device memory against device capacity.
import parallelsel as ps
from parallelsel import memory
from parallelsel.render.tables import fmt_bytes, markdown_table
from parallelsel.render.memory_charts import breakdown_parts, memory_bars  # markdown-exec: hide
from parallelsel.render.style import figure_html  # markdown-exec: hide

keys = ["gpt2-1.5b", "llama2-7b", "llama3-8b", "llama2-13b"]
devices = [ps.DEVICES[k] for k in ("rtx4090-24gb", "a100-80gb", "h200-141gb")]
# The kindest case for DP: micro-batch 1 and full recomputation (activations as small as they get).
plan = ps.Plan(dp=8, micro_batch=1, recompute="full")
works = [ps.Workload(ps.MODELS[k], global_batch=plan.dp * plan.micro_batch) for k in keys]
results = [memory.breakdown(w, plan) for w in works]

# "Fits" means at most the usable memory (driver-reported minus CUDA context and NCCL) x (1 - headroom).
rows = [[ps.MODELS[k].name, fmt_bytes(b.states), fmt_bytes(b.total)]
        + ["放得下" if b.total <= memory.budget(d, plan) else "放不下" for d in devices]
        for k, b in zip(keys, results)]
print(markdown_table(["模型", "每卡模型状态", "每卡合计"] + [d.name for d in devices], rows, align="lrr" + "c" * len(devices)))
svg = memory_bars([ps.MODELS[k].name for k in keys], breakdown_parts(results),  # markdown-exec: hide
                  capacities=[(f"{d.name} 上限", memory.budget(d, plan)) for d in devices], salt="dp-memory",  # markdown-exec: hide
                  title=f"纯 DP 每卡内存（{works[0].recipe.name}，微批次 {plan.micro_batch}，完全重算）")  # markdown-exec: hide
fits = {d.name: [ps.MODELS[k].name for k, b in zip(keys, results) if b.total <= memory.budget(d, plan)] for d in devices}  # markdown-exec: hide
big = devices[1]  # markdown-exec: hide
print(figure_html(svg, f"即使微批次 {plan.micro_batch}、完全重算，纯 DP 在 {big.name} 上也只放得下 "  # markdown-exec: hide
                       f"{'、'.join(fits[big.name]) or '任何一个'}：每卡要存一整份 "  # markdown-exec: hide
                       f"{works[0].recipe.per_param:g} B/参数的模型状态"))  # markdown-exec: hide
