# Share of training FLOPs per token spent on attention scores (QK^T and the weighted sum) as s grows.
import parallelsel as ps
from parallelsel.render.tables import fmt_pct, markdown_table

model = ps.MODELS["llama3-8b"]
rows = []
for s in (2048, 8192, 32768, 131072):
    fw = model.forward_flops_per_token(seq_len=s)          # per token: matmuls, attention scores, logits
    total = fw["layers"] + fw["attention"] + fw["logits"]
    rows.append([s, f"{model.flops_per_token(seq_len=s) / 1e9:,.1f}", fmt_pct(fw["attention"] / total)])
print(markdown_table(["序列长度 s", "每 token 训练 GFLOP", "注意力分数部分占比"], rows, align="rrr"))
