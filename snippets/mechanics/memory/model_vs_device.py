# M_model (bf16 + Adam: 16 bytes per parameter) of each preset beside each device's memory C_device.
import parallelsel as ps
from parallelsel import memory
from parallelsel.render.tables import fmt_bytes, markdown_table

devices = ["rtx4090-24gb", "a100-40gb", "a100-80gb", "h200-141gb"]
rows = []
for key, model in ps.MODELS.items():
    m_model = memory.model_states(model.params, ps.RECIPES["bf16-adam"]).total      # weights + grads + Adam, one replica
    cells = []
    for d in devices:
        c = ps.DEVICES[d].memory
        cells.append(f"可放下，余 {fmt_bytes(c - m_model)}" if m_model <= c else f"排除（{m_model / c:.1f}×）")
    rows.append([f"`{key}`", fmt_bytes(m_model)] + cells)
print(markdown_table(["模型", "M_model"] + [f"{ps.DEVICES[d].name}（{fmt_bytes(ps.DEVICES[d].memory, digits=0)}）" for d in devices],
                     rows, align="lrrrrr"))
print("\n“排除”后的倍数为 M_model / C_device；“余”是留给激活、临时缓冲和分配器的空间，还没算激活。")
