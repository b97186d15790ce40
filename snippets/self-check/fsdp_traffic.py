# Self-check 6: bytes each GPU sends per step, DP (all-reduce) against ZeRO-3/FSDP, one micro-batch per step.
import parallelsel as ps
from parallelsel.core.comm import traffic
from parallelsel.render.tables import fmt_bytes, markdown_table

work = ps.Workload(ps.MODELS["llama2-7b"], global_batch=8)
cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=1, gpus_per_node=8)
rows, sent = [], {}
for label, plan in (("DP", ps.Plan(dp=8)), ("ZeRO-3 / FSDP", ps.Plan(dp=8, zero=3))):
    items = traffic(work, plan, cluster)
    sent[label] = sum(t.sent for t in items)
    rows.append([label, "、".join(f"{t.op} ×{t.calls:g}" for t in items), fmt_bytes(sent[label], "GiB")])
print(markdown_table(["策略", "每步的集合通信", "每卡发送"], rows, align="llr"))
print(f"\nZeRO-3 / DP = {sent['ZeRO-3 / FSDP'] / sent['DP']:.2f}")
