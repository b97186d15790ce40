# Checking a vendor's quoted throughput: the MFU it implies, against the physical ceiling and the library's estimate.
import parallelsel as ps
from parallelsel.render.lesson_charts import quote_check
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.tables import markdown_table
from parallelsel.search import search
import markdown  # markdown-exec: hide

work = ps.Workload(ps.MODELS["llama2-70b"], global_batch=512)
cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8, gpus_per_node=8)
QUOTES = {"报价 A": 18_000, "报价 B": 30_000, "报价 C": 60_000}      # tokens/s for this model on these 64 GPUs

flops = work.model.model_flops_per_token(work.seq_len)                # model FLOPs per token (no recompute)
peak = cluster.gpus * cluster.device.peak_flops
ceiling = peak / flops                                                # tokens/s at 100% MFU: no schedule beats it
est = search(work, cluster, top=1).best.estimate.step


def verdict(tps):
    if tps > ceiling:
        return "不可能：超过峰值算力"
    if tps > est.tokens_per_s:
        return "高于估计：追问序列长度、精度、是否按 padding 计 token、硬件与拓扑"
    return "与估计相符"


rows = [[k, f"{v:,}", f"{v * flops / peak:.0%}", verdict(v)] for k, v in QUOTES.items()]
rows.append(["本库估计", f"{est.tokens_per_s:,.0f}", f"{est.mfu:.0%}", "分解：计算 + 暴露的通信 + 气泡"])
table = markdown_table(["来源", "tokens/s", "隐含的 MFU", "判断"], rows, align="lrrl")
svg = quote_check(list(QUOTES) + ["本库估计"], [v / 1e3 for v in QUOTES.values()] + [est.tokens_per_s / 1e3],
                  ceiling / 1e3, title=f"{work.model.name}，{cluster.gpus} × {cluster.device.name}：报价与上限",
                  xlabel="吞吐（千 token/s）", ceiling_label="MFU = 100% 的上限", salt="scn-quote")
print(markdown.markdown(f"每 token 的模型计算量 {flops / 1e9:,.0f} GFLOP，{cluster.gpus} 卡峰值合计 "
                        f"{peak / 1e15:,.1f} PFLOP/s，上限 {ceiling:,.0f} tokens/s\n\n" + table, extensions=["tables"]))  # markdown-exec: hide
print(figure_html(svg, f"{len(QUOTES)} 份报价与本库估计的吞吐，虚线为全部算力都变成模型计算时的上限；红色条超过上限，不可能实现"))  # markdown-exec: hide
