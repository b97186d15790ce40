# Token routing with a skewed router (numpy, fixed seed): the busiest expert sets the step; capacity drops the rest.
import numpy as np

from parallelsel.render.tables import fmt_pct, markdown_table

experts, top_k, tokens = 8, 2, 16384
rng = np.random.default_rng(0)


def route(skew: float) -> np.ndarray:
    """Tokens per expert: router logits = per-expert bias (popularity, scaled by skew) + per-token noise; top-k."""
    bias = skew * np.linspace(1.0, -1.0, experts)
    logits = bias + rng.standard_normal((tokens, experts))
    chosen = np.argsort(-logits, axis=1)[:, :top_k]
    return np.bincount(chosen.ravel(), minlength=experts)


FACTORS = (1.0, 1.25, 2.0)                    # capacity factors tried
rows = []
for skew in (0.0, 0.25, 0.5, 1.0):
    load = route(skew)
    mean = load.mean()                        # = tokens * top_k / experts
    row = [f"{skew:g}", f"{load.min():,} – {load.max():,}", f"{load.max() / mean:.2f}"]
    for cf in FACTORS:
        cap = int(cf * mean)                  # capacity per expert: capacity factor x balanced share
        row.append(fmt_pct(np.maximum(load - cap, 0).sum() / load.sum()))
    rows.append(row)
print(f"{tokens:,} 个 token，{experts} 个专家，top-{top_k}；均衡时每个专家 {tokens * top_k // experts:,} 个\n")
print(markdown_table(["偏斜程度", "各专家 token 数（最少 – 最多）", "最多/平均（专家计算变慢的倍数）",
                      *(f"丢弃比例 CF={cf:g}" for cf in FACTORS)], rows, align="rrr" + "r" * len(FACTORS)))
