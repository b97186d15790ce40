# TP's compute-bound condition: the hidden size above which a layer's four all-reduces are shorter than its GEMMs.
import parallelsel as ps
from parallelsel.core.roofline import tp_comm_to_compute, tp_critical_hidden
from parallelsel.render.roofline_charts import ratio_lines  # markdown-exec: hide
from parallelsel.render.style import figure_html  # markdown-exec: hide

models = [ps.MODELS[k] for k in ("llama2-7b", "llama2-70b", "gpt3-175b")]
print("对照：" + "，".join(f"{m.name} 的 h = {m.hidden:,}" for m in models) + "。\n")
for device, link in (("a100-80gb", "nvlink3"), ("h100-sxm-80gb", "nvlink4"), ("a100-80gb", "ib-hdr"), ("h100-sxm-80gb", "ib-ndr")):
    hs = "，".join(f"t={t} 时 h ≥ {tp_critical_hidden(t, ps.DEVICES[device], ps.LINKS[link]):,.0f}" for t in (4, 8))
    print(f"- {ps.DEVICES[device].name} + {ps.LINKS[link].name}：{hs}")

model, per_node, degrees = ps.MODELS["llama2-70b"], 8, [2, 4, 8, 16]  # markdown-exec: hide
setups = {"A100 · NVLink3": ("a100-80gb", "nvlink3"), "H100 · NVLink4": ("h100-sxm-80gb", "nvlink4"),  # markdown-exec: hide
          "A100 · IB HDR": ("a100-80gb", "ib-hdr"), "H100 · IB NDR": ("h100-sxm-80gb", "ib-ndr")}  # markdown-exec: hide
# NVLink joins the GPUs of one node only: no point for a TP group larger than a node.  # markdown-exec: hide
series = {name: [tp_comm_to_compute(model.hidden, model.layer_params, t, ps.DEVICES[d], ps.LINKS[x])  # markdown-exec: hide
                 if t <= per_node or "nvlink" not in x else None for t in degrees]  # markdown-exec: hide
          for name, (d, x) in setups.items()}  # markdown-exec: hide
svg = ratio_lines(degrees, series, title=f"{model.name}：TP 每层 all-reduce ÷ 每层 GEMM", xlabel="TP 度",  # markdown-exec: hide
                  salt="tp-roofline-chart")  # markdown-exec: hide
at = degrees.index(per_node)  # markdown-exec: hide
print(figure_html(svg, f"{model.name} 用 TP{per_node}：节点内 NVLink3 上比值 {series['A100 · NVLink3'][at]:.2f}，"  # markdown-exec: hide
                       f"同样的 TP{per_node} 走 IB HDR 是 {series['A100 · IB HDR'][at]:.1f}，通信比 GEMM 还长：TP 留在节点内"))  # markdown-exec: hide
