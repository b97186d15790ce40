# GPT-3 175B, one 2048-token sequence: TP communication per layer (forward + backward) vs the layer's compute.
import parallelsel as ps
from parallelsel import comm
from parallelsel.estimate import DEFAULT_EFFICIENCY
from parallelsel.render.tables import fmt_pct, fmt_time, markdown_table
from parallelsel.render.comm_charts import time_vs_degree  # markdown-exec: hide
from parallelsel.render.style import figure_html  # markdown-exec: hide

model, device = ps.MODELS["gpt3-175b"], ps.DEVICES["a100-80gb"]
work = ps.Workload(model, global_batch=1)  # micro-batch b=1, s=2048
degrees = [2, 4, 8, 16]
links = {"NVLink3（节点内）": ps.LINKS["nvlink3"], "PCIe4 x16": ps.LINKS["pcie4"], "IB HDR（跨节点）": ps.LINKS["ib-hdr"]}

# Compute of one layer, forward + backward, split over the TP group (FLOPs from the model, achieved rate assumed).
fw = model.forward_flops_per_token()
layer_flops = 3 * (fw["layers"] + fw["attention"]) / model.layers * work.tokens
compute = [layer_flops / (t * device.peak_flops * DEFAULT_EFFICIENCY) for t in degrees]

print(f"{model.name}，一条 {work.seq_len} token 的序列（微批次 {work.global_batch}）；每层计算按 {device.name} 峰值 × "
      f"假定效率 {DEFAULT_EFFICIENCY:.0%} 估算。\n")
comm_time = {}
for name, link in links.items():
    row = []
    for t in degrees:
        if link is ps.LINKS["nvlink3"] and t > 8:
            row.append(None)  # an NVLink3 domain is one 8-GPU node
            continue
        cluster = ps.Cluster(device, nodes=1, gpus_per_node=t, intra=link)  # the TP group sits behind `link`
        items = [it for it in comm.traffic(work, ps.Plan(tp=t), cluster) if it.strategy == "TP"]
        row.append(sum(it.time for it in items) / model.layers)
    comm_time[name] = row

rows = [[t, fmt_time(compute[i])] + [f"{fmt_time(v[i])}（{fmt_pct(v[i] / compute[i], 0)}）" if v[i] is not None else "—"
                                     for v in comm_time.values()] for i, t in enumerate(degrees)]
print(markdown_table(["TP 度 t", "每层计算"] + [f"{k} 通信（占计算）" for k in links], rows, align="rr" + "r" * len(links)))
svg = time_vs_degree(degrees, comm_time, references={f"每层计算（{device.name}，假定效率）": compute}, salt="tp-layer-time",  # markdown-exec: hide
                     xlabel="TP 度 t", title=f"{model.name} 每层 TP 通信（4 次 all-reduce）与每层计算")  # markdown-exec: hide
print(figure_html(svg, f"{model.name} 每层前向加反向的 TP all-reduce 时间（毫秒，对数轴）随 TP 度和链路变化；虚线为每层计算时间，随 t 成反比下降"))  # markdown-exec: hide
