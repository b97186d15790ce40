# Exercise: Mixtral 8x7B vs Llama-2 13B -- GPUs needed just to hold the training states, and compute per token.
# --8<-- [start:givens]
import parallelsel as ps

moe, dense = ps.MODELS["mixtral-8x7b"], ps.MODELS["llama2-13b"]
device, recipe = ps.DEVICES["h100-sxm-80gb"], ps.RECIPES["bf16-adam"]
print(f"{moe.name} 与 {dense.name}，每 token 计算量相近；卡是 {device.name}，训练状态按 {recipe.name} 计。")
# --8<-- [end:givens]
import math

from parallelsel import memory
from parallelsel.render.tables import fmt_bytes

for m in (moe, dense):
    states = memory.model_states(m.params, recipe).total
    print(f"{m.name}: M_model = {fmt_bytes(states)}，至少 {math.ceil(states / device.memory)} 张 {device.name} 才放得下状态"
          f"（还没算激活）；训练 {m.flops_per_token() / 1e9:,.1f} GFLOP/token")
