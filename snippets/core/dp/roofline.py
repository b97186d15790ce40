# DP's compute-bound condition on real links: tokens per GPU per step needed to hide the gradient all-reduce.
import parallelsel as ps
from parallelsel.roofline import dp_critical_tokens

ranks = 64
for device, link in (("a100-80gb", "ib-hdr"), ("h100-sxm-80gb", "ib-ndr"), ("a100-80gb", "nvlink3")):
    t = dp_critical_tokens(ps.DEVICES[device], ps.LINKS[link], ranks)
    print(f"- {ps.DEVICES[device].name} + {ps.LINKS[link].name}，{ranks} 卡：每卡每步至少 {t:,.0f} 个 token")
