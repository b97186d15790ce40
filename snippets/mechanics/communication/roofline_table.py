# Roofline thresholds per strategy on A100 and H100 links: above each threshold the strategy is compute-bound.
import parallelsel as ps
from parallelsel.core.placement import link_for
from parallelsel.core.roofline import conditions
from parallelsel.core.stacks import DEFAULT_STACK
from parallelsel.render.tables import fmt_rate, markdown_table

ranks, tp, per_node = 64, 8, 8          # DP/FSDP group size, TP degree, GPUs per node
stack = ps.STACKS[DEFAULT_STACK]        # bytes on the wire: fp32 gradient reduce, bf16 gathers and activations
setups = [("a100-80gb", ps.LINKS["nvlink3"], ""), ("a100-80gb", ps.LINKS["ib-hdr"], "一块网卡"),
          ("a100-80gb", ps.LINKS["eth-100g"], "一块网卡"), ("h100-sxm-80gb", ps.LINKS["nvlink4"], ""),
          ("h100-sxm-80gb", ps.LINKS["ib-ndr"], "一块网卡")]
# A 64-GPU group on 8-GPU nodes with one HCA per GPU: NCCL runs a ring per HCA, the node's HCAs add up (NVLink bounds them).
for device, inter in (("a100-80gb", "ib-hdr"), ("h100-sxm-80gb", "ib-ndr")):
    cluster = ps.Cluster(ps.DEVICES[device], nodes=ranks // per_node, gpus_per_node=per_node, inter=ps.LINKS[inter])
    setups.append((device, link_for(cluster, ranks), f"{ranks} 卡组跨 {cluster.nodes} 节点，每节点 {cluster.nics_per_node} 块 "
                                                     f"{ps.LINKS[inter].name.split()[1]} 网卡一起用"))
rows = []
for device, link, how in setups:
    c = conditions(ps.DEVICES[device], link, ranks=ranks, tp=tp, stack=stack)
    rows.append([c.device, f"{c.link}（{fmt_rate(link.bandwidth)}{'，' + how if how else ''}）", f"{c.intensity:,.0f}",
                 f"{c.dp_tokens:,.0f}", f"{c.fsdp_tokens:,.0f}", f"{c.tp_hidden:,.0f}", f"{c.pp_hidden_layers:,.0f}"])
print(f"DP/FSDP 组 {ranks} 卡，TP 度 {tp}；框架栈 {stack.name}：梯度归约 {stack.grad_reduce_dtype}，参数收集与激活 "
      f"{stack.param_gather_dtype}；带宽为每卡单向的标称值（线速）。\n")
print(markdown_table(["设备", "链路（每卡带宽）", "F/β（FLOPs/字节）", "DP：每卡每步 token ≥", "FSDP：每卡每微批次 token ≥",
                      f"TP={tp}：隐藏维度 h ≥", "PP：h × 每段层数 ≥"], rows, align="llrrrrr"))
