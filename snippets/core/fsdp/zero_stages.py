# ZeRO stages 0-3 for Llama-2 7B (bf16 + Adam): model-state bytes per device at N_d = 8 and 64.
import parallelsel as ps
from parallelsel import memory
from parallelsel.render.tables import fmt_bytes, markdown_table
from parallelsel.render.memory_charts import memory_bars, states_parts  # markdown-exec: hide
from parallelsel.render.style import figure_html  # markdown-exec: hide

model, recipe = ps.MODELS["llama2-7b"], ps.RECIPES["bf16-adam"]
a100 = ps.DEVICES["a100-80gb"]
DEGREES = (8, 64)
print(f"{model.name}（{recipe.name}），DP 度 N_d 取 {' 和 '.join(map(str, DEGREES))}，只看模型状态。\n")
labels, states = [], []
for nd in DEGREES:
    for zero in (0, 1, 2, 3):
        labels.append(f"N_d={nd}\nZeRO-{zero}")
        states.append(memory.model_states(model.params, recipe, dp=nd, zero=zero))

rows = [[lab.replace("\n", " · "), fmt_bytes(s.params), fmt_bytes(s.grads), fmt_bytes(s.optimizer), fmt_bytes(s.total)]
        for lab, s in zip(labels, states)]
print(markdown_table(["配置", "权重", "梯度", "优化器状态", "模型状态合计"], rows, align="lrrrr"))
svg = memory_bars(labels, states_parts(states), capacities=[(a100.name, a100.memory)], salt="fsdp-zero-stages",  # markdown-exec: hide
                  title=f"{model.name} 每卡模型状态：ZeRO 各阶段（不含激活）")  # markdown-exec: hide
print(figure_html(svg, f"{model.name} 在 " + " 与 ".join(f"N_d={nd}" for nd in DEGREES) + f" 时 ZeRO 各阶段的每卡模型状态（GiB），虚线为 {a100.name} 容量"))  # markdown-exec: hide
