# At P=1024 and B=512: other layouts of the same GPUs, each against the P=64 reference of the E(P) series.
import parallelsel as ps
from parallelsel.core.estimate import scaling_efficiency
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.step_charts import scaling_parts, step_bars
from parallelsel.render.reasons import plan_label

cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=128, gpus_per_node=8,
                     intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
workload = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512)
common = dict(sp=True, recompute="selective")
plans = [
    ps.Plan(dp=16, tp=8, pp=8, zero=1, **common),
    ps.Plan(dp=16, tp=8, pp=8, zero=1, schedule="interleaved", chunks=2, **common),
    ps.Plan(dp=64, tp=8, pp=2, zero=1, **common),
    ps.Plan(dp=128, tp=8, zero=3, **common),
    ps.Plan(dp=512, tp=2, zero=3, sp=True, recompute="full"),
    ps.Plan(dp=32, tp=8, pp=4, zero=1, **common),
]
reference = ps.Plan(dp=1, tp=8, pp=8, zero=1, **common)   # P=64, the smallest configuration of the E(P) series above
points = scaling_efficiency(workload, [reference, *plans], cluster)[1:]   # E(P) against P=64, as above
assert all(pt.estimate.fits for pt in points) and all(pt.reference == reference.gpus for pt in points)
labels = [f"{plan_label(pt.plan).replace(' · mb1', '')}\nE={pt.efficiency:.1%}" for pt in points]
parts = scaling_parts(points)          # useful compute, recompute, exposed communication, bubble (seconds)
svg = step_bars(labels, parts, title=f"P={cluster.gpus}、B={workload.global_batch} 时 {len(plans)} 种放法的一步时间线", salt="scaling-alternatives")  # markdown-exec: hide
best = max(points, key=lambda pt: pt.efficiency)
ref = ps.estimate(workload, reference, cluster).step
ref_exposed = ref.communication / ref.total   # the reference layout's own exposed communication
beats = best.efficiency > 1
verdict = (f"超过了 P={reference.gpus} 的参照：参照放法（{plan_label(reference).replace(' · mb1', '')}）自己就有 "
           f"{ref_exposed:.0%} 的时间是暴露的通信，E(P) 只是和这个参照比" if beats else
           f"没有一种超过 P={reference.gpus} 时")
print(figure_html(svg, f"同样 {cluster.gpus} 张卡、同样的全局批量，换放法把损失在气泡、通信和重算之间挪动；"  # markdown-exec: hide
                       f"最好的是 {plan_label(best.plan).replace(' · mb1', '')}（E={best.efficiency:.1%}），{verdict}"))  # markdown-exec: hide
# What the caption claims when a layout beats the reference: it loses less of its step to exposed communication.
assert not beats or best.estimate.step.communication / best.estimate.step.total < ref_exposed
