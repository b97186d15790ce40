# DP's compute-bound condition on real links: tokens per GPU per step needed to hide the gradient all-reduce.
import parallelsel as ps
from parallelsel.core.roofline import dp_comm_to_compute, dp_critical_tokens
from parallelsel.render.roofline_charts import ratio_lines  # markdown-exec: hide
from parallelsel.render.style import figure_html  # markdown-exec: hide

# (device, link, ranks): 64 ranks across nodes on InfiniBand; NVLink only within one node's 8 GPUs (its domain is one
# node on A100: DGX A100 user guide, 8 GPUs per NVSwitch fabric), so the NVLink row is a one-node group of 8.
setups = {"A100 · IB HDR": ("a100-80gb", "ib-hdr", 64), "H100 · IB NDR": ("h100-sxm-80gb", "ib-ndr", 64),
          "A100 · NVLink3": ("a100-80gb", "nvlink3", 8)}
need = {}
for name, (device, link, ranks) in setups.items():
    need[name] = dp_critical_tokens(ps.DEVICES[device], ps.LINKS[link], ranks)
    print(f"- {ps.DEVICES[device].name} + {ps.LINKS[link].name}，{ranks} 卡：每卡每步至少 {need[name]:,.0f} 个 token")

tokens = [2**k for k in range(10, 18)]  # tokens per GPU per step  # markdown-exec: hide
series = {f"{name}（{n} 卡）": [dp_comm_to_compute(t, ps.DEVICES[d], ps.LINKS[x], n) for t in tokens]  # markdown-exec: hide
          for name, (d, x, n) in setups.items()}  # markdown-exec: hide
svg = ratio_lines(tokens, series, title="DP：梯度 all-reduce ÷ 反向计算", xlabel="每卡每步 token 数",  # markdown-exec: hide
                  xlabels=[f"{t // 1024}K" for t in tokens], salt="dp-roofline-chart")  # markdown-exec: hide
seq = ps.MODELS["llama2-7b"].seq_len  # markdown-exec: hide
print(figure_html(svg, f"跨节点（A100 + IB HDR）每卡每步要 {need['A100 · IB HDR']:,.0f} 个 token 才能把 all-reduce 藏进反向，"  # markdown-exec: hide
                       f"约 {need['A100 · IB HDR'] / seq:.1f} 条 {seq} token 的序列；节点内 NVLink3 只要 "  # markdown-exec: hide
                       f"{need['A100 · NVLink3']:,.0f} 个"))  # markdown-exec: hide
