# DP's compute-bound condition on real links: tokens per GPU per step needed to hide the gradient all-reduce.
import parallelsel as ps
from parallelsel.core.placement import group_placement
from parallelsel.core.roofline import dp_comm_to_compute, dp_critical_tokens
from parallelsel.core.stacks import DEFAULT_STACK
from parallelsel.render.roofline_charts import ratio_lines  # markdown-exec: hide
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.tables import fmt_rate

ranks, per_node = 64, 8
stack = ps.STACKS[DEFAULT_STACK]   # the gradient all-reduce runs in its dtype (fp32 on Megatron-Core)
# A DP group of 64 GPUs on 8-GPU DGX nodes: NCCL runs one ring per HCA, so the group's link carries the node's HCAs.
setups = {}
for name, device, inter in (("A100 · IB HDR", "a100-80gb", "ib-hdr"), ("H100 · IB NDR", "h100-sxm-80gb", "ib-ndr")):
    cluster = ps.Cluster(ps.DEVICES[device], nodes=ranks // per_node, gpus_per_node=per_node, inter=ps.LINKS[inter])
    g = group_placement(cluster, ranks, ranks, 1)
    setups[name] = (ps.DEVICES[device], g.link, f"{g.rings} 个环、每块网卡一个，受 {g.link.name} 限制", ranks)
# NVLink joins one node's 8 GPUs only (DGX A100 user guide: 8 GPUs per NVSwitch fabric): a one-node group of 8.
setups["A100 · NVLink3"] = (ps.DEVICES["a100-80gb"], ps.LINKS["nvlink3"], "一个节点内", per_node)
print(f"框架栈 {stack.name}：梯度 all-reduce 用 {stack.grad_reduce_dtype}；每节点 {per_node} 卡\n")
need = {}
for name, (device, link, how, n) in setups.items():
    need[name] = dp_critical_tokens(device, link, n, stack=stack)
    print(f"- {device.name} + {fmt_rate(link.bandwidth)}（{how}），{n} 卡：每卡每步至少 {need[name]:,.0f} 个 token")

tokens = [2**k for k in range(8, 16)]  # tokens per GPU per step  # markdown-exec: hide
series = {f"{name}（{n} 卡）": [dp_comm_to_compute(t, d, x, n, stack=stack) for t in tokens]  # markdown-exec: hide
          for name, (d, x, _, n) in setups.items()}  # markdown-exec: hide
svg = ratio_lines(tokens, series, title="DP：梯度 all-reduce ÷ 反向计算", xlabel="每卡每步 token 数",  # markdown-exec: hide
                  xlabels=[f"{t / 1024:g}K" for t in tokens], salt="dp-roofline-chart")  # markdown-exec: hide
seq = ps.MODELS["llama2-7b"].seq_len  # markdown-exec: hide
print(figure_html(svg, f"跨节点（A100 + IB HDR，每节点的网卡一起用）每卡每步要 {need['A100 · IB HDR']:,.0f} 个 token 才能把 all-reduce 藏进反向，"  # markdown-exec: hide
                       f"约 {need['A100 · IB HDR'] / seq:.1f} 条 {seq} token 的序列；节点内 NVLink3 只要 "  # markdown-exec: hide
                       f"{need['A100 · NVLink3']:,.0f} 个"))  # markdown-exec: hide
