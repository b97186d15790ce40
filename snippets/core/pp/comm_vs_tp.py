# GPT-3 175B, one micro-batch (b=1, s=2048): what one GPU communicates under PP vs TP of the same degree, per link.
import parallelsel as ps
from parallelsel import comm
from parallelsel.render.tables import fmt_bytes, fmt_time, markdown_table
from parallelsel.render.comm_charts import grouped_time_bars  # markdown-exec: hide
from parallelsel.render.style import figure_html  # markdown-exec: hide

model, device = ps.MODELS["gpt3-175b"], ps.DEVICES["a100-80gb"]
work = ps.Workload(model, global_batch=1)
# Every group inside one NVLink node, or every rank on its own node (the group crosses IB).
clusters = {"NVLink3": ps.Cluster(device, nodes=1, gpus_per_node=8), "IB HDR": ps.Cluster(device, nodes=8, gpus_per_node=1)}

groups, times, rows = [], {"TP": [], "PP": []}, []
for link, cluster in clusters.items():
    for d in (4, 8):
        groups.append(f"{link}，度 {d}")
        for name, plan in (("TP", ps.Plan(tp=d)), ("PP", ps.Plan(pp=d))):
            items = [t for t in comm.traffic(work, plan, cluster) if t.strategy == name]
            sent = sum(t.sent for t in items)
            time = sum(t.time for t in items)
            times[name].append(time)
            calls = sum(t.calls for t in items)  # (PP: the forward sends and the backward ones)
            rows.append([link, d, name, f"{items[0].op} × {calls:g}", fmt_bytes(sent, "MiB", digits=0), fmt_time(time)])
print(markdown_table(["链路", "并行度", "策略", "每个微批次的通信", "每卡发送量", "通信时间"], rows, align="lrllrr"))
svg = grouped_time_bars(groups, times, salt="pp-vs-tp", title=f"{model.name} 一个微批次：PP 与 TP 每卡通信时间")  # markdown-exec: hide
print(figure_html(svg, f"{model.name} 一个微批次中每卡的通信时间（毫秒，对数轴）：PP 的段间 p2p 与同等并行度 TP 的 all-reduce，分别在 {' 与 '.join(clusters)} 上"))  # markdown-exec: hide
