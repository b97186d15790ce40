# Step-timeline decomposition per P (global batch fixed at 512): where the time of each step goes.
import parallelsel as ps
from parallelsel.core.estimate import scaling_efficiency
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.units import fmt_pct  # markdown-exec: hide
from parallelsel.render.step_charts import scaling_parts, step_bars

cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=128, gpus_per_node=8,
                     intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
workload = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512)
plans = [ps.Plan(dp=d, tp=8, pp=8, sp=True, zero=1, recompute="selective") for d in (1, 2, 4, 8, 16)]
points = scaling_efficiency(workload, plans, cluster)

# Split each step: the losses are recompute, exposed communication and bubble; the rest is useful compute.
parts = scaling_parts(points)
svg = step_bars([f"P={pt.gpus}\nm={pt.plan.microbatches(workload)}" for pt in points], parts,  # markdown-exec: hide
                notes=[f"E(P) {fmt_pct(pt.efficiency, 0)}" for pt in points], shares=True,  # markdown-exec: hide
                ylabel="GPU 数 P 与每条流水线的微批次数 m",  # markdown-exec: hide
                title=f"每步时间分解：计算、重算、暴露的通信、流水线气泡（B={workload.global_batch} 固定）", salt="scaling-timeline")  # markdown-exec: hide
print(figure_html(svg, "每步时间分解：P 增大时计算时间按 1/P 缩短，气泡因微批次变少而占比上升，E(P) 随之下降"))  # markdown-exec: hide
