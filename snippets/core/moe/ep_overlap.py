# EP overlap: Megatron-Bridge's Qwen3-235B-A22B run on 256 H100 (EP32 across four nodes) hides the experts'
# all-to-alls under another micro-batch's compute (Plan(ep_overlap=True), Megatron-Core's combined 1F1B schedule).
# The same plan priced with the all-to-alls on the critical path, and with them paired as that schedule pairs them.
from dataclasses import replace

from parallelsel.course.measured import compare_stack
from parallelsel.course.stack_runs import MEGATRON_BRIDGE_MOE_H100
from parallelsel.render.reasons import plan_label
from parallelsel.render.tables import fmt_bytes, markdown_table
from parallelsel.render.units import fmt_time

run = MEGATRON_BRIDGE_MOE_H100[0]
runs = {"关键路径上（不重叠）": replace(run, plan={**run.plan, "ep_overlap": None}), "与另一个微批次重叠": run}
rows, found = [], {}
for name, r in runs.items():
    c = found[name] = compare_stack(r)
    ep = next(t for t in c.estimate.traffic if t.strategy == "EP")
    rows.append([name, fmt_time(ep.time), fmt_time(ep.time - ep.hidden), fmt_time(c.estimate.step.total),
                 fmt_bytes(c.estimate.memory.total), f"{c.predicted:.0f}", f"{c.error:+.1%}"])
est = found["与另一个微批次重叠"].estimate
plan, model = est.plan, run.model
nodes = -(-plan.ep * plan.expert_tp // est.cluster.gpus_per_node)   # the EP group's ranks sit expert-TP apart
print(f"{run.label}：{model.experts} 个专家、每个 token 选 {model.top_k} 个；方案 {plan_label(plan)}，"
      f"EP 组 {plan.ep} 张卡跨 {nodes} 个节点；实测 {run.value:g} tokens/s/卡\n")
print(markdown_table(["EP 的 all-to-all", "每步 all-to-all", "其中暴露", "步时", "每卡内存", "本库 tokens/s/卡", "误差"],
                     rows, align="lrrrrrr"))
off, on = found["关键路径上（不重叠）"], found["与另一个微批次重叠"]
# The reading: on the critical path the run comes out far slower than it trained; paired as Megatron-Core pairs
# the passes it is close, for about one more layer's activations at the peak.
assert off.error < -0.20 and abs(on.error) < 0.10
assert on.estimate.memory.total > off.estimate.memory.total and on.estimate.fits
