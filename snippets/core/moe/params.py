# Mixtral 8x7B: every expert must be stored and trained, but each token only runs through top_k of them.
import parallelsel as ps
from parallelsel import memory
from parallelsel.render.tables import fmt_bytes, fmt_count, fmt_pct, markdown_table

moe = ps.MODELS["mixtral-8x7b"]
dense = ps.MODELS["llama2-13b"]
rows = []
for m in (moe, dense):
    states = memory.model_states(m.params, ps.RECIPES["bf16-adam"]).total
    rows.append([m.name, m.experts, m.top_k, fmt_count(m.params), fmt_count(m.active_params),
                 fmt_pct(m.active_params / m.params), fmt_bytes(states), f"{m.flops_per_token() / 1e9:,.1f}"])
print(markdown_table(["模型", "专家数", "top-k", "总参数", "每 token 激活参数", "激活占比", "训练状态 M_model", "训练 GFLOP/token"],
                     rows, align="lrrrrrrr"))
