# GPT-3 175B on 8 nodes x 8 A100: TP=8 inside each node, PP=8 across nodes, 1F1B with m=16 micro-batches of one sequence.
import parallelsel as ps
from parallelsel import pipeline
from parallelsel.core.estimate import estimate
from parallelsel.render.tables import fmt_bytes, fmt_pct, fmt_time
from parallelsel.render.pipeline_charts import gantt, trace_links
from parallelsel.render.style import figure_html  # markdown-exec: hide

model = ps.MODELS["gpt3-175b"]
cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8, gpus_per_node=8)
work = ps.Workload(model, global_batch=16)
plan = ps.Plan(tp=8, pp=8, sp=True, recompute="selective", micro_batch=1)
e = estimate(work, plan, cluster)
m = plan.microbatches(work)

# Per stage and micro-batch: forward and backward compute, each with half of the TP collectives.
forward, backward = e.pass_times()
p2p = next(t for t in e.traffic if t.strategy == "PP")  # a forward send; the backward ones are as large

ms = 1e3  # the Gantt chart is drawn in milliseconds
tl = pipeline.simulate(pipeline.schedule("1f1b", plan.pp, m), forward=forward * ms, backward=backward * ms,
                       p2p=p2p.time / p2p.calls * ms)
print(f"{model.name}，{cluster.nodes} 个节点 × {cluster.gpus_per_node} 张 {cluster.device.name}：节点内 TP={plan.tp}，"
      f"节点间 PP={plan.pp}，1F1B，每条流水线 {m} 个微批次（每个 {plan.micro_batch} 条序列）。\n")
print(f"每卡内存 {fmt_bytes(e.memory.total)}（{'放得下' if e.fits else '放不下'}）；每段每个微批次：前向 {fmt_time(forward)}，"
      f"反向 {fmt_time(backward)}；段间每次 p2p 发送 {fmt_bytes(p2p.nbytes, 'MiB')}，耗时 {fmt_time(p2p.time / p2p.calls)}（{p2p.link}）。")
print(f"步时 {fmt_time(tl.makespan / ms)}；气泡占比：模拟 {fmt_pct(tl.bubble_fraction)}，"
      f"公式 (p-1)/(m+p-1) = {fmt_pct(pipeline.bubble_fraction(plan.pp, m))}。")
svg = gantt(tl, salt="pp-gantt", xlabel="时间（ms）")  # markdown-exec: hide
print(figure_html(svg, f"段间一次 p2p 只要 {fmt_time(p2p.time / p2p.calls)}，每段每个微批次的计算却要 "  # markdown-exec: hide
                       f"{fmt_time(forward + backward)}；一步里 {fmt_pct(tl.bubble_fraction)} 的时间是气泡（灰色）："  # markdown-exec: hide
                       "PP 的代价在等待，不在通信"))  # markdown-exec: hide
print(trace_links([tl], prefix="gpt3-175b-"))  # one time unit is 1 ms here: the chart is drawn in ms
