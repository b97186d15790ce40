# FSDP's compute-bound condition: tokens per GPU per micro-batch needed to hide two all-gathers and a reduce-scatter.
import parallelsel as ps
from parallelsel.roofline import fsdp_critical_tokens

ranks = 64
for device, link in (("a100-80gb", "ib-hdr"), ("h100-sxm-80gb", "ib-ndr"), ("a100-80gb", "nvlink3")):
    t = fsdp_critical_tokens(ps.DEVICES[device], ps.LINKS[link], ranks)
    print(f"- {ps.DEVICES[device].name} + {ps.LINKS[link].name}，{ranks} 卡：每卡每个微批次至少 {t:,.0f} 个 token")
