# The GPT-3 175B pipeline above (TP=8 in a node, PP=8 across nodes, m=16) under every schedule kind: the library's
# per-stage pass times and p2p latency; a split backward is half input gradient (I), half weight gradient (W).
import parallelsel as ps
from parallelsel import pipeline
from parallelsel.core.estimate import estimate
from parallelsel.render.pipeline_charts import comparison_schedules, schedule_name, timelines_chart, trace_links
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.tables import fmt_bytes, fmt_pct, fmt_time, markdown_table

model = ps.MODELS["gpt3-175b"]
cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8, gpus_per_node=8)
work = ps.Workload(model, global_batch=16)
plan = ps.Plan(tp=8, pp=8, sp=True, recompute="selective", micro_batch=1)
e = estimate(work, plan, cluster)
m = plan.microbatches(work)
forward, backward = e.pass_times()
p2p = next(t for t in e.traffic if t.strategy == "PP")  # a forward send; the backward ones are as large
# Activations one micro-batch leaves on a rank: one layer's (TP, SP, selective recompute) times the rank's layers.
per_rank = ps.memory.activations_per_layer(model, plan.micro_batch, tp=plan.tp, sp=plan.sp, recompute=plan.recompute) \
    * model.layers // plan.pp

ms = 1e3  # timelines in milliseconds
rows, timelines = [], {}
for sched in comparison_schedules(plan.pp, m, 2, kinds=pipeline.KINDS):
    tl = pipeline.simulate(sched, forward=forward * ms, backward=backward * ms, p2p=p2p.time / p2p.calls * ms)
    timelines[sched.kind] = tl
    peaks = list(tl.peak_activations)
    rows.append([schedule_name(sched), fmt_time(tl.makespan / ms), fmt_pct(tl.bubble_fraction),
                 " / ".join(f"{x:g}" for x in peaks), fmt_bytes(max(peaks) * per_rank)])
print(f"{model.name}，PP={plan.pp}、每条流水线 {m} 个微批次；交错与 V 形调度每卡 2 段（每段 "
      f"{model.layers // (2 * plan.pp)} 层）。每个微批次在一张卡上留下的激活 {fmt_bytes(per_rank)}（不含首段嵌入与末段输出层）。\n")
print(markdown_table(
    ["调度", "步时", "气泡占比", f"每卡峰值在途激活（卡 0→{plan.pp - 1}，微批次）", "激活最多的一卡"],
    rows, align="lrrlr",
))
vee = [timelines["zbv"], timelines["dualpipev"]]
svg = timelines_chart(vee, salt="pp-v-shape", title=f"{model.name}，PP={plan.pp}、m={m}：V 形调度", xlabel="时间（ms）", labels=False)  # markdown-exec: hide
print(figure_html(svg, f"{model.name} 上的 ZBV 与 DualPipeV：{plan.pp} 张卡各持两段（卡 r 持段 r 与 {2 * plan.pp - 1}−r），{m} 个微批次，时间单位毫秒"))  # markdown-exec: hide
print(trace_links(vee, prefix="gpt3-175b-"))
