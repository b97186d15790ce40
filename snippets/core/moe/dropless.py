# Dropless vs a capacity factor for Mixtral 8x7B with EP=8 (one expert per H100): the same skewed routing, what each
# policy drops, and what the busiest rank computes and stores for one layer (parallelsel.core.moe).
import numpy as np

import parallelsel as ps
from parallelsel.core.moe import expert_cost, route
from parallelsel.render.tables import fmt_bytes, fmt_pct, fmt_time, markdown_table

model, device = ps.MODELS["mixtral-8x7b"], ps.DEVICES["h100-sxm-80gb"]
ep, seq = model.experts, model.seq_len       # 8 ranks, one 4096-token sequence each per micro-batch
tokens = ep * seq
rng = np.random.default_rng(0)
SKEW = 0.5                                                       # the router's skew: a few popular experts
bias = SKEW * np.linspace(1.0, -1.0, model.experts)
logits = bias + rng.standard_normal((tokens, model.experts))
chosen = np.argsort(-logits, axis=1)[:, :model.top_k]            # top-k
routed = np.bincount(chosen.ravel(), minlength=model.experts).tolist()

policies = [("容量因子 CF=1", route(routed, "capacity", 1.0)), ("容量因子 CF=1.25", route(routed, "capacity", 1.25)),
            ("容量因子 CF=2", route(routed, "capacity", 2.0)), ("不丢 token（dropless）", route(routed, "dropless"))]
print(f"{model.name}，EP={ep}（每张 {device.name} 一个专家），每卡一个微批次 = 1 条 {seq} token 的序列，top-{model.top_k}，"
      f"路由器偏斜程度 {SKEW:g}（同上表的模拟）；"
      f"各专家收到的 token：{min(routed):,} – {max(routed):,}，均衡时 {tokens * model.top_k // model.experts:,}，"
      f"最多/平均 = {policies[-1][1].imbalance:.2f}。\n")
rows = []
for name, r in policies:
    c = expert_cost(model, r, device)
    rows.append([name, fmt_pct(r.dropped_fraction), f"{c.rank_tokens:,}", fmt_time(c.seconds),
                 f"{c.seconds / c.balanced_seconds:.2f}×", fmt_bytes(c.activation_bytes)])
print(markdown_table(["做法", "丢掉的 token", "最忙那张卡算的 token", "它的专家计算（前向+反向，每层）", "相对均衡路由",
                      "它的专家激活（每层）"], rows, align="lrrrrr"))
