# PP's compute-bound condition: hidden size x layers per stage above which a boundary's p2p is shorter than the stage.
import parallelsel as ps
from parallelsel.roofline import pp_critical_hidden_layers

for device, link in (("a100-80gb", "ib-hdr"), ("h100-sxm-80gb", "ib-ndr"), ("a100-80gb", "eth-25g")):
    x = pp_critical_hidden_layers(ps.DEVICES[device], ps.LINKS[link])
    print(f"- {ps.DEVICES[device].name} + {ps.LINKS[link].name}：h × 每段层数 ≥ {x:,.0f}")
