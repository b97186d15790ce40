# The plan this page turns into code: from the search of matrix/search.md (Llama-3 70B, 8 nodes x 8 A100-80GB,
# global batch 512, CP 1 and the even pipeline split, which the code generator covers), the best-ranked plan that uses all
# three dimensions (data with FSDP, tensor, pipeline).
import parallelsel as ps
from parallelsel.core.search import TIE, search
from parallelsel.render.reasons import plan_label
from parallelsel.render.tables import markdown_table
from parallelsel.render.units import fmt_pct, fmt_time

workload = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512, stack="torchtitan")  # PyTorch-native: FSDP2 + TP + pipelining
cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8, gpus_per_node=8)
ranked = search(workload, cluster, top=20, fixed={"cp": 1, "stage_layers": None}).results  # what the code generator covers
chosen = next(r for r in ranked if r.plan.dp > 1 and r.plan.tp > 1 and r.plan.pp > 1 and r.plan.zero == 3)
first = ranked[0]
assert chosen.plan.gpus == cluster.gpus

rows = [[r.rank, plan_label(r.plan), fmt_time(r.estimate.step.total), fmt_pct(r.estimate.step.mfu, 0)]
        for r in (first, chosen)]
print(markdown_table(["名次", "方案", "步时", "MFU"], rows, align="rlrr"))
gap = chosen.estimate.step.total / first.estimate.step.total - 1
verdict = ("在步时模型的误差之内，两者算持平" if gap <= TIE else
           "超过步时模型的误差：在这个集群上不用流水线确实更快，本页选它只为把每种并行的代码都写出来")
print(f"\n本页用第 {chosen.rank} 名：{plan_label(chosen.plan)}，因为它三种并行都用到了。第 1 名不用流水线："
      f"它的代码是把下面的网格换成 dp × tp 两维、再去掉流水线那两段（②、⑤）。两者步时相差 {fmt_pct(gap, 0)}，{verdict}。")
