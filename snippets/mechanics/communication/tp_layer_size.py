# TP communication against one layer's compute as the layer widens (TP=8, b=1, s=4096, forward pass).
import parallelsel as ps
from parallelsel import comm
from parallelsel.render.tables import fmt_pct, fmt_time, markdown_table

tp, b, s = 8, 1, 4096
device, efficiency = ps.DEVICES["h100-sxm-80gb"], 0.5      # achieved share of peak (assumption)
LINKS = ("nvlink4", "pcie4", "ib-ndr")
rows = []
for h in (1024, 2048, 4096, 8192, 16384):
    layer = ps.Transformer(layers=1, hidden=h, heads=h // 128, seq_len=s, vocab=32000)
    fw = layer.forward_flops_per_token()
    t_compute = (fw["layers"] + fw["attention"]) * b * s / tp / (device.peak_flops * efficiency)
    msg = b * s * h * 2                                      # bf16 activations, one all-reduce
    row = [h, fmt_time(t_compute)]
    for key in LINKS:
        t_comm = 2 * comm.collective_time("all-reduce", msg, tp, ps.LINKS[key])   # 2 per layer in forward
        row.append(f"{fmt_time(t_comm)}（{fmt_pct(t_comm / t_compute, 0)}）")
    rows.append(row)
print(f"TP={tp}，b={b}，s={s}，前向\n")
print(markdown_table(["隐藏维度 h", "每层前向计算", *(f"TP 通信：{ps.LINKS[k].name}" for k in LINKS)],
                     rows, align="rr" + "r" * len(LINKS)))
print("\n括号内为通信时间 / 计算时间。")
