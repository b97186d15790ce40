# Where each strategy's condition flips, side by side: DP and FSDP by tokens per GPU, TP by its degree, PP by layers per stage.
import parallelsel as ps
from parallelsel.render.roofline_charts import ratio_panels
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.core.roofline import (dp_comm_to_compute, dp_critical_tokens, fsdp_comm_to_compute, pp_comm_to_compute,
                                  tp_comm_to_compute)

a100, h100 = ps.DEVICES["a100-80gb"], ps.DEVICES["h100-sxm-80gb"]
links = {"A100 · NVLink3": (a100, ps.LINKS["nvlink3"]), "A100 · IB HDR": (a100, ps.LINKS["ib-hdr"]),
         "H100 · IB NDR": (h100, ps.LINKS["ib-ndr"]), "A100 · 25GbE": (a100, ps.LINKS["eth-25g"])}
ranks, per_node = 64, 8
tokens = [2**k for k in range(10, 18)]          # tokens per GPU (per step for DP, per micro-batch for FSDP)
dp = {name: [dp_comm_to_compute(t, d, x, ranks) for t in tokens] for name, (d, x) in links.items()}
fsdp = {name: [fsdp_comm_to_compute(t, d, x, ranks) for t in tokens] for name, (d, x) in links.items()}

big, small = ps.MODELS["llama2-70b"], ps.MODELS["llama2-7b"]
degrees = [2, 4, 8, 16]
# NVLink joins the GPUs of one node only: no NVLink point for a TP group larger than a node.
tp = {name: [None if t > per_node and x.name.startswith("NVLink") else tp_comm_to_compute(big.hidden, big.layer_params, t, d, x)
             for t in degrees] for name, (d, x) in links.items()}
layers = [1, 2, 4, 8, 16, 32]                   # layers per stage
pp = {name: [pp_comm_to_compute(small.hidden, n, d, x) for n in layers] for name, (d, x) in links.items()}

k = [f"{t // 1024}K" for t in tokens]
svg = ratio_panels([
    (f"DP（{ranks} 卡）：all-reduce ÷ 反向", tokens, dp, "每卡每步 token 数", k),
    (f"FSDP（{ranks} 卡）：gather + reduce-scatter ÷ 计算", tokens, fsdp, "每卡每个微批次的 token 数", k),
    (f"TP（{big.name}）：每层 all-reduce ÷ GEMM", degrees, tp, "TP 度", None),
    (f"PP（{small.name}）：段间 p2p ÷ 段内计算", layers, pp, "每段层数", None),
], salt="roofline-four")
ib = "A100 · IB HDR"
flip = dp_critical_tokens(*links[ib], ranks)  # FSDP's threshold is the same number, counted per micro-batch
print(figure_html(svg, f"同一条 A100 + IB HDR 链路：DP 和 FSDP 要每卡 {flip:,.0f} 个 token 以上才受算力限制，"
                       f"TP{per_node} 的比值是 {tp[ib][degrees.index(per_node)]:.1f}，"
                       f"PP 每段 1 层时只有 {pp[ib][0]:.2f}：越频繁的通信越要留在快链路上"))
