# Ring attention vs Ulysses (all-to-all) context parallelism: bytes each rank sends per layer, and what each requires.
import parallelsel as ps
from parallelsel.core.comm import bus_factor
from parallelsel.render.tables import fmt_bytes, markdown_table

model = ps.MODELS["llama3-70b"]
seq, b, a = 131072, 1, 2                     # one 128K-token sequence per micro-batch, bf16 activations
h, kv = model.hidden, model.kv_dim           # grouped-query attention: K and V are kv wide, not h
device, link = ps.DEVICES["h100-sxm-80gb"], ps.LINKS["ib-ndr"]

rows = []
for cp in (2, 4, 8, 16):
    chunk = b * seq // cp                    # tokens held by one rank
    # Ring (Liu et al. 2023): cp-1 steps, each passing one K,V block; backward passes K,V and dK,dV again: 3x forward.
    ring = 3 * (cp - 1) * chunk * 2 * kv * a
    # Ulysses (Jacobs et al. 2023): all-to-all of Q, K, V before attention and of O after; backward the same for grads.
    ulysses = 2 * bus_factor("all-to-all", cp) * chunk * (2 * h + 2 * kv) * a
    ok = model.heads % cp == 0 and model.kv_heads % cp == 0
    # Ring overlap: one step's K,V transfer vs one block of attention (4 chunk^2 h FLOPs forward).
    hide = (chunk * 2 * kv * a / link.bandwidth) / (4 * chunk * chunk * h / device.peak_flops)
    rows.append([cp, f"{chunk:,}", fmt_bytes(ring, "MiB"), fmt_bytes(ulysses, "MiB"),
                 "可以" if ok else f"不行：KV 头数 {model.kv_heads} 不能被 {cp} 整除", f"{hide:.2f}"])
print(f"{model.name}：h = {h:,}，{model.heads} 个查询头、{model.kv_heads} 个 KV 头；序列 {seq:,} token；"
      f"{device.name}，{link.name}\n")
print(markdown_table(["CP 度", "每卡 token", "环形：每卡每层发送", "Ulysses：每卡每层发送", "Ulysses 能否切头",
                      "环形每步：传 K/V ÷ 块计算"], rows, align="rrrrlr"))
