# Exercise: Mixtral 8x7B vs Llama-2 13B -- GPUs needed just to hold the training states, and compute per token.
import math

import parallelsel as ps
from parallelsel import memory
from parallelsel.render.tables import fmt_bytes

device = ps.DEVICES["h100-sxm-80gb"]
for key in ("mixtral-8x7b", "llama2-13b"):
    m = ps.MODELS[key]
    states = memory.model_states(m.params, ps.RECIPES["bf16-adam"]).total
    print(f"{m.name}: M_model = {fmt_bytes(states)}，至少 {math.ceil(states / device.memory)} 张 {device.name} 才放得下状态"
          f"（还没算激活）；训练 {m.flops_per_token() / 1e9:,.1f} GFLOP/token")
