# Where the conditions flip: DP's all-reduce vs backward by tokens per GPU, and TP's all-reduce vs GEMM by TP degree.
import parallelsel as ps
from parallelsel.render.roofline_charts import ratio_lines
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.roofline import dp_critical_tokens, tp_comm_to_compute

a100, h100 = ps.DEVICES["a100-80gb"], ps.DEVICES["h100-sxm-80gb"]
links = {"A100 · NVLink3": (a100, ps.LINKS["nvlink3"]), "A100 · IB HDR": (a100, ps.LINKS["ib-hdr"]),
         "H100 · IB NDR": (h100, ps.LINKS["ib-ndr"]), "A100 · 100GbE": (a100, ps.LINKS["eth-100g"])}
ranks = 64
tokens = [2**k for k in range(10, 18)]          # tokens per GPU per step
dp = {name: [dp_critical_tokens(d, link, ranks) / t for t in tokens] for name, (d, link) in links.items()}
svg = ratio_lines(tokens, dp, title=f"DP（{ranks} 卡）：梯度 all-reduce ÷ 反向计算", xlabel="每卡每步 token 数",
                  xlabels=[f"{t // 1024}K" for t in tokens], salt="roofline-dp")
print(figure_html(svg, "每卡 token 越多，反向越长，梯度 all-reduce 越容易藏在反向后面；慢链路需要多一个数量级的 token"))

model = ps.MODELS["llama2-70b"]
degrees = [2, 4, 8, 16]
tp = {name: [tp_comm_to_compute(model.hidden, model.layer_params, t, d, link) for t in degrees]
      for name, (d, link) in links.items() if "NVLink" in name or "IB" in name}
svg = ratio_lines(degrees, tp, title=f"{model.name}：TP 每层 all-reduce ÷ 每层 GEMM", xlabel="TP 度",
                  salt="roofline-tp")
print(figure_html(svg, "TP 的比值与 micro-batch 无关，随 TP 度上升；节点内 NVLink 上低于 1，跨到 InfiniBand 就高出数倍"))
