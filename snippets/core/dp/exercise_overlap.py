# GPT-2 1.5B, plain DP over 2 nodes x 8 A100: how much of the step is exposed all-reduce, by link and accumulation?
# --8<-- [start:givens]
import parallelsel as ps

model, device = ps.MODELS["gpt2-1.5b"], ps.DEVICES["a100-80gb"]
NODES, GPUS_PER_NODE, MICRO_BATCH = 2, 8, 1
INTER = ("eth-25g", "ib-hdr")      # the two inter-node links tried
PER_RANK = (1, 8)                   # micro-batches each rank runs before the step's one all-reduce
dp = NODES * GPUS_PER_NODE
print(f"{model.name}，{NODES} 个节点 × {GPUS_PER_NODE} 张 {device.name}，纯 DP（dp={dp}，每卡微批次 {MICRO_BATCH}）；"
      f"节点间链路取 {' 或 '.join(ps.LINKS[k].name for k in INTER)}；"
      f"每卡每步跑 {' 或 '.join(map(str, PER_RANK))} 个微批次（梯度累积），再做一次 all-reduce。")
# --8<-- [end:givens]
from parallelsel.core.estimate import estimate
from parallelsel.render.tables import fmt_bytes, fmt_pct, fmt_time, markdown_table

rows, computes = [], {}
for inter in INTER:
    cluster = ps.Cluster(device, nodes=NODES, gpus_per_node=GPUS_PER_NODE, inter=ps.LINKS[inter])
    for per_rank in PER_RANK:
        e = estimate(ps.Workload(model, global_batch=dp * MICRO_BATCH * per_rank), ps.Plan(dp=dp, micro_batch=MICRO_BATCH), cluster)
        st = e.step
        computes[inter, per_rank] = st.compute
        rows.append([cluster.inter.name, per_rank, fmt_bytes(e.memory.total), fmt_time(st.compute),
                     fmt_time(st.communication_total), fmt_time(st.communication), fmt_pct(st.communication / st.total)])
print()
print(markdown_table(["节点间链路", "每卡微批次数", "每卡内存", "计算", "all-reduce 总时长", "暴露的通信", "暴露通信占步时"],
                     rows, align="lrrrrrr"))
# The page's note: on the fast link the hidden all-reduce holds more of NCCL's SMs, so "compute" is a little longer.
assert all(computes["ib-hdr", k] > computes["eth-25g", k] for k in PER_RANK)
