# The training stacks the library knows (ps.STACKS): the dtype of each collective, model-state bytes, default overlaps.
import parallelsel as ps
from parallelsel.core.stacks import DEFAULT_STACK
from parallelsel.render.tables import markdown_table

ZERO = {0: "DP", 1: "ZeRO-1", 2: "ZeRO-2", 3: "ZeRO-3/FSDP"}


PAIRS = {"forward": "前向 all-gather 与 reduce-scatter", "backward-ag": "反向 all-gather", "backward-rs": "反向 reduce-scatter"}


def pairs(s):
    if not s.tp_overlap:
        return "—"
    staged = "；另有对称内存的拷贝" if s.tp_overlap_staging == "symmetric-memory" else ""
    return "、".join(PAIRS[p] for p in s.tp_overlap_pairs) + staged


def stages(zs):
    return "、".join(ZERO[z] for z in zs) if zs else "默认不重叠"


rows = []
for key, s in ps.STACKS.items():
    r = ps.RECIPES[s.recipe]
    rows.append([f"{s.name} {s.version}" + ("（默认）" if key == DEFAULT_STACK else ""), s.grad_reduce_dtype,
                 s.param_gather_dtype, f"{r.weights:g} + {r.grads:g} + {r.optimizer:g} = {s.model_state_bytes:g}",
                 "DP×CP" if s.optimizer_shard == "dp_cp" else "DP", stages(s.overlap_grad_reduce),
                 ("需要 " + "、".join({"sp": "SP", "compile": "torch.compile"}[n] for n in s.tp_overlap_needs))
                 if s.tp_overlap else "不提供", pairs(s), "、".join(s.schedules)])
print(markdown_table(["框架栈", "梯度归约", "参数收集", "每参数模型状态字节（权重 + 梯度 + 优化器）", "状态分片组",
                      "梯度归约默认重叠", "TP 通信重叠", "TP 重叠配上矩阵乘的集合通信", "流水线调度"], rows,
                     align="lllllllll"))
print(f"\n`ps.Workload` 不写 `stack=` 时用 {ps.STACKS[DEFAULT_STACK].name}；每条的出处见 `ps.STACKS[...].source`。")
