# Bytes each rank sends per step (one micro-batch), DP vs ZeRO stages: Llama-2 7B, 8 ranks.
import parallelsel as ps
from parallelsel import comm
from parallelsel.render.tables import fmt_bytes, markdown_table

cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=1)
work = ps.Workload(ps.MODELS["llama2-7b"], global_batch=8)
sent = {}
for zero in (0, 1, 2, 3):
    items = comm.traffic(work, ps.Plan(dp=8, zero=zero), cluster)
    sent[zero] = sum(t.sent for t in items)
    ops = " + ".join(f"{t.op}×{t.calls:g}" for t in items)
    print(f"ZeRO-{zero}: {ops}")
print()
rows = [[f"ZeRO-{z}" + ("（纯 DP）" if z == 0 else ""), fmt_bytes(s), f"{s / sent[0]:.2f}×"] for z, s in sent.items()]
print(markdown_table(["阶段", "每卡每步发送量", "相对纯 DP"], rows, align="lrr"))
