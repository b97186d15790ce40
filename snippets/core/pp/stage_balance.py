# Llama-3 8B (vocabulary 128,256) split evenly by layers into 4 stages: the last stage also runs the output layer.
import parallelsel as ps
from parallelsel import memory, pipeline
from parallelsel.render.tables import fmt_count, fmt_pct, markdown_table
from parallelsel.render.pipeline_charts import gantt, trace_links
from parallelsel.render.style import figure_html  # markdown-exec: hide

model, p, m = ps.MODELS["llama3-8b"], 4, 16
flops = model.stage_forward_flops((model.layers // p,) * p)  # forward FLOPs per token; logits on the last stage
forward = [f / flops[0] for f in flops]  # relative to a stage with layers only

rows = []
for i in range(p):
    dense, _ = memory.stage_params(model, pp=p, stage=i)
    rows.append([i, fmt_count(dense), f"{flops[i] / 1e9:.2f}", f"{forward[i]:.2f}"])
print(markdown_table(["段", "参数", "前向 GFLOP/token", "相对耗时"], rows, align="rrrr"))

even = pipeline.simulate(pipeline.schedule("1f1b", p, m), forward=1.0, backward=2.0)
uneven = pipeline.simulate(pipeline.schedule("1f1b", p, m), forward=forward, backward=[2 * f for f in forward])
print(f"\n1F1B，p={p}，m={m}：均衡时气泡占比 {fmt_pct(even.bubble_fraction)}，按上表不均衡时 {fmt_pct(uneven.bubble_fraction)}；"
      f"步时从 {even.makespan:.1f} 变为 {uneven.makespan:.1f}（单位：一个均衡段的前向）。")
svg = gantt(uneven, salt="pp-imbalance", xlabel="时间（单位：均衡段的一次前向）", title=f"{model.name}，末段多了输出层：气泡占比 {fmt_pct(uneven.bubble_fraction)}")  # markdown-exec: hide
print(figure_html(svg, f"{model.name} 按层均分为 {p} 段的 1F1B 甘特图：末段多算输出层，其他段都要等它"))  # markdown-exec: hide
print(trace_links([uneven], prefix="llama3-8b-imbalance-"))
