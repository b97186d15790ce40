# What a pipeline stage sends per micro-batch, and how long it takes next to the stage's compute.
import parallelsel as ps
from parallelsel import comm
from parallelsel.render.tables import fmt_bytes, fmt_time, markdown_table

model = ps.MODELS["llama3-70b"]
device = ps.DEVICES["h100-sxm-80gb"]
b, s, h, tp, pp = 1, model.seq_len, model.hidden, 8, 4
efficiency = 0.5                       # achieved share of peak FLOP/s (assumption)

act = b * s * h * 2                    # bf16 activations at a stage boundary: b*s*h*2 bytes
per_link = act / tp                    # scatter/gather: each TP rank sends 1/tp (Narayanan et al. 2021 §4.1)
fwd_flops = model.flops_per_token() / 3 * b * s / (tp * pp)   # one micro-batch's forward on one GPU of a stage

rows = []
for key in ["nvlink4", "ib-ndr", "ib-hdr", "eth-100g"]:
    link = ps.LINKS[key]
    t_send = comm.collective_time("p2p", per_link, 2, link)
    t_fwd = fwd_flops / (device.peak_flops * efficiency)
    rows.append([link.name, fmt_bytes(per_link, "MiB"), fmt_time(t_send), fmt_time(t_fwd), f"{t_send / t_fwd:.1%}"])
print(f"{model.name}，b={b}，s={s}，TP={tp}，PP={pp}：每个微批次在段边界的激活 {fmt_bytes(act, 'MiB')}\n")
print(markdown_table(["链路", "每卡发送", "发送时间", "该段一次前向", "发送/前向"], rows, align="lrrrr"))
