# M_model (bf16 + Adam: 16 bytes per parameter) of each preset beside each device's C_device, measured the way the
# library decides "fits" everywhere else (the DP page, the selection matrix): the usable memory of a pure-DP rank
# (driver-reported total minus CUDA context and NCCL buffers) times (1 - the default headroom).
import parallelsel as ps
from parallelsel import memory
from parallelsel.core.memory import DEFAULT_HEADROOM, budget
from parallelsel.render.tables import fmt_bytes, markdown_table
from parallelsel.render.units import fmt_pct

devices = ["rtx4090-24gb", "a100-40gb", "a100-80gb", "h200-141gb"]
dp = ps.Plan(dp=8)                                                                    # a pure-DP rank: its process groups
caps = {d: budget(ps.DEVICES[d], dp) for d in devices}
assert all(caps[d] < ps.DEVICES[d].memory for d in devices)                           # C_device is below the raw capacity
rows = []
for key, model in ps.MODELS.items():
    m_model = memory.model_states(model.params, ps.RECIPES["bf16-adam"]).total      # weights + grads + Adam, one replica
    cells = []
    for d in devices:
        c = caps[d]
        cells.append(f"可放下，余 {fmt_bytes(c - m_model)}" if m_model <= c else f"排除（{m_model / c:.1f}×）")
    rows.append([f"`{key}`", fmt_bytes(m_model)] + cells)
print(markdown_table(["模型", "M_model"] + [f"{ps.DEVICES[d].name}（C_device {fmt_bytes(caps[d], digits=0)}）" for d in devices],
                     rows, align="lrrrrr"))
print(f"\nC_device = 可用显存 × (1 − 预留比例 {fmt_pct(DEFAULT_HEADROOM, 0)})，可用显存 = 驱动报告的总量 − CUDA 上下文 − NCCL 缓冲（上一节）；"
      "与 DP 页、选择矩阵判断“放得下”用的是同一个数。“排除”后的倍数为 M_model / C_device；“余”是留给激活、临时缓冲和分配器的空间，还没算激活。")
