# What each GPU of a TP group holds and multiplies, GPT-3 175B (b=1, s=2048), and which degrees are allowed.
import parallelsel as ps
from parallelsel import memory
from parallelsel.core.plan import constraint_violations
from parallelsel.render.reasons import join
from parallelsel.render.tables import fmt_bytes, markdown_table

model, device = ps.MODELS["gpt3-175b"], ps.DEVICES["a100-80gb"]
work = ps.Workload(model, global_batch=1)
rows, last = [], None
for t in (1, 2, 4, 8, 16, 32, 64):
    bad = constraint_violations(work, ps.Plan(tp=t))
    if bad:
        rows.append([t, "—", "—", "—", "—", join(bad)])
        continue
    dense, _ = memory.stage_params(model, tp=t)
    states = memory.model_states(dense).total
    acts = memory.activations_per_layer(model, 1, tp=t) * model.layers
    rows.append([t, model.heads // t, f"{work.seq_len} × {model.hidden} · {model.hidden} × {model.ffn_hidden // t}",
                 fmt_bytes(states), fmt_bytes(acts), "可行"])
    last = (t, states + acts)
print(markdown_table(["TP 度 t", "每卡注意力头", "每卡 MLP 第一个矩阵乘（bs×h · h×f/t）", "每卡模型状态", "每卡激活（不重算）", "约束"],
                     rows, align="rrlrrl"))
t, total = last
print(f"\n头数允许的最大 TP 度 t={t}：每卡模型状态加激活 {fmt_bytes(total)}，"
      f"{'放得进' if total <= device.memory else '仍放不进'} {device.name}（{fmt_bytes(device.memory)}）。")
