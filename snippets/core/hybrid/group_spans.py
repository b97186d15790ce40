# Which groups leave the node, which link each dimension's traffic crosses, and how often it runs.
import parallelsel as ps
from parallelsel.core.estimate import estimate
from parallelsel.render.placement import group_spans
from parallelsel.render.tables import fmt_size, fmt_time, folded, markdown_table

cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=16, gpus_per_node=8,
                     intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
workload = ps.Workload(ps.MODELS["gpt3-175b"], global_batch=512)
print(f"{workload.model.name}，{cluster.gpus} × {cluster.device.name}，全局批量 {workload.global_batch}：\n")
rows, more = [], []
for plan in (ps.Plan(dp=4, tp=8, pp=4, zero=1, sp=True, recompute="selective"),
             ps.Plan(dp=2, tp=16, pp=4, zero=1, sp=True, recompute="selective")):
    spans = {s.dim: s for s in group_spans(plan, cluster)}
    e = estimate(workload, plan, cluster)
    assert e.fits, e.reasons
    traffic = e.traffic
    for dim in ("TP", "DP", "PP"):
        # ZeRO-1 shards the optimizer but its gradient traffic still runs over the DP group.
        items = [t for t in traffic if t.strategy == dim or (dim == "DP" and t.strategy == "ZeRO")]
        if not items:
            continue
        s = spans[dim]
        label = f"TP{plan.tp}×DP{plan.dp}×PP{plan.pp}"
        rows.append([label, dim, f"{s.crossing}/{s.groups}", items[0].link, f"{sum(t.calls for t in items):,.0f}",
                     fmt_time(sum(t.time for t in items))])
        more.append([label, dim, s.size, fmt_size(items[0].nbytes)])
print(markdown_table(["放法", "维度", "跨节点的组", "走的链路", "每步调用次数", "每步通信时间"], rows, align="llrlrr"))
print(folded("其余各列：组大小、每次数据量", markdown_table(["放法", "维度", "组大小", "每次数据量"], more, align="llrr")))
