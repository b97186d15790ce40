# TP's compute-bound condition: the hidden size above which a layer's four all-reduces are shorter than its GEMMs.
import parallelsel as ps
from parallelsel.roofline import tp_critical_hidden

models = [ps.MODELS[k] for k in ("llama2-7b", "llama2-70b", "gpt3-175b")]
print("对照：" + "，".join(f"{m.name} 的 h = {m.hidden:,}" for m in models) + "。\n")
for device, link in (("a100-80gb", "nvlink3"), ("h100-sxm-80gb", "nvlink4"), ("a100-80gb", "ib-hdr"), ("h100-sxm-80gb", "ib-ndr")):
    hs = "，".join(f"t={t} 时 h ≥ {tp_critical_hidden(t, ps.DEVICES[device], ps.LINKS[link]):,.0f}" for t in (4, 8))
    print(f"- {ps.DEVICES[device].name} + {ps.LINKS[link].name}：{hs}")
