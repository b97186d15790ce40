# Misconception 4: "one node gives X tokens/s, so N nodes give N·X". Llama-2 13B, global batch 256,
# 8 A100s per node joined by 25 GbE; at each size the plan search's best plan, decomposed.
import parallelsel as ps
from parallelsel.render.lesson_charts import scaling_promise
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.tables import markdown_table
from parallelsel.search import search
import markdown  # markdown-exec: hide

work = ps.Workload(ps.MODELS["llama2-13b"], global_batch=256)
gpus, promised, estimated, rows = [], [], [], []
for nodes in (1, 2, 4, 8, 16, 32, 64):
    cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=nodes, gpus_per_node=8, inter=ps.LINKS["eth-25g"])
    best = search(work, cluster, top=1).best
    st = best.estimate.step
    if not gpus:
        one_node = st.tokens_per_s                  # the measurement the promise is built on
    gpus.append(cluster.gpus)
    promised.append(one_node * nodes)
    estimated.append(st.tokens_per_s)
    rows.append([cluster.gpus, best.plan.label(), f"{st.compute / st.total:.0%}", f"{st.communication / st.total:.0%}",
                 f"{st.bubble / st.total:.0%}", f"{st.tokens_per_s / (one_node * nodes):.0%}"])
table = markdown_table(["GPU 数", "最佳方案", "计算", "暴露的通信", "气泡", "估计 / 线性承诺"], rows, align="rlrrrr")
svg = scaling_promise(gpus, promised, estimated, title=f"{work.model.name}，global batch {work.global_batch}：线性承诺与分解后的估计",
                      salt="mis-linear-scaling")
print(markdown.markdown(table, extensions=["tables"]))  # markdown-exec: hide
print(figure_html(svg, "以单节点吞吐按卡数线性外推的承诺（虚线）与逐步分解后的估计（实线）；百分比为估计占承诺的比例"))  # markdown-exec: hide
