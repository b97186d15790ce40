# Cross-node expert parallelism: can the all-to-all hide under another micro-batch's compute? Mixtral 8x7B, EP = 8.
import parallelsel as ps
from parallelsel.render.tables import fmt_rate, markdown_table
from parallelsel.core.roofline import ep_comm_to_compute

model, ep = ps.MODELS["mixtral-8x7b"], 8
setups = [("a100-80gb", "nvlink3", "节点内"), ("a100-80gb", "ib-hdr", "每个专家一个节点"),
          ("h100-sxm-80gb", "ib-ndr", "每个专家一个节点"), ("a100-80gb", "eth-25g", "每个专家一个节点")]
rows = []
for device, link, where in setups:
    r = ep_comm_to_compute(model, ep, ps.DEVICES[device], ps.LINKS[link])
    rows.append([ps.DEVICES[device].name, f"{ps.LINKS[link].name}（每卡 {fmt_rate(ps.LINKS[link].bandwidth)}）", where,
                 f"{r:.2f}", "能完全藏住" if r <= 1 else f"重叠后仍暴露约 {1 - 1 / r:.0%} 的通信时间"])
print(f"{model.name}：{model.experts} 个专家、top-{model.top_k}，EP = {ep}；比值 = 每层 all-to-all 时间 ÷ 每层计算时间（峰值算力、标称带宽）\n")
print(markdown_table(["设备", "EP 组所跨链路", "放法", "通信 ÷ 计算", "与另一微批次的计算重叠时"], rows, align="lllrl"))
