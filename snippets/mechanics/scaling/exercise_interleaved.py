# Exercise: at the largest P of the page and its fixed B, what does the interleaved schedule buy back, and what does it cost?
# --8<-- [start:givens]
import parallelsel as ps
from parallelsel.render.reasons import plan_label

cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=128, gpus_per_node=8,
                     intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
workload = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512)
plain = ps.Plan(dp=16, tp=8, pp=8, sp=True, zero=1, recompute="selective")
V = 2                                                  # model chunks per GPU in the interleaved schedule
print(f"P={plain.gpus}，B={workload.global_batch}，计划 {plan_label(plain)}；把 1F1B 换成交错调度（v={V}）。")
# --8<-- [end:givens]
from parallelsel.core.estimate import scaling_efficiency
from parallelsel.render.tables import fmt_bytes, fmt_pct, fmt_time, markdown_table

# One common baseline for both schedules: the smallest configuration of the page's table (DP1, the same TP x PP, 1F1B).
# Each plan alone would be its own baseline and read E(P) = 100% whatever it does.
base = plain.with_(dp=1)
rows, eff = [], []
for plan in (plain, plain.with_(schedule="interleaved", chunks=V)):
    pt = scaling_efficiency(workload, [base, plan], cluster)[-1]
    assert pt.reference == base.gpus
    eff.append(pt.efficiency)
    e = pt.estimate
    assert e.fits, e.reasons
    pp_time = sum(t.time for t in e.traffic if t.strategy == "PP")
    rows.append([plan_label(plan).split(" · ")[-1], fmt_pct(pt.efficiency), fmt_time(e.step.bubble), fmt_time(pp_time),
                 fmt_bytes(e.memory.activations), fmt_bytes(e.memory.total)])
assert eff[0] < eff[1] < 1  # interleaving buys back part of the bubble, not all of it
print(f"\nE(P) 的基准：P={base.gpus} 的同一条流水线（{plan_label(base)}），两种调度用同一个基准。\n")
print(markdown_table(["调度", "E(P)", "每步气泡", "每步 PP 发送", "首段激活", "每卡总内存"], rows, align="lrrrrr"))
