# Korthikanti et al. 2022, Table 2, evaluated for GPT-3 175B (s=2048, b=1, t=8): the library beside the formulas,
# with the paper's accounting (attention="standard": the s x s scores are stored) and with a fused kernel
# (attention="flash": FlashAttention-2 keeps the output and one fp32 logsumexp per head and row instead).
import parallelsel as ps
from parallelsel import memory
from parallelsel.render.tables import fmt_bytes, markdown_table

m = ps.MODELS["gpt3-175b"]
s, b, h, a, t = m.seq_len, 1, m.hidden, m.heads, 8
sbh = s * b * h
rows_spec = [
    ("无并行", "sbh(34 + 5as/h)", sbh * (34 + 5 * a * s / h), dict(tp=1)),
    ("TP", "sbh(10 + 24/t + 5as/(ht))", sbh * (10 + 24 / t + 5 * a * s / (h * t)), dict(tp=t)),
    ("TP + SP", "sbh(34/t + 5as/(ht))", sbh * (34 / t + 5 * a * s / (h * t)), dict(tp=t, sp=True)),
    ("TP + 选择性重算", "sbh(10 + 24/t)", sbh * (10 + 24 / t), dict(tp=t, recompute="selective")),
    ("TP + SP + 选择性重算", "sbh(34/t)", sbh * 34 / t, dict(tp=t, sp=True, recompute="selective")),
    ("完全重算", "2sbh", 2 * sbh, dict(recompute="full")),
]
rows = []
for name, formula, value, kw in rows_spec:
    std = memory.activations_per_layer(m, b, attention="standard", **kw)
    fused = memory.activations_per_layer(m, b, attention="flash", **kw)
    rows.append([name, formula, fmt_bytes(value, "MiB"), fmt_bytes(std, "MiB"), "一致" if abs(std - value) < 1 else "不同",
                 fmt_bytes(fused, "MiB")])
print(f"{m.name}：s={s}，b={b}，h={h}，a={a}，t={t}，每层激活\n")
print(markdown_table(["方式", "Table 2 公式（字节）", "公式值", "库：标准注意力", "核对", "库：融合内核"], rows,
                     align="llrrlr"))
