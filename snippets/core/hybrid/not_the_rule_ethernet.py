# The same three placements with one 100 GbE NIC per node shared by its GPUs instead of an InfiniBand HCA per GPU.
import parallelsel as ps
from parallelsel.core.estimate import estimate
from parallelsel.render.tables import fmt_time, markdown_table

workload = ps.Workload(ps.MODELS["llama2-13b"], global_batch=256)
NODES, GPUS_PER_NODE = 4, 8
gpus = NODES * GPUS_PER_NODE
TP, FSDP, HSDP = f"TP{GPUS_PER_NODE}", "FSDP", "HSDP"
plans = {TP: ps.Plan(dp=NODES, tp=GPUS_PER_NODE, sp=True, recompute="selective"),
         FSDP: ps.Plan(dp=gpus, zero=3, recompute="selective"),
         HSDP: ps.Plan(dp=gpus, zero=3, shard=GPUS_PER_NODE, recompute="selective")}
rows, order = [], {}
for intra in ("nvlink3", "pcie4"):
    cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=NODES, gpus_per_node=GPUS_PER_NODE,
                         intra=ps.LINKS[intra], inter=ps.LINKS["eth-100g"])
    step = {}
    for key, plan in plans.items():
        e = estimate(workload, plan, cluster)
        assert e.fits, e.reasons
        step[key] = e.step.total
        # The collectives that leave the node: they run over the shared NIC.
        across = [t for t in e.traffic if t.link == cluster.inter.name]
        rows.append([cluster.intra.name, key, fmt_time(e.step.total),
                     "、".join(dict.fromkeys(f"{t.strategy} {t.op}" for t in across)), f"{sum(t.calls for t in across):,}",
                     fmt_time(sum(t.time for t in across)), plan.microbatches(workload)])
    order[cluster.intra.name] = sorted(step, key=step.get)
print(f"节点间改为 {cluster.inter.name}，每节点 {cluster.inter.nics} 块网卡由 {GPUS_PER_NODE} 张卡共用：\n")
print(markdown_table(["节点内链路", "放法", "每步时间", "跨节点的集合通信", "每步调用次数", "其通信时间（重叠前）",
                      "每步微批次数"], rows, align="llrlrrr"))
print("\n每步时间从短到长：" + "；".join(f"{link}：{' < '.join(keys)}" for link, keys in order.items()))
assert all(keys[0] == TP for keys in order.values()), order          # the answer says TP8 is fastest again
