# FSDP's compute-bound condition: tokens per GPU per micro-batch needed to hide two all-gathers and a reduce-scatter.
import math

import parallelsel as ps
from parallelsel.core.placement import group_placement
from parallelsel.core.roofline import fsdp_comm_to_compute, fsdp_critical_tokens
from parallelsel.core.stacks import DEFAULT_STACK
from parallelsel.render.roofline_charts import ratio_lines  # markdown-exec: hide
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.tables import fmt_rate

ranks, per_node = 64, 8
stack = ps.STACKS[DEFAULT_STACK]   # bf16 all-gathers, reduce-scatter in its gradient dtype
setups = {}
for name, device, inter in (("A100 · IB HDR", "a100-80gb", "ib-hdr"), ("H100 · IB NDR", "h100-sxm-80gb", "ib-ndr")):
    cluster = ps.Cluster(ps.DEVICES[device], nodes=ranks // per_node, gpus_per_node=per_node, inter=ps.LINKS[inter])
    g = group_placement(cluster, ranks, ranks, 1)   # NCCL: one ring per HCA of the node
    setups[name] = (ps.DEVICES[device], g.link, f"{g.rings} 个环，受 {g.link.name} 限制", ranks)
# NVLink only within one node: on A100 the NVLink/NVSwitch domain is the node's 8 GPUs (DGX A100 user guide).
setups["A100 · NVLink3"] = (ps.DEVICES["a100-80gb"], ps.LINKS["nvlink3"], "一个节点内", per_node)
print(f"框架栈 {stack.name}：all-gather 用 {stack.param_gather_dtype}，reduce-scatter 用 {stack.grad_reduce_dtype}\n")
for name, (device, link, how, n) in setups.items():
    t = fsdp_critical_tokens(device, link, n, stack=stack)
    print(f"- {device.name} + {fmt_rate(link.bandwidth)}（{how}），{n} 卡：每卡每个微批次至少 {t:,.0f} 个 token")

tokens = [2**k for k in range(8, 16)]  # tokens per GPU per micro-batch  # markdown-exec: hide
series = {f"{name}（{n} 卡）": [fsdp_comm_to_compute(t, d, x, n, stack=stack) for t in tokens]  # markdown-exec: hide
          for name, (d, x, _, n) in setups.items()}  # markdown-exec: hide
svg = ratio_lines(tokens, series, title="FSDP：每个微批次的 gather + reduce-scatter ÷ 计算",  # markdown-exec: hide
                  xlabel="每卡每个微批次的 token 数", xlabels=[f"{t / 1024:g}K" for t in tokens], salt="fsdp-roofline-chart")  # markdown-exec: hide
seq = ps.MODELS["llama2-7b"].seq_len  # markdown-exec: hide
device, link, _, _ = setups["A100 · IB HDR"]  # markdown-exec: hide
one = fsdp_comm_to_compute(seq, device, link, ranks, stack=stack)  # markdown-exec: hide
tail = ("通信已经比计算短，能藏在计算后面" if one <= 1 else  # markdown-exec: hide
        f"通信比计算长：每个微批次至少要 {math.ceil(one)} 条序列，或者把分片留在节点内（HSDP）")  # markdown-exec: hide
print(figure_html(svg, f"每个微批次只放一条 {seq} token 的序列时，A100 + IB HDR（每节点的网卡一起用）上的比值是 {one:.1f}：{tail}"))  # markdown-exec: hide
