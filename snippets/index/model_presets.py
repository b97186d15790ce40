# The model presets the lesson uses, with exact parameter counts and training FLOPs per token.
import parallelsel as ps
from parallelsel.render.tables import fmt_count, markdown_table

rows = []
for key, m in ps.MODELS.items():
    rows.append([
        f"`{key}`", m.layers, m.hidden, m.heads, m.kv_heads,
        f"{m.params:,}", fmt_count(m.active_params), f"{m.flops_per_token() / 1e9:,.1f}",
    ])
print(markdown_table(
    ["预设", "层数", "隐藏维度", "注意力头", "KV 头", "参数量（精确）", "每 token 激活参数", "训练 GFLOP/token"],
    rows, align="lrrrrrrr",
))
