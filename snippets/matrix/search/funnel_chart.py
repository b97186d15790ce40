# The search funnel as a chart, and the top five plans' step time by part: Llama-3 70B on 8 nodes x 8 A100-80GB.
import parallelsel as ps
from parallelsel.render.reasons import title
from parallelsel.render.search_charts import funnel
from parallelsel.render.step_charts import STEP_PARTS, step_bars, step_parts
from parallelsel.render.style import figure_html
from parallelsel.render.tables import fmt_pct, fmt_time

result = ps.search(ps.Workload(ps.MODELS["llama3-70b"], global_batch=512),
                   ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8, gpus_per_node=8), top=10)
worst = max(result.excluded, key=result.excluded.get)  # the exclusion that drops the most plans
print(figure_html(funnel(result, salt="search-funnel"),
                  f"被排除最多的一条理由是“{title(worst, {'top': result.top})}”：{result.excluded[worst]:,} 个方案，占枚举的 "
                  f"{fmt_pct(result.excluded[worst] / result.considered)}；只有放得下的 {result.fitting:,} 个才比较步时"))


def short(rank: int, plan: ps.Plan) -> str:  # markdown-exec: hide
    """#rank and only the dimensions above 1, the ZeRO stage and the pipeline schedule: what tells the bars apart."""
    dims = [f"{name}{d}" for name, d in (("DP", plan.dp), ("TP", plan.tp), ("PP", plan.pp)) if d > 1]
    extra = ([f"ZeRO-{plan.zero}"] if plan.zero else []) + ([plan.schedule] if plan.pp > 1 else [])
    return f"#{rank} " + "·".join(dims + extra)


TOP = 5
top = result.results[:TOP]
steps = [r.estimate.step for r in top]
names = {k: STEP_PARTS[k] for k in ("compute", "communication", "bubble")}  # the chart's own part names
spread = {k: max(getattr(s, k) for s in steps) - min(getattr(s, k) for s in steps) for k in names}
widest = max(spread, key=spread.get)
print(figure_html(
    step_bars([short(r.rank, r.plan) for r in top], step_parts(steps), title=f"前 {TOP} 名的每步时间构成",
              salt="search-top-decomp", notes=[f"MFU {fmt_pct(s.mfu)}" for s in steps]),
    f"前 {TOP} 名的计算只差 {fmt_time(spread['compute'])}，步时的差别主要来自{names[widest]}"
    f"（相差 {fmt_time(spread[widest])}）：第 {TOP} 名比第 1 名慢 {fmt_pct(steps[-1].total / steps[0].total - 1)}"))
