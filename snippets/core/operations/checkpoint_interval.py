# How often to checkpoint: Young's first-order optimum T = sqrt(2 C M), with C the write time and M the job's MTBF.
import parallelsel as ps
from parallelsel import reliability as rel
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.line_charts import curves  # markdown-exec: hide

# Failure rate from Llama 3 pre-training (Dubey et al. 2024, §3.3.4), scaled to this job's GPUs.
gpus, gpus_per_node = 512, 8
job_mtbf = rel.job_mtbf(gpus)                          # a failure of any GPU stops the job
model = ps.MODELS["llama3-70b"]
saved = rel.checkpoint_bytes(model.params, ps.RECIPES["bf16-adam"])
writes = {"完整 state dict（单 rank 写）": rel.write_time(saved),
          "分片（全体并行写）": rel.write_time(saved, writers=gpus // gpus_per_node)}   # same assumptions as the table
intervals = [60 * x for x in (2, 5, 10, 20, 30, 60, 120, 240, 480)]
series = {}
for name, c in writes.items():
    t_opt = rel.young_interval(c, job_mtbf)
    waste = rel.lost_fraction(c, t_opt, job_mtbf)      # checkpoint time + expected lost work, per unit time
    series[f"{name}：最优间隔 {t_opt / 60:.0f} min，损失 {waste:.1%}"] = [rel.lost_fraction(c, t, job_mtbf) for t in intervals]
svg = curves([t / 60 for t in intervals], series, percent=True, logx=2, logy=False, ylim=(0, 0.5),  # markdown-exec: hide
             title=f"{model.name}，{gpus} 卡，作业平均 {job_mtbf / 3600:.0f} 小时故障一次：checkpoint 间隔与损失",  # markdown-exec: hide
             xlabel="checkpoint 间隔（分钟，对数刻度）", ylabel="损失的训练时间占比", salt="ops-checkpoint-interval")  # markdown-exec: hide
print(figure_html(svg, "间隔太短时写 checkpoint 的时间占比高，太长时故障后重做的工作多；写得越快，最优间隔越短、总损失越小"))  # markdown-exec: hide
