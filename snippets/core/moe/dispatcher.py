# The token dispatcher: Megatron-Core's all-to-all sends one copy of a token per chosen expert; its flex dispatcher
# (DeepEP, HybridEP; Plan(dispatcher="deepep")) sends one per destination node and forwards it over NVLink there.
# The same Qwen3-235B-A22B plan as above (EP32 across four nodes, 128 experts, top-8), each way, with EP overlap.
from dataclasses import replace

from parallelsel.core.comm import flex_copies
from parallelsel.course.measured import compare_stack
from parallelsel.course.stack_runs import MEGATRON_BRIDGE_MOE_H100
from parallelsel.render.tables import markdown_table
from parallelsel.render.units import fmt_time

run = MEGATRON_BRIDGE_MOE_H100[0]
model, found, rows = run.model, {}, []
for name, dispatcher in (("all-to-all（alltoall）", None), ("flex 分发器（deepep）", "deepep")):
    est = found[name] = compare_stack(replace(run, plan={**run.plan, "dispatcher": dispatcher})).estimate
    plan, g = est.plan, est.cluster.gpus_per_node
    n, local = plan.ep * plan.expert_tp, min(g, plan.ep * plan.expert_tp)
    assert n % local == 0
    if dispatcher:   # (the group fills its nodes: `local` ranks on each)
        far, near = flex_copies(model.experts, model.top_k, (local,) * (n // local), plan.expert_tp)
    else:   # each (token, expert) copy goes to its expert's rank: (n - local) / n of them to another node
        far, near = model.top_k * (n - local) / n, model.top_k * (local - 1) / n
    ep = next(t for t in est.traffic if t.strategy == "EP")
    rows.append([name, f"{far:.2f}", f"{near:.2f}", fmt_time(ep.time), fmt_time(ep.time - ep.hidden),
                 fmt_time(est.step.total)])
print(f"{model.name}：{model.experts} 个专家选 {model.top_k} 个，EP 组 {n} 张卡、每个节点 {local} 张"
      f"（{-(-n // local)} 个节点）\n")
print(markdown_table(["分发器", "每个 token 跨节点的份数", "走 NVLink 的份数", "每步 EP 通信", "其中暴露", "步时"], rows,
                     align="lrrrrr"))
a2a, flex = found["all-to-all（alltoall）"], found["flex 分发器（deepep）"]
a2a_ep, flex_ep = (sum(t.time for t in e.traffic if t.strategy == "EP") for e in (a2a, flex))
# The reading: across four nodes the flex dispatcher sends fewer than half the copies over the network, so the
# experts' exchange takes well under half the time and the step is shorter.
assert flex_ep < a2a_ep / 2 and flex.step.total < a2a.step.total
