# Per-GPU activations for one 128K-token sequence: adding DP leaves them unchanged, CP divides them.
import parallelsel as ps
from parallelsel import memory
from parallelsel.render.tables import fmt_bytes, markdown_table

model = ps.MODELS["llama3-8b"]
s, tp = 131072, 8
per_gpu = lambda seq: model.layers * memory.activations_per_layer(  # noqa: E731
    model, 1, tp=tp, sp=True, recompute="selective", seq_len=seq)
rows = []
for dp in (1, 8, 64):
    # DP gives each rank whole sequences (b >= 1): its activations do not change, the global batch grows.
    rows.append([f"DP={dp}", fmt_bytes(per_gpu(s)), f"{dp * s:,}"])
for cp in (2, 4, 8):
    # CP splits every sequence into cp chunks; with selective recompute activations are linear in s.
    rows.append([f"CP={cp}", fmt_bytes(per_gpu(s // cp)), f"{s:,}"])
print(f"{model.name}，每条序列 {s:,} token，TP={tp} + SP + 选择性重算，每卡所有层的激活\n")
print(markdown_table(["加的维度", "每卡激活", "每步最少 token 数"], rows, align="lrr"))
