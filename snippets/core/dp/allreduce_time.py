# Llama-2 7B: one gradient all-reduce per step, by DP degree and by the link the rings cross.
import parallelsel as ps
from parallelsel import comm
from parallelsel.core.estimate import estimate
from parallelsel.core.placement import link_for
from parallelsel.core.stacks import DEFAULT_STACK, wire_bytes
from parallelsel.render.tables import fmt_bytes, fmt_time, markdown_table
from parallelsel.render.comm_charts import time_vs_degree  # markdown-exec: hide
from parallelsel.render.style import figure_html  # markdown-exec: hide

model, stack = ps.MODELS["llama2-7b"], ps.STACKS[DEFAULT_STACK]
grad_bytes = wire_bytes(stack, ps.RECIPES[stack.recipe])[0] * model.params  # the buffer each rank all-reduces
degrees = [2, 4, 8, 16, 32, 64, 128]
gpus_per_node = 8
links = {"节点内 NVLink3": None, "跨节点 IB HDR（每卡一块）": "ib-hdr", "跨节点 25GbE（每节点一块）": "eth-25g"}
a100 = ps.DEVICES["a100-80gb"]

times = {}
for name, inter in links.items():
    row = []
    for n in degrees:
        if (n <= gpus_per_node) != (inter is None):
            row.append(None)          # NVLink only inside a node; the network columns start where a node is full
            continue
        # The link the DP group is priced on: NCCL runs one ring per HCA of the node (8 on DGX A100).
        cluster = ps.Cluster(a100, nodes=max(1, n // gpus_per_node), gpus_per_node=gpus_per_node,
                             inter=ps.LINKS[inter or "ib-hdr"])
        row.append(comm.collective_time("all-reduce", grad_bytes, n, link_for(cluster, n)))
    times[name] = row

# Compute of one 4096-token micro-batch (forward + backward) on one A100, for scale.
cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=1)
compute = estimate(ps.Workload(model, global_batch=1), ps.Plan(), cluster).step.compute

print(f"框架栈 {stack.name}，梯度按 {stack.grad_reduce_dtype} 归约：梯度缓冲区 {fmt_bytes(grad_bytes)}；一个 {model.seq_len} token 的微批次在 {cluster.device.name} 上前向+反向约 {fmt_time(compute)}。\n")
rows = [[n, fmt_bytes(comm.bus_factor("all-reduce", n) * grad_bytes)]
        + [fmt_time(t[i]) if t[i] is not None else "—" for t in times.values()] for i, n in enumerate(degrees)]
print(markdown_table(["DP 度 n", "每卡发送量"] + list(links), rows, align="rr" + "r" * len(links)))
svg = time_vs_degree(degrees, times, references={"一个微批次的计算": compute}, xlabel="DP 度 n（参与 all-reduce 的卡数）",  # markdown-exec: hide
                     title=f"{model.name} 梯度 all-reduce 时间：取决于链路，几乎不随 n 变", salt="dp-allreduce")  # markdown-exec: hide
nvl, ib, eth = (times[k] for k in links)  # markdown-exec: hide
first = degrees.index(2 * gpus_per_node)  # markdown-exec: hide
slow = eth[-1] / eth[first]  # markdown-exec: hide
print(figure_html(svg, f"跨节点后 DP 度从 {degrees[first]} 到 {degrees[-1]}，同一条链路上的 all-reduce 只变长到 {slow:.1f} 倍；"  # markdown-exec: hide
                       f"每卡一块 IB HDR 时 NCCL 的环用上整个节点的网卡，是节点内 NVLink3 的 {ib[first] / nvl[first - 1]:.1f} 倍；"  # markdown-exec: hide
                       f"每节点一块 25GbE 是 NVLink3 的 {eth[first] / nvl[first - 1]:.0f} 倍，"  # markdown-exec: hide
                       f"是一个微批次计算（虚线）的 {eth[first] / compute:.0f} 倍"))  # markdown-exec: hide
