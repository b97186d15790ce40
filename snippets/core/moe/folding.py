# MoE parallel folding: Megatron-Bridge's Qwen3-235B-A22B plan on 256 H100 (TP2 PP8, EP32 > DP16) is only a plan once
# the experts get their own TP degree (etp=1): the expert grid ETP x EP x expert-DP then folds over the TP x DP ranks.
import parallelsel as ps
from parallelsel.course.stack_runs import QWEN3_235B
from parallelsel.render.reasons import plan_label
from parallelsel.render.tables import fmt_bytes, fmt_size

q = QWEN3_235B
work = ps.Workload(q, global_batch=2048, recipe=ps.RECIPES["fp8-params-bf16grad"])
cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=32)
kw = dict(dp=16, tp=2, pp=8, ep=32, zero=1, sp=True, schedule="interleaved", chunks=4,
          stage_layers=(11,) + (12,) * 6 + (11,))
try:
    ps.Plan(**kw)
    raise AssertionError("EP32 over DP16 should need folding")
except ValueError:
    print(f"不折叠（专家按 TP 切，EP 取自 DP 组）：EP={kw['ep']} 必须整除 DP={kw['dp']}，这个方案不成立。\n")
plan = ps.Plan(etp=1, **kw)
e = ps.estimate(work, plan, cluster)
assert e.fits
nodes = -(-plan.ep * plan.expert_tp // cluster.gpus_per_node)
print(f"折叠（ETP=1）：{plan_label(plan)}，每卡 {fmt_bytes(e.memory.total)}（上限 {fmt_bytes(e.usable)}），"
      f"每卡存 {q.experts // plan.ep} 个完整专家；EP 组的 {plan.ep} 张卡跨 {nodes} 个节点，"
      f"每步每卡在 all-to-all 中发出 {fmt_size(sum(t.sent for t in e.traffic if t.strategy == 'EP'))}。")
