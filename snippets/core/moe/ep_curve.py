# Dispatch + combine all-to-all per MoE layer and micro-batch (forward) against the EP degree, beside expert compute.
import parallelsel as ps
from parallelsel import comm
from parallelsel.render.comm_charts import time_vs_degree
from parallelsel.render.style import figure_html  # markdown-exec: hide

model = ps.MODELS["mixtral-8x7b"]
device, efficiency, gpus_per_node = ps.DEVICES["h100-sxm-80gb"], 0.5, 8
b, s = 1, model.seq_len
msg = b * s * model.hidden * model.top_k * 2                       # bf16, top_k copies of each token
degrees = [n for n in (2, 4, 8, 16, 32, 64) if model.experts % n == 0]   # EP must divide the expert count
series = {
    "NVLink4（EP 组在节点内）": [2 * comm.collective_time("all-to-all", msg, n, ps.LINKS["nvlink4"]) if n <= gpus_per_node else None
                               for n in degrees],
    "InfiniBand NDR（EP 组跨节点）": [2 * comm.collective_time("all-to-all", msg, n, ps.LINKS["ib-ndr"]) for n in degrees],
}
# Each GPU runs its share of expert work: on average b*s*top_k token-expert pairs, 2 FLOPs per weight each.
expert_fwd = 2 * model.expert_params * b * s * model.top_k / (device.peak_flops * efficiency)
svg = time_vs_degree(degrees, series, references={"该层专家前向计算（每卡）": expert_fwd}, xlabel="专家并行度 EP",  # markdown-exec: hide
                     title=f"{model.name}：每层每个微批次前向的两次 all-to-all", salt="moe-ep-curve")  # markdown-exec: hide
print(figure_html(svg, "EP 组在节点内时，all-to-all 远小于专家计算；一旦跨节点，它与专家计算同一量级，而且在关键路径上"))  # markdown-exec: hide
