# Misconception 3: stage costs from the model's FLOPs. Llama-3 8B in 4 stages of 8 layers: the last stage
# also runs the output projection over a 128K vocabulary, so it is slower and everyone waits for it.
import parallelsel as ps
from parallelsel import pipeline
from parallelsel.render.pipeline_charts import gantt, trace_links
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.tables import markdown_table
import markdown  # markdown-exec: hide

model = ps.MODELS["llama3-8b"]
P = 4
fw = model.forward_flops_per_token()
layer = (fw["layers"] + fw["attention"]) / model.layers     # forward FLOPs of one layer, per token
logits = fw["logits"]                                       # output projection, on the last stage only


def stage_costs(split):
    """Forward cost of each stage, in units of one even stage (L/P layers, no logits)."""
    unit = layer * model.layers / P
    return [f / unit for f in model.stage_forward_flops(split)]


def best_split():
    """The layer split (every stage >= 1 layer) whose slowest stage is fastest; ties: closest to even."""
    L, best = model.layers, None
    for a in range(1, L):
        for b in range(1, L - a):
            for c in range(1, L - a - b):
                split = (a, b, c, L - a - b - c)
                key = (round(max(stage_costs(split)), 9), sum(abs(n - L / P) for n in split))
                if best is None or key < best[0]:
                    best = (key, split)
    return best[1]


even = (model.layers // P,) * P
M_VALUES = (8, 32)
rows, timelines = [], {}
for label, split in (("均分层数", even), ("按计算量重新切分", best_split())):
    f = stage_costs(split)
    for m in M_VALUES:
        tl = pipeline.simulate(pipeline.schedule("1f1b", P, m), forward=f, backward=[2 * x for x in f])
        timelines[label, m] = tl
        even_cost = sum(f) / P   # the same total work spread perfectly evenly
        ideal = pipeline.simulate(pipeline.schedule("1f1b", P, m), forward=even_cost, backward=2 * even_cost).makespan
        rows.append([label, "/".join(map(str, split)), " / ".join(f"{x:.2f}" for x in f), m,
                     f"{tl.bubble_fraction:.1%}", f"{tl.makespan:.1f}", f"{tl.makespan / ideal:.2f}"])
head = f"{model.name}：一层前向 {layer / 1e9:.2f} GFLOP/token，输出层前向 {logits / 1e9:.2f} GFLOP/token"
table = markdown_table(["切分", "每段层数", "每段前向耗时（均分为 1）", "m", "气泡占比（模拟）", "步时", "步时 / 完全均衡时"],
                       rows, align="llrrrrr")
tl = timelines["均分层数", M_VALUES[0]]
svg = gantt(tl, title=f"{model.name} 均分 {P} 段（m={M_VALUES[0]}）：末段多了输出层，气泡占比 {tl.bubble_fraction:.1%}",
            salt="mis-pp-imbalance", xlabel="时间（单位：均分时一段的前向耗时）")
print(markdown.markdown(head + "\n\n" + table, extensions=["tables"]))  # markdown-exec: hide
print(figure_html(svg, f"末段多了输出层，其余 {P - 1} 段在每个微批次上都要等它，空闲（灰色）出现在稳态中间而不只在首尾"))  # markdown-exec: hide
print(trace_links([tl], prefix="llama3-8b-even-split-"))  # the same timeline as Chrome-trace JSON (Timeline.to_chrome_trace)
