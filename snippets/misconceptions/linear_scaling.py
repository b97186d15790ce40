# Misconception 4: "one node gives X tokens/s, so N nodes give N·X". Llama-2 13B, global batch 256, 8 A100s per
# node; at each size the plan search's best plan, decomposed, on two interconnects between nodes.
import parallelsel as ps
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.tables import fmt_rate, folded_html, markdown_table
from parallelsel.render.line_charts import curves
from parallelsel.core.search import search
import markdown  # markdown-exec: hide
from parallelsel.render.reasons import plan_label

work = ps.Workload(ps.MODELS["llama2-13b"], global_batch=256)
device, intra = ps.DEVICES["a100-80gb"], ps.LINKS["nvlink3"]
inters = {"25GbE": ps.LINKS["eth-25g"], "IB HDR": ps.LINKS["ib-hdr"]}
node_counts = (1, 2, 4, 8, 16, 32, 64)
gpus = [8 * n for n in node_counts]
share, rows = {}, []
for short, inter in inters.items():
    share[short] = []
    for nodes in node_counts:
        cluster = ps.Cluster(device, nodes=nodes, gpus_per_node=8, intra=intra, inter=inter)
        best = search(work, cluster, top=1).best
        st = best.estimate.step
        if nodes == 1:
            one_node = st.tokens_per_s              # the single-node measurement the promise is built on
        share[short].append(st.tokens_per_s / (one_node * nodes))
        if short == "25GbE":
            rows.append([cluster.gpus, plan_label(best.plan), f"{st.compute / st.total:.0%}",
                         f"{st.communication / st.total:.0%}", f"{st.bubble / st.total:.0%}", f"{share[short][-1]:.0%}"])
print(markdown.markdown(  # markdown-exec: hide
    f"拓扑：每节点 8 张 {device.name}，节点内 {intra.name}（每卡 {fmt_rate(intra.bandwidth)}）；节点之间先用 "
    f"{inters['25GbE'].name}（每卡 {fmt_rate(inters['25GbE'].bandwidth)}），再换成 {inters['IB HDR'].name}"
    f"（每卡 {fmt_rate(inters['IB HDR'].bandwidth)}）对照。{work.model.name}，全局批量 {work.global_batch}。",
    extensions=["tables"]))
print(folded_html("深入：25GbE 时各规模的最佳方案与步时分解", markdown.markdown(  # markdown-exec: hide
    markdown_table(["GPU 数", "最佳方案", "计算", "暴露的通信", "气泡", "估计 / 线性承诺"], rows, align="rlrrrr"),
    extensions=["tables"])))
svg = curves(gpus, {f"节点间 {k}": v for k, v in share.items()}, title=f"{work.model.name}：实际吞吐占线性承诺的比例",
             xlabel="GPU 数", ylabel="估计 ÷ 线性承诺", salt="mis-linear-scaling", logx=2, percent=True,
             ylim=(0, 1.05), xticks=[(g, str(g)) for g in gpus], references={"线性承诺": 1.0})
print(figure_html(svg, f"纵轴是线性刻度的比例：{node_counts[-1] * 8} 卡时，25GbE 只剩 {share['25GbE'][-1]:.0%}，"  # markdown-exec: hide
                       f"IB HDR 还有 {share['IB HDR'][-1]:.0%}；差距全部来自节点间链路"))  # markdown-exec: hide
