# Checking a vendor's quoted throughput: the MFU it implies, against the physical ceiling, the MFU that published
# large runs reached, and the library's estimate.
import parallelsel as ps
from parallelsel.course.references import PUBLISHED_MFU
from parallelsel.render.throughput_charts import quote_check
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.tables import markdown_table
from parallelsel.core.search import search
import markdown  # markdown-exec: hide

work = ps.Workload(ps.MODELS["llama2-70b"], global_batch=512)
cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8, gpus_per_node=8)
QUOTES = {"报价 A": 4_000, "报价 B": 18_000, "报价 C": 30_000, "报价 D": 60_000}   # tokens/s for this model on these 64 GPUs

flops = work.model.model_flops_per_token(work.seq_len)                # model FLOPs per token (no recompute)
peak = cluster.gpus * cluster.device.peak_flops
ceiling = peak / flops                                                # tokens/s at 100% MFU: no schedule beats it
low, high = min(r.mfu for r in PUBLISHED_MFU), max(r.mfu for r in PUBLISHED_MFU)
est = search(work, cluster, top=1).best.estimate.step


def verdict(tps):
    mfu = tps * flops / peak
    if mfu > 1:
        return "不可能：超过峰值算力"
    if mfu > high:
        return "高于已发表的最好水平：追问序列长度、精度、是否按 padding 计 token、硬件与拓扑"
    if mfu >= low:
        return "落在已发表的实测范围内"
    return "低于已发表的实测范围：配置、互联或测法可能有问题，追问为什么这么低"


rows = [[k, f"{v:,}", f"{v * flops / peak:.0%}", verdict(v)] for k, v in QUOTES.items()]
where = "高于" if est.mfu > high else ("落在" if est.mfu >= low else "低于")
rows.append(["本库估计（未校准）", f"{est.tokens_per_s:,.0f}", f"{est.mfu:.0%}",
             f"按 kernel 速率估出的上限，{where}已发表的实测范围：见下文"])
table = markdown_table(["来源", "tokens/s", "隐含的 MFU", "判断"], rows, align="lrrl")
refs = markdown_table(["已发表的训练", "GPU", "MFU", "出处"],
                      [[r.label, f"{r.gpus:,} × {r.device}", f"{r.mfu:.1%}", r.source] for r in PUBLISHED_MFU], align="lrrl")
svg = quote_check(list(QUOTES) + ["本库估计（未校准）"], [v / 1e3 for v in QUOTES.values()] + [est.tokens_per_s / 1e3],
                  ceiling / 1e3, title=f"{work.model.name}，{cluster.gpus} × {cluster.device.name}：报价与上限",
                  xlabel="吞吐（千 token/s）", ceiling_label="MFU = 100% 的上限", salt="scn-quote")
print(markdown.markdown(f"每 token 的模型计算量 {flops / 1e9:,.0f} GFLOP，{cluster.gpus} 卡峰值合计 "  # markdown-exec: hide
                        f"{peak / 1e15:,.1f} PFLOP/s，上限 {ceiling:,.0f} tokens/s；已发表的大规模稠密训练 MFU 在 "
                        f"{low:.0%}–{high:.0%} 之间（表后列出）\n\n" + table + "\n\n" + refs, extensions=["tables"]))
print(figure_html(svg, f"{len(QUOTES)} 份报价与本库估计的吞吐，虚线为全部算力都变成模型计算时的上限；红色条超过上限，不可能实现"))  # markdown-exec: hide
in_band = [k for k, v in QUOTES.items() if low <= v * flops / peak <= high]  # markdown-exec: hide
print(markdown.markdown(f"**要点**：只有 {'、'.join(in_band)} 落在已发表的实测范围内；本库未校准的估计（MFU {est.mfu:.0%}）"  # markdown-exec: hide
                        f"也{where}这个范围，它是上限，不是预测的实测值。"))  # markdown-exec: hide
