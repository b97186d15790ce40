# The seed's "step 时序" for DP, FSDP, TP and PP on one workload: compute, each collective, what overlaps, what waits.
# --8<-- [start:setup]
import parallelsel as ps
from parallelsel.render.step_timeline_charts import step_timelines
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.tables import fmt_count, fmt_time
from parallelsel.core.roofline import dp_critical_tokens, fsdp_critical_tokens
from parallelsel.course.steptrace import step_trace
from parallelsel.render.reasons import plan_label
from parallelsel.core.placement import link_for

model = ps.Transformer(layers=32, hidden=2560, heads=32, seq_len=2048, vocab=50304)   # a 2.7B GPT-style model
work = ps.Workload(model, global_batch=64)
cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=2, gpus_per_node=8)           # NVLink3 inside, IB HDR between
plans = {
    "DP": ps.Plan(dp=16, micro_batch=1, recompute="selective"),
    "FSDP": ps.Plan(dp=16, zero=3, micro_batch=1, recompute="selective"),
    "TP": ps.Plan(dp=4, tp=4, micro_batch=2, recompute="selective"),
    "PP": ps.Plan(dp=4, pp=4, micro_batch=1, recompute="selective"),
}
estimates = {name: ps.estimate(work, plan, cluster) for name, plan in plans.items()}
assert all(e.fits for e in estimates.values()), {n: e.reasons for n, e in estimates.items() if not e.fits}
traces = {name: step_trace(e) for name, e in estimates.items()}


def comm_split(name: str) -> str:
    """One line: each strategy's communication on this plan, hidden vs exposed, from the trace."""
    parts = {}
    for seg in traces[name].lane("comm"):
        hidden, shown = parts.get(seg.strategy, (0.0, 0.0))
        parts[seg.strategy] = (hidden + seg.duration, shown) if seg.kind == "overlapped" else (hidden, shown + seg.duration)
    return "；".join(f"{s} 通信 {fmt_time(h + e)}，" + (f"其中被盖住 {fmt_time(h)}、暴露 {fmt_time(e)}" if h > 0 else "全部在关键路径上")
                    for s, (h, e) in parts.items())


def roofline_note(name: str) -> str:
    """DP/FSDP only: this plan's tokens per GPU against the roofline threshold of its link."""
    plan = plans[name]
    link = link_for(cluster, plan.dp)
    if plan.zero == 3:
        have, need, per = plan.micro_batch * work.seq_len, fsdp_critical_tokens(cluster.device, link, plan.dp), "每个微批次"
    else:
        have, need, per = work.tokens // plan.dp, dp_critical_tokens(cluster.device, link, plan.dp), "每步"
    side = "低于" if have < need else "高于"
    return f"每卡{per} {have:,} 个 token，{side} {link.name} 上的屋顶线门槛 {need:,.0f}"


def show(names, title, salt):
    svg = step_timelines({n: traces[n] for n in names}, title=title, salt=salt)
    m = {n: plans[n].microbatches(work) for n in names}
    caption = "；".join(f"{n}（{plan_label(plans[n])}，{m[n]} 个微批次）步时 {fmt_time(traces[n].total)}" for n in names)
    print(figure_html(svg, caption))  # markdown-exec: hide
    for n in names:
        note = f"（{roofline_note(n)}）" if n in ("DP", "FSDP") else ""
        print(f"<p class=\"ps-takeaway\">{n}：{comm_split(n)}{note}。</p>")
# --8<-- [end:setup]
# --8<-- [start:dp]
show(["DP"], f"DP：{fmt_count(model.params)} 参数的模型，{cluster.gpus} 卡", "steptl-dp")
# --8<-- [end:dp]
# --8<-- [start:fsdp]
show(["FSDP"], "FSDP（ZeRO-3）：每个微批次前向、反向各 gather 一次", "steptl-fsdp")
# --8<-- [end:fsdp]
# --8<-- [start:tp]
show(["TP"], "TP：每层的 all-reduce 在关键路径上", "steptl-tp")
# --8<-- [end:tp]
# --8<-- [start:pp]
show(["PP"], "PP：段间 p2p 很小，气泡在首尾", "steptl-pp")
# --8<-- [end:pp]
# --8<-- [start:all]
show(list(traces), f"同一工作负载、同样 {cluster.gpus} 卡上的四种 step 时序", "steptl-all")
# --8<-- [end:all]
