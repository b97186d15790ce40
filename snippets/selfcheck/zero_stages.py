# Self-check 5: model states per GPU of Llama-3 70B (bf16 + Adam) over 64 GPUs, by ZeRO stage.
import parallelsel as ps
from parallelsel.memory import model_states
from parallelsel.render.tables import fmt_bytes, markdown_table

model, dp = ps.MODELS["llama3-70b"], 64
rows = []
for zero, name in ((0, "DP（不分片）"), (1, "ZeRO-1：分片优化器状态"), (2, "ZeRO-2：再分片梯度"), (3, "ZeRO-3 / FSDP：再分片参数")):
    s = model_states(model.params, ps.RECIPES["bf16-adam"], dp=dp, zero=zero)
    rows.append([name, fmt_bytes(s.params), fmt_bytes(s.grads), fmt_bytes(s.optimizer), fmt_bytes(s.total)])
print(f"{model.name}，DP 度 {dp}\n")
print(markdown_table(["阶段", "权重", "梯度", "优化器状态", "合计（每卡）"], rows, align="lrrrr"))
