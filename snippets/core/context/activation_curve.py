# Activations of the whole model per micro-batch (b=1) against sequence length, for Llama-3 8B.
import parallelsel as ps
from parallelsel import memory
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.timeline_charts import curves  # markdown-exec: hide

model = ps.MODELS["llama3-8b"]
device = ps.DEVICES["h100-sxm-80gb"]
lengths = [2**k for k in range(11, 18)]                  # 2K .. 128K tokens
b, tp = 1, 8                                             # micro-batch, TP degree of the TP + SP case
cases = {
    "不重算": dict(recompute="none"),
    "选择性重算": dict(recompute="selective"),
    f"TP{tp} + SP + 选择性重算（每卡）": dict(tp=tp, sp=True, recompute="selective"),
    "完全重算": dict(recompute="full"),
}
series = {name: [model.layers * memory.activations_per_layer(model, b, seq_len=s, **kw) for s in lengths]
          for name, kw in cases.items()}
ticks = [(s, f"{s // 1024}K") for s in lengths]  # markdown-exec: hide
svg = curves(lengths, series, references={f"{device.name} 容量": device.memory}, yscale=2**30, logx=2, logy=True,  # markdown-exec: hide
             xticks=ticks, title=f"{model.name}：一个微批次（b={b}）的全部层激活与序列长度",  # markdown-exec: hide
             xlabel="序列长度 s（token，对数刻度）", ylabel="激活（GiB，对数刻度）", salt="context-activation-curve")  # markdown-exec: hide
print(figure_html(svg, "不重算时注意力分数项随 s 平方增长，很快超过一张卡；选择性重算后激活与 s 成正比，TP+SP 再除以 t，完全重算只存每层输入"))  # markdown-exec: hide
