# GPT-3 175B, one 2048-token sequence: TP communication per layer (forward + backward) vs the layer's compute.
# Compute from the kernels one GPU runs at its TP shard's shapes (parallelsel.core.kernels); communication at the
# bus bandwidth each link reaches (Link.achieved).
import parallelsel as ps
from parallelsel import comm
from parallelsel.core.kernels import weight_pieces
from parallelsel.render.tables import fmt_pct, fmt_time, markdown_table
from parallelsel.render.comm_charts import time_vs_degree  # markdown-exec: hide
from parallelsel.render.style import figure_html  # markdown-exec: hide
import markdown  # markdown-exec: hide

model, device = ps.MODELS["gpt3-175b"], ps.DEVICES["a100-80gb"]
work = ps.Workload(model, global_batch=1)  # micro-batch b=1, s=2048
degrees = [1, 2, 4, 8, 16]
links = {"NVLink3（节点内）": ps.LINKS["nvlink3"], "PCIe4 x16": ps.LINKS["pcie4"], "IB HDR（跨节点）": ps.LINKS["ib-hdr"]}

# Compute of one layer on one GPU of the TP group, forward + backward: its GEMMs at the shard's shapes,
# the attention core and the memory-bound work (the four weight pieces of the layer sum to it).
compute = [sum(p.forward + p.backward for p in weight_pieces(model, 1, work.seq_len, device, tp=t)) for t in degrees]
ideal = [compute[0] / t for t in degrees]  # what 1/t of the TP1 layer would take: no small-matrix loss

comm_time = {}
for name, link in links.items():
    row = []
    for t in degrees:
        if t == 1 or (link is ps.LINKS["nvlink3"] and t > 8):
            row.append(None)  # no TP communication at t=1; an NVLink3 domain is one 8-GPU node
            continue
        cluster = ps.Cluster(device, nodes=1, gpus_per_node=t, intra=link)  # the TP group sits behind `link`
        items = [it for it in comm.traffic(work, ps.Plan(tp=t), cluster) if it.strategy == "TP"]
        row.append(sum(it.time for it in items) / model.layers)
    comm_time[name] = row

intro = (f"{model.name}，一条 {work.seq_len} token 的序列（微批次 {work.global_batch}），{device.name}。"
         f"每层计算按每卡矩阵乘的实际形状计时（kernel 模型），通信按各链路能达到的总线带宽计（出处见 `parallelsel.core.hardware.LINKS`）"
         f"（{'、'.join(f'{l.name} 为线速的 {fmt_pct(l.efficiency, 0)}' for l in links.values())}）。")
rows = [[t, fmt_time(compute[i]), f"×{compute[i] / ideal[i]:.2f}"]
        + [f"{fmt_time(v[i])}（{fmt_pct(v[i] / compute[i], 0)}）" if v[i] is not None else "—" for v in comm_time.values()]
        for i, t in enumerate(degrees)]
table = markdown_table(["TP 度 t", "每层计算", "相对 1/t"] + [f"{k} 通信（占计算）" for k in links], rows,
                       align="rrr" + "r" * len(links))
shown = degrees[1:]  # the chart starts where TP communication starts
svg = time_vs_degree(shown, {k: v[1:] for k, v in comm_time.items()}, salt="tp-layer-time",  # markdown-exec: hide
                     references={f"每层计算（{device.name}，kernel 模型）": compute[1:]},  # markdown-exec: hide
                     xlabel="TP 度 t", title=f"{model.name} 每层 TP 通信（4 次 all-reduce）与每层计算")  # markdown-exec: hide
over = {k: next((t for t, c, x in zip(degrees, compute, v) if x is not None and x > c), None) for k, v in comm_time.items()}
takeaway = (f"**要点**：t 每翻一倍，每层计算都不到减半（TP{degrees[-1]} 时是理想 1/t 的 ×{compute[-1] / ideal[-1]:.2f}，"
            f"矩阵变窄了）；通信却随 t 上升："
            + "，".join(f"在 {k} 上，t={t} 时超过计算" if t else f"在 {k} 上始终小于计算" for k, t in over.items()) + "。")
print(markdown.markdown(intro + "\n\n" + table, extensions=["tables"]))  # markdown-exec: hide
print(figure_html(svg, f"{model.name} 每层前向加反向的 TP all-reduce 时间（毫秒，对数轴）随 TP 度和链路变化；"  # markdown-exec: hide
                  "虚线为每层计算时间"))  # markdown-exec: hide
print(markdown.markdown(takeaway))  # markdown-exec: hide
