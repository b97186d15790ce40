# ZeRO-Offload on one GPU: the optimizer state (fp32 master weights, Adam moments) lives in CPU memory; what the
# GPU keeps, and the PCIe traffic it costs per step against the step's compute.
import parallelsel as ps
from parallelsel.core.comm import collective_time
from parallelsel.core.memory import breakdown, budget
from parallelsel.render.tables import fmt_bytes, fmt_time, markdown_table
from parallelsel.render.reasons import plan_label

device, pcie = ps.DEVICES["a100-80gb"], ps.LINKS["pcie4"]
cluster = ps.Cluster(device, nodes=1, gpus_per_node=1)
plan = ps.Plan(dp=1, micro_batch=1, recompute="full")
rows = []
for key in ("llama2-7b", "llama2-13b", "llama2-70b"):
    work = ps.Workload(ps.MODELS[key], global_batch=64)
    mem = breakdown(work, plan, device)
    offloaded = mem.total - mem.optimizer           # optimizer state moves to the host (Ren et al. 2021 §4)
    n = work.model.params
    # Per step: gradients down to the CPU, updated 16-bit weights back up, each once over PCIe.
    transfer = collective_time("p2p", work.recipe.grads * n, 2, pcie) + collective_time("p2p", work.recipe.weights * n, 2, pcie)
    compute = ps.estimate(work, plan, cluster).step.compute
    cap = budget(device, plan)
    rows.append([work.model.name, fmt_bytes(mem.total), "放得下" if mem.total <= cap else "放不下",
                 fmt_bytes(offloaded), "放得下" if offloaded <= cap else "放不下",
                 fmt_bytes(mem.optimizer), fmt_time(transfer), fmt_time(compute)])
print(f"单张 {device.name}（可用预算 {fmt_bytes(budget(device, plan))}），{plan_label(plan)}，全局批量 64；主机与 GPU 之间 {pcie.name}\n")
print(markdown_table(["模型", "不卸载", "放得下？", "卸载优化器状态后", "放得下？", "放到主机内存的", "每步 PCIe 传输", "每步计算"],
                     rows, align="lrlrlrrr"))
