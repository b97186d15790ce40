# FSDP's compute-bound condition: tokens per GPU per micro-batch needed to hide two all-gathers and a reduce-scatter.
import math

import parallelsel as ps
from parallelsel.core.roofline import fsdp_comm_to_compute, fsdp_critical_tokens
from parallelsel.render.roofline_charts import ratio_lines  # markdown-exec: hide
from parallelsel.render.style import figure_html  # markdown-exec: hide

# (device, link, ranks): 64 ranks across nodes on InfiniBand; NVLink only within one node's 8 GPUs (on A100 the
# NVLink/NVSwitch domain is one node: DGX A100 user guide), so the NVLink row is a one-node group of 8.
setups = {"A100 · IB HDR": ("a100-80gb", "ib-hdr", 64), "H100 · IB NDR": ("h100-sxm-80gb", "ib-ndr", 64),
          "A100 · NVLink3": ("a100-80gb", "nvlink3", 8)}
for name, (device, link, ranks) in setups.items():
    t = fsdp_critical_tokens(ps.DEVICES[device], ps.LINKS[link], ranks)
    print(f"- {ps.DEVICES[device].name} + {ps.LINKS[link].name}，{ranks} 卡：每卡每个微批次至少 {t:,.0f} 个 token")

tokens = [2**k for k in range(10, 18)]  # tokens per GPU per micro-batch  # markdown-exec: hide
series = {f"{name}（{n} 卡）": [fsdp_comm_to_compute(t, ps.DEVICES[d], ps.LINKS[x], n) for t in tokens]  # markdown-exec: hide
          for name, (d, x, n) in setups.items()}  # markdown-exec: hide
svg = ratio_lines(tokens, series, title="FSDP：每个微批次的 gather + reduce-scatter ÷ 计算",  # markdown-exec: hide
                  xlabel="每卡每个微批次的 token 数", xlabels=[f"{t // 1024}K" for t in tokens], salt="fsdp-roofline-chart")  # markdown-exec: hide
seq = ps.MODELS["llama2-7b"].seq_len  # markdown-exec: hide
one = fsdp_comm_to_compute(seq, ps.DEVICES["a100-80gb"], ps.LINKS["ib-hdr"], setups["A100 · IB HDR"][2])  # markdown-exec: hide
print(figure_html(svg, f"每个微批次只放一条 {seq} token 的序列时，A100 + IB HDR 上的比值是 {one:.1f}：通信比计算长；"  # markdown-exec: hide
                       f"每个微批次至少要 {math.ceil(one)} 条序列，或者把分片留在节点内（HSDP）"))  # markdown-exec: hide
