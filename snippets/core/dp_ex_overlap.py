# GPT-2 1.5B, plain DP over 2 nodes x 8 A100: how much of the step is exposed all-reduce, by link and accumulation?
import parallelsel as ps
from parallelsel.estimate import estimate
from parallelsel.render.tables import fmt_bytes, fmt_pct, fmt_time, markdown_table

model = ps.MODELS["gpt2-1.5b"]
rows = []
for inter in ("eth-25g", "ib-hdr"):
    cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=2, gpus_per_node=8, inter=ps.LINKS[inter])
    for per_rank in (1, 8):  # micro-batches each rank runs before the step's one all-reduce
        e = estimate(ps.Workload(model, global_batch=16 * per_rank), ps.Plan(dp=16, micro_batch=1), cluster)
        st = e.step
        rows.append([cluster.inter.name, per_rank, fmt_bytes(e.memory.total), fmt_time(st.compute),
                     fmt_time(st.communication_total), fmt_time(st.communication), fmt_pct(st.communication / st.total)])
print(markdown_table(["节点间链路", "每卡微批次数", "每卡内存", "计算", "all-reduce 总时长", "暴露的通信", "暴露通信占步时"],
                     rows, align="lrrrrrr"))
