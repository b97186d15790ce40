# Llama-2 7B: one gradient all-reduce per step (bf16 gradients), by DP degree and by the link the ring crosses.
import parallelsel as ps
from parallelsel import comm
from parallelsel.core.estimate import estimate
from parallelsel.render.tables import fmt_bytes, fmt_time, markdown_table
from parallelsel.render.comm_charts import time_vs_degree  # markdown-exec: hide
from parallelsel.render.style import figure_html  # markdown-exec: hide

model, recipe = ps.MODELS["llama2-7b"], ps.RECIPES["bf16-adam"]
grad_bytes = recipe.grads * model.params  # the buffer each rank all-reduces
degrees = [2, 4, 8, 16, 32, 64, 128]
gpus_per_node = 8
links = {"节点内 NVLink3": ps.LINKS["nvlink3"], "跨节点 IB HDR": ps.LINKS["ib-hdr"], "跨节点 25GbE": ps.LINKS["eth-25g"]}

times = {}
for name, link in links.items():
    intra = link is ps.LINKS["nvlink3"]
    times[name] = [comm.collective_time("all-reduce", grad_bytes, n, link) if not intra or n <= gpus_per_node else None
                   for n in degrees]

# Compute of one 4096-token micro-batch (forward + backward) on one A100, for scale.
cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=1)
compute = estimate(ps.Workload(model, global_batch=1), ps.Plan(), cluster).step.compute

print(f"梯度缓冲区 {fmt_bytes(grad_bytes)}；一个 {model.seq_len} token 的微批次在 {cluster.device.name} 上前向+反向约 {fmt_time(compute)}。\n")
rows = [[n, fmt_bytes(comm.bus_factor("all-reduce", n) * grad_bytes)]
        + [fmt_time(t[i]) if t[i] is not None else "—" for t in times.values()] for i, n in enumerate(degrees)]
print(markdown_table(["DP 度 n", "每卡发送量"] + list(links), rows, align="rr" + "r" * len(links)))
svg = time_vs_degree(degrees, times, references={"一个微批次的计算": compute}, xlabel="DP 度 n（参与 all-reduce 的卡数）",  # markdown-exec: hide
                     title=f"{model.name} 梯度 all-reduce 时间：取决于链路，几乎不随 n 变", salt="dp-allreduce")  # markdown-exec: hide
slow = times["跨节点 25GbE"][-1] / times["跨节点 25GbE"][0]  # markdown-exec: hide
print(figure_html(svg, f"DP 度从 {degrees[0]} 到 {degrees[-1]}，同一条链路上的 all-reduce 只变长到 {slow:.1f} 倍；"  # markdown-exec: hide
                       f"换链路才是数量级的差别：跨节点 25GbE 是 NVLink3 的 "  # markdown-exec: hide
                       f"{times['跨节点 25GbE'][0] / times['节点内 NVLink3'][0]:.0f} 倍，"  # markdown-exec: hide
                       f"是一个微批次计算（虚线）的 {times['跨节点 25GbE'][0] / compute:.0f} 倍"))  # markdown-exec: hide
