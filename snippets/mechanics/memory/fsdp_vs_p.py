# FSDP (ZeRO-3) per-device memory against P: the ideal M/P, and the real total with activations and gather peak.
import parallelsel as ps
from parallelsel import memory
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.timeline_charts import curves  # markdown-exec: hide

model = ps.MODELS["llama3-70b"]
workload = ps.Workload(model, global_batch=1024)
device = ps.DEVICES["h100-sxm-80gb"]
Ps = [8, 16, 32, 64, 128, 256, 512]
ideal, with_acts, total = [], [], []
for P in Ps:
    b = memory.breakdown(workload, ps.Plan(dp=P, zero=3, micro_batch=1, recompute="full"))
    ideal.append(b.states)                                        # (2 + 2 + 12) * params / P
    with_acts.append(b.states + b.activations + b.embeddings)
    total.append(b.total)                                         # + gather peak + allocator allowance
svg = curves(Ps, {"理想 M_model/P": ideal, "加激活（完全重算）": with_acts, "再加 gather 峰值与分配器开销": total},  # markdown-exec: hide
             references={f"{device.name} 容量": device.memory}, yscale=2**30, logx=2, logy=True,  # markdown-exec: hide
             title=f"{model.name}，FSDP 全分片，每卡内存随 P 的变化", xlabel="FSDP 分片数 P（对数刻度）",  # markdown-exec: hide
             ylabel="每卡内存（GiB，对数刻度）", salt="memory-fsdp-vs-p")  # markdown-exec: hide
print(figure_html(svg, "M_model/P 随 P 一直下降，实际每卡内存却停在激活、gather 峰值和分配器开销组成的下限上"))  # markdown-exec: hide
