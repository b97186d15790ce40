# The search funnel as a chart: Llama-3 70B on 8 nodes x 8 A100-80GB, global batch 512.
import parallelsel as ps
from parallelsel.render.search_charts import funnel
from parallelsel.render.step_charts import step_bars, step_parts
from parallelsel.render.style import figure_html

result = ps.search(ps.Workload(ps.MODELS["llama3-70b"], global_batch=512),
                   ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8, gpus_per_node=8), top=10)
print(figure_html(funnel(result, salt="search-funnel"), "方案搜索漏斗：从枚举到排名前 N，每一层剩下多少方案"))
top = result.results
print(figure_html(step_bars([f"#{r.rank} {r.plan.label()}" for r in top], step_parts([r.estimate.step for r in top]),
                            title="排名靠前的方案：每步时间的构成", salt="search-top-decomp"),
                  "排名前 N 的方案每步时间构成：计算、暴露的通信与流水线气泡"))
