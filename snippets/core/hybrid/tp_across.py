# The step of TP8 (inside a node) vs TP16 (across two nodes) for GPT-3 175B (96 heads, so TP=16 is legal) on the same 128 GPUs.
import parallelsel as ps
from parallelsel.core.estimate import estimate
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.step_charts import step_bars  # markdown-exec: hide

cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=16, gpus_per_node=8,
                     intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
workload = ps.Workload(ps.MODELS["gpt3-175b"], global_batch=512)
plans = [ps.Plan(dp=4, tp=8, pp=4, zero=1, sp=True, recompute="selective"),
         ps.Plan(dp=2, tp=16, pp=4, zero=1, sp=True, recompute="selective")]
labels, parts = [], {"compute": [], "communication": [], "bubble": []}
for plan in plans:
    e = estimate(workload, plan, cluster)
    assert e.fits, e.reasons
    st = e.step
    labels.append(f"TP{plan.tp}×DP{plan.dp}×PP{plan.pp}\nMFU {st.mfu:.0%}")
    for k, v in st.decomposition.items():
        parts[k].append(v)
svg = step_bars(labels, parts, title=f"{workload.model.name}，{cluster.gpus} 张 {cluster.device.name}：TP 在节点内与跨节点的一步", salt="hybrid-tp-across")  # markdown-exec: hide
inside, across = parts["communication"]  # markdown-exec: hide
print(figure_html(svg, f"同样的卡数，TP{plans[1].tp} 跨出节点后每层的 TP 通信走 {cluster.inter.name}，"  # markdown-exec: hide
                       f"一步的暴露通信是 TP{plans[0].tp} 的 {across / inside:.0f} 倍"))  # markdown-exec: hide  # markdown-exec: hide
