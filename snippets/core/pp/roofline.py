# PP's compute-bound condition: hidden size x layers per stage above which a boundary's p2p is shorter than the stage.
import math

import parallelsel as ps
from parallelsel.core.roofline import pp_comm_to_compute, pp_critical_hidden_layers
from parallelsel.render.roofline_charts import ratio_lines  # markdown-exec: hide
from parallelsel.render.style import figure_html  # markdown-exec: hide

for device, link in (("a100-80gb", "ib-hdr"), ("h100-sxm-80gb", "ib-ndr"), ("a100-80gb", "eth-25g")):
    x = pp_critical_hidden_layers(ps.DEVICES[device], ps.LINKS[link])
    print(f"- {ps.DEVICES[device].name} + {ps.LINKS[link].name}：h × 每段层数 ≥ {x:,.0f}")

model = ps.MODELS["llama2-7b"]  # markdown-exec: hide
layers = [2**k for k in range(6) if 2**k <= model.layers]  # layers per stage  # markdown-exec: hide
setups = {"A100 · IB HDR": ("a100-80gb", "ib-hdr"), "H100 · IB NDR": ("h100-sxm-80gb", "ib-ndr"),  # markdown-exec: hide
          "A100 · 100GbE": ("a100-80gb", "eth-100g"), "A100 · 25GbE": ("a100-80gb", "eth-25g")}  # markdown-exec: hide
series = {name: [pp_comm_to_compute(model.hidden, n, ps.DEVICES[d], ps.LINKS[x]) for n in layers]  # markdown-exec: hide
          for name, (d, x) in setups.items()}  # markdown-exec: hide
svg = ratio_lines(layers, series, title=f"{model.name}（h = {model.hidden:,}）：段间 p2p ÷ 段内计算",  # markdown-exec: hide
                  xlabel="每段层数", salt="pp-roofline-chart")  # markdown-exec: hide
slow = math.ceil(pp_critical_hidden_layers(ps.DEVICES["a100-80gb"], ps.LINKS["eth-25g"]) / model.hidden)  # markdown-exec: hide
print(figure_html(svg, f"{model.name} 每段只放 1 层时，IB HDR 上的 p2p 也只有计算的 {series['A100 · IB HDR'][0]:.0%}；"  # markdown-exec: hide
                       f"连 25GbE 也只要每段 {slow} 层以上就藏得住：PP 是最适合跨慢链路的维度"))  # markdown-exec: hide
