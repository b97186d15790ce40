# Ring all-reduce time against message size: flat (latency-bound) for small messages, linear for large ones.
import parallelsel as ps
from parallelsel import comm
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.line_charts import curves  # markdown-exec: hide

sizes = [2**k for k in range(10, 33, 2)]                      # 1 KiB .. 4 GiB
lines = [("nvlink4", 8, "节点内"), ("ib-ndr", 8, "跨节点"), ("ib-ndr", 64, "跨节点"), ("eth-100g", 8, "跨节点")]
series = {f"{ps.LINKS[key].name}，{n} 卡（{where}）": [comm.collective_time("all-reduce", s, n, ps.LINKS[key]) for s in sizes]
          for key, n, where in lines}
ticks = [(s, f"{s // 2**20} MiB" if s >= 2**20 else f"{s // 2**10} KiB") for s in sizes[::2]]  # markdown-exec: hide
ticks = [(s, lab.replace("1024 MiB", "1 GiB").replace("4096 MiB", "4 GiB")) for s, lab in ticks]  # markdown-exec: hide
svg = curves(sizes, series, title="ring all-reduce 用时与消息大小（alpha-beta 模型）", xlabel="消息大小（对数刻度）",  # markdown-exec: hide
             ylabel="用时（s，对数刻度）", logx=2, logy=True, xticks=ticks, salt="comm-time-vs-size")  # markdown-exec: hide
print(figure_html(svg, "小消息时各条线都是平的，用时由延迟决定；大消息时用时与大小成正比，由带宽决定，此时链路带宽之比就是用时之比"))  # markdown-exec: hide
