# One plan through the four derivations: memory, communication, bubble, scaling efficiency.
import parallelsel as ps
from parallelsel import memory, pipeline
from parallelsel.core.estimate import scaling_efficiency
from parallelsel.render.tables import fmt_bytes, fmt_pct, fmt_time, markdown_table
from parallelsel.render.reasons import plan_label

cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=32, gpus_per_node=8,
                     intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
workload = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512)
plan = ps.Plan(dp=4, tp=8, pp=8, sp=True, zero=1, recompute="selective")
base = plan.with_(dp=1)  # E(P) against the smallest configuration of the same pipeline (TP x PP), as on the scaling page
pt = scaling_efficiency(workload, [base, plan], cluster)[-1]
assert pt.reference == base.gpus and pt.efficiency < 1
e, m = pt.estimate, plan.microbatches(workload)
assert e.fits, e.reasons
tp = [t for t in e.traffic if t.strategy == "TP"]
tp_time = sum(t.time for t in tp)
rows = [
    ["内存", "M_model / C_device",
     f"{fmt_bytes(memory.model_states(workload.model.params).total)} / {fmt_bytes(cluster.device.memory)}"],
    ["内存", "该计划每卡（最重的段）", fmt_bytes(e.memory.total)],
    ["通信", f"TP 每步通信（{tp[0].link}，不可重叠）", fmt_time(tp_time)],
    ["气泡", f"p={plan.pp}，m={m}：(p-1)/(m+p-1)", fmt_pct(pipeline.bubble_fraction(plan.pp, m))],
    ["扩展", f"E(P)，P={plan.gpus}（基准 P={base.gpus}）", fmt_pct(pt.efficiency)],
]
print(f"{workload.model.name}，{plan_label(plan)}，B={workload.global_batch}\n")
print(markdown_table(["推导", "量", "值"], rows, align="llr"))
