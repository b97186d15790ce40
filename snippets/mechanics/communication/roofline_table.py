# Roofline thresholds per strategy on A100 and H100 links: above each threshold the strategy is compute-bound.
import parallelsel as ps
from parallelsel.render.tables import fmt_rate, markdown_table
from parallelsel.core.roofline import conditions

ranks, tp = 64, 8                      # DP/FSDP group size, TP degree
setups = [("a100-80gb", "nvlink3"), ("a100-80gb", "ib-hdr"), ("a100-80gb", "eth-100g"),
          ("h100-sxm-80gb", "nvlink4"), ("h100-sxm-80gb", "ib-ndr")]
rows = []
for device, link in setups:
    c = conditions(ps.DEVICES[device], ps.LINKS[link], ranks=ranks, tp=tp)
    rows.append([c.device, f"{c.link}（{fmt_rate(ps.LINKS[link].bandwidth)}）", f"{c.intensity:,.0f}",
                 f"{c.dp_tokens:,.0f}", f"{c.fsdp_tokens:,.0f}", f"{c.tp_hidden:,.0f}", f"{c.pp_hidden_layers:,.0f}"])
print(f"DP/FSDP 组 {ranks} 卡，TP 度 {tp}，bf16 权重与梯度；带宽为每卡单向标称值。\n")
print(markdown_table(["设备", "链路（每卡带宽）", "F/β（FLOPs/字节）", "DP：每卡每步 token ≥", "FSDP：每卡每微批次 token ≥",
                      f"TP={tp}：隐藏维度 h ≥", "PP：h × 每段层数 ≥"], rows, align="llrrrrr"))
