# Exercise: at P=1024, B=512, what does the interleaved schedule (v=2) buy back, and what does it cost?
import parallelsel as ps
from parallelsel.estimate import scaling_efficiency
from parallelsel.render.tables import fmt_bytes, fmt_pct, fmt_time, markdown_table

cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=128, gpus_per_node=8,
                     intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
workload = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512)
plain = ps.Plan(dp=16, tp=8, pp=8, sp=True, zero=1, recompute="selective")
rows = []
for plan in (plain, plain.with_(schedule="interleaved", chunks=2)):
    pt = scaling_efficiency(workload, [plan], cluster)[0]
    e = pt.estimate
    pp_time = sum(t.time for t in e.traffic if t.strategy == "PP")
    rows.append([plan.label().split(" · ")[-1], fmt_pct(pt.efficiency), fmt_time(e.step.bubble), fmt_time(pp_time),
                 fmt_bytes(e.memory.activations), fmt_bytes(e.memory.total)])
print(markdown_table(["调度", "E(P)", "每步气泡", "每步 PP 发送", "首段激活", "每卡总内存"], rows, align="lrrrrr"))
