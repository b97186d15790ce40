# Pin TP to 16 (two nodes): refused for Llama-3 70B (8 KV groups), allowed but slower for GPT-3 175B (96 heads).
import parallelsel as ps
from parallelsel.core.plan import tp_violations
from parallelsel.render.reasons import text
from parallelsel.render.tables import fmt_time, markdown_table
from parallelsel.render.reasons import plan_label

cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8, gpus_per_node=8)
TP = 16  # more than one node's GPUs
llama = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512)
rules = tp_violations(llama.model, TP)  # the plan rule the search checks a pinned TP against
try:
    ps.search(llama, cluster, top=1, fixed={"tp": TP})
except ValueError:
    print(f"{llama.model.name} 固定 TP={TP}：搜索在枚举之前就拒绝了，理由是\n")
    for reason in rules:
        print(f"- {text(reason)}")
    print()

gpt3 = ps.Workload(ps.MODELS["gpt3-175b"], global_batch=512)
free = ps.search(gpt3, cluster, top=1).best
tp16 = ps.search(gpt3, cluster, top=1, fixed={"tp": TP}).best
print(f"{gpt3.model.name}（{gpt3.model.heads} 个头），{cluster.gpus} × {cluster.device.name}，"
      f"全局批量 {gpt3.global_batch}：\n")
print(markdown_table(["约束", "最佳方案", "每步时间"], [
    ["无", plan_label(free.plan), fmt_time(free.estimate.step.total)],
    [f"TP = {TP}", plan_label(tp16.plan), fmt_time(tp16.estimate.step.total)],
], align="llr"))
print(f"TP={TP} 的最佳方案慢 {tp16.estimate.step.total / free.estimate.step.total:.2f} 倍。它的理由：\n")
for line in tp16.why:
    print(f"- {text(line)}")
