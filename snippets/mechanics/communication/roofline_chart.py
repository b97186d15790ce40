# Where each strategy's condition flips, side by side: DP and FSDP by tokens per GPU, TP by its degree, PP by layers per stage.
import parallelsel as ps
from parallelsel.core.placement import link_for
from parallelsel.core.roofline import (dp_comm_to_compute, dp_critical_tokens, fsdp_comm_to_compute, pp_comm_to_compute,
                                       tp_comm_to_compute)
from parallelsel.core.stacks import DEFAULT_STACK
from parallelsel.render.roofline_charts import ratio_panels
from parallelsel.render.style import figure_html  # markdown-exec: hide

a100, h100 = ps.DEVICES["a100-80gb"], ps.DEVICES["h100-sxm-80gb"]
stack = ps.STACKS[DEFAULT_STACK]
ranks, per_node = 64, 8
setups = {"A100 · NVLink3": (a100, "nvlink3", None), "A100 · IB HDR": (a100, "nvlink3", "ib-hdr"),
          "H100 · IB NDR": (h100, "nvlink4", "ib-ndr"), "A100 · 25GbE": (a100, "nvlink3", "eth-25g")}


def group_link(intra, inter, size):
    """The link a group of `size` consecutive GPUs is priced on (NCCL: one ring per HCA it has on a node)."""
    if inter is None:
        return ps.LINKS[intra]
    nodes = max(2, -(-size // per_node))
    return link_for(ps.Cluster(a100, nodes=nodes, gpus_per_node=per_node, intra=ps.LINKS[intra], inter=ps.LINKS[inter]), size)


tokens = [2**k for k in range(8, 16)]           # tokens per GPU (per step for DP, per micro-batch for FSDP)
dp = {n: [dp_comm_to_compute(t, d, group_link(i, x, ranks), ranks, stack=stack) for t in tokens]
      for n, (d, i, x) in setups.items()}
fsdp = {n: [fsdp_comm_to_compute(t, d, group_link(i, x, ranks), ranks, stack=stack) for t in tokens]
        for n, (d, i, x) in setups.items()}

big, small = ps.MODELS["llama2-70b"], ps.MODELS["llama2-7b"]
degrees = [2, 4, 8, 16, 32]
# A TP group up to a node's size stays on NVLink (the NVLink line); larger ones cross nodes (the network lines).
tp = {n: [(tp_comm_to_compute(big.hidden, big.layer_params, t, d, group_link(i, x, t)) if (t > per_node) == (x is not None)
           else None) for t in degrees] for n, (d, i, x) in setups.items()}
layers = [1, 2, 4, 8, 16, 32]                   # layers per stage: one p2p send crosses one port
pp = {n: [pp_comm_to_compute(small.hidden, k, d, ps.LINKS[x or i]) for k in layers] for n, (d, i, x) in setups.items()}

k = [f"{t / 1024:g}K" for t in tokens]
svg = ratio_panels([
    (f"DP（{ranks} 卡）：all-reduce ÷ 反向", tokens, dp, "每卡每步 token 数", k),
    (f"FSDP（{ranks} 卡）：gather + reduce-scatter ÷ 计算", tokens, fsdp, "每卡每个微批次的 token 数", k),
    (f"TP（{big.name}）：每层 all-reduce ÷ GEMM", degrees, tp, "TP 度", None),
    (f"PP（{small.name}）：段间 p2p ÷ 段内计算", layers, pp, "每段层数", None),
], salt="roofline-four")
ib = "A100 · IB HDR"
flip = dp_critical_tokens(a100, group_link("nvlink3", "ib-hdr", ranks), ranks, stack=stack)
print(figure_html(svg, f"A100 + IB HDR（{stack.name}，每节点 {per_node} 块网卡各跑一个环）：DP 要每卡每步 {flip:,.0f} 个 token 以上才受算力限制，"
                       f"跨节点的 TP{2 * per_node} 比值是 {tp[ib][degrees.index(2 * per_node)]:.1f}，"
                       f"PP 每段 1 层时只有 {pp[ib][0]:.2f}：越频繁、越藏不住的通信越要留在快链路上"))
