# Self-check 5: model states per GPU of Llama-3 70B (bf16 + Adam) over 64 GPUs, by ZeRO stage.
# --8<-- [start:givens]
import parallelsel as ps
from parallelsel.render.tables import fmt_count

model, recipe, dp = ps.MODELS["llama3-70b"], ps.RECIPES["bf16-adam"], 64
print(f"模型 {model.name}（{fmt_count(model.params)} 参数），训练配方 {recipe.name}（{recipe.per_param:g} B/参数），DP 度 {dp}。")
# --8<-- [end:givens]
from parallelsel.core.memory import model_states
from parallelsel.render.tables import fmt_bytes, markdown_table

rows = []
for zero, name in ((0, "DP（不分片）"), (1, "ZeRO-1：分片优化器状态"), (2, "ZeRO-2：再分片梯度"), (3, "ZeRO-3 / FSDP：再分片参数")):
    s = model_states(model.params, recipe, dp=dp, zero=zero)
    rows.append([name, fmt_bytes(s.params), fmt_bytes(s.grads), fmt_bytes(s.optimizer), fmt_bytes(s.total)])
print()
print(markdown_table(["阶段", "权重", "梯度", "优化器状态", "合计（每卡）"], rows, align="lrrrr"))
