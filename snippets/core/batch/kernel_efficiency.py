# How the kernel model's compute efficiency depends on the tokens in one micro-batch (b x s): small micro-batches make
# small GEMMs, whose tiles and waves leave SMs idle (parallelsel.core.kernels, NVIDIA's matmul guide §3.1-3.2).
import parallelsel as ps
from parallelsel.core.kernels import compute_time
from parallelsel.render.tables import markdown_table
from parallelsel.render.units import fmt_pct

model, device, TP, SEQ = ps.MODELS["gpt3-175b"], ps.DEVICES["a100-80gb"], 8, 512
rows, eff = [], []
for b in (1, 2, 4, 8):
    ct = compute_time(model, b, SEQ, device, tp=TP)
    useful = model.flops_per_token("none", SEQ) * b * SEQ / TP          # this GPU's share of the FLOPs
    eff.append(useful / (ct.total * device.peak_flops))
    rows.append([b, b * SEQ, fmt_pct(eff[-1], 0)])
assert eff[0] < eff[-1]  # not one fixed efficiency: larger micro-batches run closer to the matmul ceiling
print(f"{model.name}，TP{TP}，{device.name}，序列长度 {SEQ}：每卡计算时间里有多少是峰值算力在干有用的活\n")
print(markdown_table(["微批次 b", "每微批次 token", "计算效率（占峰值）"], rows, align="rrr"))
