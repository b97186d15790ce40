# Llama 3 405B on 16 pipeline stages (126 layers): the even split does not exist; Meta gives the first and last
# stage one layer fewer (Dubey et al. 2024 §3.3.2). The library prices each stage's own layers.
import parallelsel as ps
from parallelsel import pipeline
from parallelsel.core.plan import balanced_split, megatron_split, torchtitan_split
from parallelsel.render.tables import fmt_pct, markdown_table
from parallelsel.render.pipeline_charts import gantt, trace_links
from parallelsel.render.style import figure_html  # markdown-exec: hide

model = ps.MODELS["llama3-405b"]
w = ps.Workload(model, global_batch=2048, seq_len=8192)
c = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=2048)
split = megatron_split(model.layers, 16, first=7, last=7)  # --decoder-first/last-pipeline-num-layers 7
fw = model.forward_flops_per_token()
head = fw["logits"] / ((fw["layers"] + fw["attention"]) / model.layers)  # the output layer, in layers' worth of FLOPs
same = {True: "相同", False: "不同"}
print(f"{model.layers} 层分 16 段：Megatron-Core 首末段各 7 层得到 {'/'.join(map(str, split))}；"
      f"torchtitan 默认（嵌入、输出各算一层）的切分与它{same[torchtitan_split(model.layers, 16) == split]}；"
      f"输出层约合 {head:.2f} 层的 FLOPs，按它求“最慢段最快”的切分与它{same[balanced_split(model.layers, 16, head=head) == split]}。")

plan = ps.Plan(dp=128, tp=8, pp=16, sp=True, zero=1, recompute="full", stage_layers=split)
e = ps.estimate(w, plan, c)
work = [f + b for f, b in e.step.stages]
slowest = max(work)
rows = [[i, split[i], f"{work[i] * 1e3:.0f}", fmt_pct(work[i] / slowest)] for i in (0, 1, 14, 15)]
print("\n" + markdown_table(["段", "层数", "一个微批次的前向+反向（ms）", "相对最慢段"], rows, align="rrrr"))
m = plan.microbatches(w)
forward, backward = e.stage_pass_times()
tl = pipeline.simulate(pipeline.schedule("1f1b", 16, m), forward=forward, backward=backward)
where = {0: "首段", 15: "末段"}.get(work.index(slowest), f"中间段（{split[work.index(slowest)]} 层）")
print(f"\n最慢的是{where}，它定下整条流水线的节奏。1F1B、m={m}：事件模拟的气泡占比 {fmt_pct(tl.bubble_fraction)}，"
      f"估算的步时 {e.step.total:.2f} s，其中气泡 {e.step.bubble:.2f} s。")
svg = gantt(tl, salt="pp-uneven-405b", xlabel="时间（秒）", title=f"{model.name}，16 段 {'/'.join(map(str, split[:2]))}…/{split[-1]} 层：气泡占比 {fmt_pct(tl.bubble_fraction)}")  # markdown-exec: hide
print(figure_html(svg, f"{model.name} 按 Meta 的不均匀切分分为 16 段的 1F1B 甘特图：首末段各少一层"))  # markdown-exec: hide
print(trace_links([tl], prefix="llama3-405b-uneven-", time_unit=1.0))  # the timeline is in seconds
