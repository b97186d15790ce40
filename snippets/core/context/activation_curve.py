# Activations of the whole model per micro-batch (b=1) against sequence length, for Llama-3 8B, with the
# standard attention kernel (Korthikanti's accounting: s x s scores stored) and a fused one (FlashAttention-2).
import parallelsel as ps
from parallelsel import memory
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.line_charts import curves  # markdown-exec: hide

model = ps.MODELS["llama3-8b"]
device = ps.DEVICES["h100-sxm-80gb"]
lengths = [2**k for k in range(11, 18)]                  # 2K .. 128K tokens
b, tp = 1, 8                                             # micro-batch, TP degree of the TP + SP case
cases = {
    "不重算，标准注意力（存 s×s 分数）": dict(recompute="none", attention="standard"),
    "不重算，融合内核（FlashAttention）": dict(recompute="none", attention="flash"),
    "选择性重算（两种内核相同）": dict(recompute="selective"),
    f"TP{tp} + SP + 融合内核（每卡）": dict(tp=tp, sp=True, recompute="none", attention="flash"),
    "完全重算": dict(recompute="full"),
}
series = {name: [model.layers * memory.activations_per_layer(model, b, seq_len=s, **kw) for s in lengths]
          for name, kw in cases.items()}
usable = memory.usable_memory(device, ps.Plan())
ticks = [(s, f"{s // 1024}K") for s in lengths]  # markdown-exec: hide
svg = curves(lengths, series, references={f"{device.name} 可用显存": usable}, yscale=2**30, logx=2, logy=True,  # markdown-exec: hide
             xticks=ticks, title=f"{model.name}：一个微批次（b={b}）的全部层激活与序列长度",  # markdown-exec: hide
             xlabel="序列长度 s（token，对数刻度）", ylabel="激活（GiB，对数刻度）", salt="context-activation-curve")  # markdown-exec: hide
print(figure_html(svg, "标准注意力存下的 s×s 分数随 s 平方增长，很快超过一张卡；融合内核不存分数，"  # markdown-exec: hide
                       "激活与 s 成正比，和选择性重算只差每行一个 logsumexp；TP+SP 再除以 t，完全重算只存每层输入"))  # markdown-exec: hide
ratio = series["不重算，标准注意力（存 s×s 分数）"][-1] / series["不重算，融合内核（FlashAttention）"][-1]
print(f"s = {lengths[-1] // 1024}K 时，标准注意力的激活是融合内核的 {ratio:.0f} 倍。")
