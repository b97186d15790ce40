# Self-check 2: one TP all-reduce of a layer's activations against that layer's compute, on NVLink and on InfiniBand.
import parallelsel as ps
from parallelsel.comm import collective_time
from parallelsel.estimate import DEFAULT_EFFICIENCY
from parallelsel.render.tables import fmt_rate, fmt_time, markdown_table

model, device, tp, b = ps.MODELS["llama2-70b"], ps.DEVICES["a100-80gb"], 8, 1
s, h = model.seq_len, model.hidden
nbytes = b * s * h * 2                                    # bf16 activations of one micro-batch
fw = model.forward_flops_per_token()
layer_fwd = b * s * (fw["layers"] + fw["attention"]) / model.layers / tp / (device.peak_flops * DEFAULT_EFFICIENCY)
rows = []
for key in ("nvlink3", "ib-hdr"):
    link = ps.LINKS[key]
    t = collective_time("all-reduce", nbytes, tp, link)
    rows.append([link.name, fmt_rate(link.bandwidth), fmt_time(t), fmt_time(2 * t), fmt_time(layer_fwd),
                 f"{2 * t / layer_fwd:.0%}"])
print(f"{model.name}，TP={tp}，微批次 {b} × 序列 {s}：一次 all-reduce 的缓冲 {nbytes / 2**20:.0f} MiB\n")
print(markdown_table(["链路", "每卡带宽", "一次 all-reduce", "一层前向的两次", "一层前向计算", "通信 / 计算"],
                     rows, align="lrrrrr"))
