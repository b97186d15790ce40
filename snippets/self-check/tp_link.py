# Self-check 2: one TP all-reduce of a layer's activations against that layer's compute, on NVLink and on InfiniBand.
# Compute from the kernels one GPU runs at its TP shard's shapes (parallelsel.core.kernels); communication at the
# bus bandwidth each link reaches (Link.achieved, sources beside parallelsel.core.hardware.LINKS).
import parallelsel as ps
from parallelsel.core.comm import collective_time
from parallelsel.core.kernels import weight_pieces
from parallelsel.render.tables import fmt_rate, fmt_time, markdown_table

model, device, tp, b = ps.MODELS["llama2-70b"], ps.DEVICES["a100-80gb"], 8, 1
s, h = model.seq_len, model.hidden
nbytes = b * s * h * 2                                    # bf16 activations of one micro-batch
layer_fwd = sum(p.forward for p in weight_pieces(model, b, s, device, tp=tp))   # one layer, one GPU of the TP group
rows = []
for key in ("nvlink3", "ib-hdr"):
    link = ps.LINKS[key]
    t = collective_time("all-reduce", nbytes, tp, link)
    rows.append([link.name, fmt_rate(link.achieved), fmt_time(t), fmt_time(2 * t), fmt_time(layer_fwd),
                 f"{2 * t / layer_fwd:.0%}"])
print(f"{model.name}，TP={tp}，微批次 {b} × 序列 {s}：一次 all-reduce 的缓冲 {nbytes / 2**20:.0f} MiB"
      "（每层计算按每卡矩阵乘的实际形状计时，即 kernel 模型；通信按各链路实际能达到的总线带宽计）\n")
print(markdown_table(["链路", "每卡实际总线带宽", "一次 all-reduce", "一层前向的两次", "一层前向计算", "通信 / 计算"],
                     rows, align="lrrrrr"))
