# E(P) for the same TP8 x PP8 layout with a larger global batch, and with an interleaved schedule.
import parallelsel as ps
from parallelsel.core.estimate import scaling_efficiency
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.line_charts import curves  # markdown-exec: hide

cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=128, gpus_per_node=8,
                     intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
model = ps.MODELS["llama3-70b"]
base = [ps.Plan(dp=d, tp=8, pp=8, sp=True, zero=1, recompute="selective") for d in (1, 2, 4, 8, 16)]
V, B, B_LARGE = 2, 512, 2048
interleaved = [p.with_(schedule="interleaved", chunks=V) for p in base]

lines = {
    f"B={B}，1F1B": scaling_efficiency(ps.Workload(model, global_batch=B), base, cluster),
    f"B={B_LARGE}，1F1B": scaling_efficiency(ps.Workload(model, global_batch=B_LARGE), base, cluster),
    f"B={B}，交错 1F1B（v={V}）": scaling_efficiency(ps.Workload(model, global_batch=B), interleaved, cluster),
}
assert all(pt.estimate.fits for pts in lines.values() for pt in pts)
gpus = [pt.gpus for pt in next(iter(lines.values()))]

svg = curves(gpus, {k: [pt.efficiency for pt in v] for k, v in lines.items()},  # markdown-exec: hide
             title=f"{model.name}，TP{base[0].tp}×PP{base[0].pp}，DP 从 {base[0].dp} 增到 {base[-1].dp}：扩展效率 E(P)", xlabel="GPU 数 P（对数刻度）",  # markdown-exec: hide
             ylabel="扩展效率 E(P)", percent=True, logx=2, ylim=(0, 1), salt="scaling-curve")  # markdown-exec: hide
print(figure_html(svg, "E(P) 随 P 下降的速度取决于全局批量和调度：批量更大或改用交错调度，同样的 P 下 E(P) 更高"))  # markdown-exec: hide
