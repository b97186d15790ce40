# Self-check 5, the givens.
import parallelsel as ps
from parallelsel.render.tables import fmt_count

model, recipe, dp = ps.MODELS["llama3-70b"], ps.RECIPES["bf16-adam"], 64
print(f"模型 {model.name}（{fmt_count(model.params)} 参数），训练配方 {recipe.name}（{recipe.per_param:g} B/参数），DP 度 {dp}。")
