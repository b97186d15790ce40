# The same FSDP plans as stacked bars: which part of the per-device memory stops shrinking.
import parallelsel as ps
from parallelsel import memory
from parallelsel.render.memory_charts import breakdown_parts, memory_bars
from parallelsel.render.style import figure_html  # markdown-exec: hide

model = ps.MODELS["llama3-70b"]
workload = ps.Workload(model, global_batch=1024)
device = ps.DEVICES["h100-sxm-80gb"]
Ps = [8, 32, 128, 512]
bds = [memory.breakdown(workload, ps.Plan(dp=P, zero=3, micro_batch=1, recompute="full")) for P in Ps]
svg = memory_bars([f"P={P}" for P in Ps], breakdown_parts(bds), capacities=[(device.name, device.memory)],  # markdown-exec: hide
                  title=f"{model.name}，FSDP 全分片 + 完全重算：每卡内存的组成", xlabel="FSDP 分片数 P",  # markdown-exec: hide
                  salt="memory-fsdp-parts")  # markdown-exec: hide
print(figure_html(svg, "P 增大时只有权重、梯度和优化器状态在缩小；激活、logits、gather 峰值不随 P 变化"))  # markdown-exec: hide
